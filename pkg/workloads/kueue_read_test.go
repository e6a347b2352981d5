package workloads

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestReadKueueList: a WorkloadList as the API server streams it is read
// as ReadLive reads it, keeping of the status what says whether Kueue
// admitted each Workload (a pod's status would be cut to its phase), and
// the pod sets' per-pod requests.
func TestReadKueueList(t *testing.T) {
	const list = `{"kind": "WorkloadList", "apiVersion": "kueue.x-k8s.io/v1beta2", "metadata": {"continue": ""}, "items": [
		{"metadata": {"name": "b", "namespace": "cv", "uid": "w2", "managedFields": [{}],
			"ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "pod-p", "controller": true, "blockOwnerDeletion": true}]},
		 "spec": {"podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}]},
		 "status": {"conditions": [{"type": "Admitted", "status": "True"}], "resourceRequests": [{"name": "main"}]}},
		{"metadata": {"name": "a", "namespace": "cv", "uid": "w1",
			"ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": "job-j", "controller": true}]},
		 "spec": {"podSets": [{"name": "workers", "count": 4, "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": 2, "cpu": "1500m"}}}]}}}]},
		 "status": {"admission": {"clusterQueue": "vision.a100", "podSetAssignments": [{"name": "workers", "count": 3}]}}},
		{"metadata": {"name": "c", "namespace": "asr", "uid": "w3"}, "spec": {"podSets": [{"name": "main", "count": 2, "template": {"spec": {"containers": []}}}]}}]}`
	r := newReader(strings.NewReader(list))
	var objs []*unstructured.Unstructured
	require.NoError(t, r.list("WorkloadList", fieldsOf(kueueKind), func(string) {}, func(obj map[string]any) {
		objs = append(objs, &unstructured.Unstructured{Object: obj})
	}))
	got, err := kueueWorkloads(objs)
	require.NoError(t, err)
	assert.Equal(t, []KueueWorkload{
		{Namespace: "asr", Name: "c", PodSets: []PodSet{{Name: "main", Count: 2}}},
		{Namespace: "cv", Name: "a", Admitted: true,
			Owners:  []OwnerRef{{Ref: Ref{APIVersion: "batch/v1", Kind: "Job", Namespace: "cv", Name: "j"}, UID: "job-j"}},
			PodSets: []PodSet{{Name: "workers", Count: 3, PerPod: map[string]int64{"nvidia.com/gpu": 2, "cpu": 2}}}},
		{Namespace: "cv", Name: "b", Admitted: true,
			Owners:  []OwnerRef{{Ref: Ref{APIVersion: "v1", Kind: "Pod", Namespace: "cv", Name: "p"}, UID: "pod-p"}},
			PodSets: []PodSet{{Name: "main", Count: 1, PerPod: map[string]int64{"nvidia.com/gpu": 1}}}},
	}, got)
	_, kept := objs[0].Object["status"].(map[string]any)["resourceRequests"]
	assert.False(t, kept, "only admission and conditions are kept of a Workload's status")
	_, kept = objs[0].Object["metadata"].(map[string]any)["managedFields"]
	assert.False(t, kept)
}
