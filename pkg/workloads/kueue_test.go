package workloads_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/workloads"
)

// objects reads YAML documents as the API server would send them.
func objects(t *testing.T, docs string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(docs, "\n---\n") {
		u := &unstructured.Unstructured{}
		require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object), doc)
		out = append(out, u)
	}
	return out
}

// What the cluster runs in namespace cv, whose pods schedule through
// Kueue, and in free, whose do not. Each pod says what it is.
const accountingPods = `
# A Job's pod, its Workload admitted for 2 GPUs a pod: accounted for.
apiVersion: v1
kind: Pod
metadata: {name: train-a, namespace: cv, uid: pod-train-a, creationTimestamp: "2026-11-20T10:00:00Z",
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: train, uid: job-train, controller: true}]}
spec: {nodeName: gpu-1, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "2"}}}]}
status: {phase: Running}
---
# A second pod of the same Job, which Kueue admitted one pod of.
apiVersion: v1
kind: Pod
metadata: {name: train-b, namespace: cv, uid: pod-train-b, creationTimestamp: "2026-11-20T11:00:00Z",
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: train, uid: job-train, controller: true}]}
spec: {nodeName: gpu-2, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "2"}}}]}
status: {phase: Running}
---
# The spoof: a real CPU-only Job, queued and admitted, named as the
# owner of a pod holding 4 GPUs.
apiVersion: v1
kind: Pod
metadata: {name: spoof, namespace: cv, uid: pod-spoof,
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: cpu-only, uid: job-cpu-only, controller: true}]}
spec: {nodeName: gpu-3, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "4"}}}]}
status: {phase: Running}
---
# No owner, never queued.
apiVersion: v1
kind: Pod
metadata: {name: bare, namespace: cv, uid: pod-bare}
spec: {nodeName: gpu-4, containers: [{name: c, resources: {requests: {nvidia.com/gpu: 1}, limits: {nvidia.com/gpu: 1}}}]}
status: {phase: Pending}
---
# Its own Workload (Kueue's pod integration), not admitted: someone
# else took the scheduling gate off.
apiVersion: v1
kind: Pod
metadata: {name: ungated, namespace: cv, uid: pod-ungated}
spec: {nodeName: gpu-5, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Running}
---
# An owner that does not exist.
apiVersion: v1
kind: Pod
metadata: {name: ghost, namespace: cv, uid: pod-ghost,
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: ghost, uid: job-ghost, controller: true}]}
spec: {nodeName: gpu-6, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Running}
---
# The Job's name with another uid.
apiVersion: v1
kind: Pod
metadata: {name: impostor, namespace: cv, uid: pod-impostor,
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: train, uid: not-job-train, controller: true}]}
spec: {nodeName: gpu-6, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Running}
---
# A pod group of two, its Workload owned by both; a third pod with the
# group's label is not of it.
apiVersion: v1
kind: Pod
metadata: {name: group-0, namespace: cv, uid: pod-group-0, labels: {kueue.x-k8s.io/pod-group-name: group}}
spec: {nodeName: gpu-7, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: group-1, namespace: cv, uid: pod-group-1, labels: {kueue.x-k8s.io/pod-group-name: group}}
spec: {nodeName: gpu-7, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: group-2, namespace: cv, uid: pod-group-2, labels: {kueue.x-k8s.io/pod-group-name: group}}
spec: {nodeName: gpu-7, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Running}
---
# A JobSet's pod (Pod → Job → JobSet), and a RayJob's (Pod → RayCluster
# → RayJob, which the set does not list): their Workloads are the
# JobSet's and the RayJob's.
apiVersion: v1
kind: Pod
metadata: {name: js-0, namespace: cv, uid: pod-js-0,
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: js-workers, uid: job-js-workers, controller: true}]}
spec: {nodeName: gpu-8, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "8"}}}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: ray-head, namespace: cv, uid: pod-ray-head,
  ownerReferences: [{apiVersion: ray.io/v1, kind: RayCluster, name: rc, uid: rc-uid, controller: true}]}
spec: {nodeName: gpu-9, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Running}
---
# DRA: a claim of a profile that schedules by node, and one of a queued
# profile that Kueue never saw.
apiVersion: v1
kind: Pod
metadata: {name: claim-by-node, namespace: cv, uid: pod-claim-by-node, annotations: {opendatahub.io/hardware-profile-name: by-node}}
spec: {nodeName: gpu-10, containers: [{name: c}], resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: claim-queued, namespace: cv, uid: pod-claim-queued, labels: {accelc.io/profile: queued}}
spec: {nodeName: gpu-10, containers: [{name: c}], resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]}
status: {phase: Running}
---
# Not Kueue's to account for: a namespace that does not queue, no
# accelerator, finished, not yet bound, a resource no accelerator.
apiVersion: v1
kind: Pod
metadata: {name: elsewhere, namespace: free, uid: pod-elsewhere}
spec: {nodeName: gpu-11, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: cpu, namespace: cv, uid: pod-cpu}
spec: {nodeName: cpu-1, containers: [{name: c, resources: {limits: {cpu: "4"}}}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: done, namespace: cv, uid: pod-done}
spec: {nodeName: gpu-12, containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Succeeded}
---
apiVersion: v1
kind: Pod
metadata: {name: gated, namespace: cv, uid: pod-gated}
spec: {schedulingGates: [{name: kueue.x-k8s.io/admission}], containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}
status: {phase: Pending}
---
apiVersion: v1
kind: Pod
metadata: {name: hugepages, namespace: cv, uid: pod-hugepages}
spec: {nodeName: cpu-1, containers: [{name: c, resources: {limits: {hugepages-2Mi: "1Gi"}}}]}
status: {phase: Running}
---
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: cv, uid: job-train}
---
apiVersion: batch/v1
kind: Job
metadata: {name: cpu-only, namespace: cv, uid: job-cpu-only}
---
apiVersion: batch/v1
kind: Job
metadata: {name: js-workers, namespace: cv, uid: job-js-workers,
  ownerReferences: [{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: js, uid: jobset-js, controller: true}]}
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js, namespace: cv, uid: jobset-js}
---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: rc, namespace: cv, uid: rc-uid,
  ownerReferences: [{apiVersion: ray.io/v1, kind: RayJob, name: rj, uid: rayjob-rj, controller: true}]}`

// Kueue's Workloads for them, as the API server sends them.
const accountingWorkloads = `
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: job-train-1a2b3, namespace: cv,
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: train, uid: job-train, controller: true}]}
spec:
  queueName: a100
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {nvidia.com/gpu: "2", cpu: 500m}}}]}}}]
status:
  admission: {clusterQueue: vision.a100, podSetAssignments: [{name: main, count: 1}]}
  conditions: [{type: QuotaReserved, status: "True"}, {type: Admitted, status: "True"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: job-cpu-only-4c5d6, namespace: cv,
  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: cpu-only, uid: job-cpu-only, controller: true}]}
spec:
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}}]
status:
  conditions: [{type: Admitted, status: "True"}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: pod-ungated-7e8f9, namespace: cv,
  ownerReferences: [{apiVersion: v1, kind: Pod, name: ungated, uid: pod-ungated, controller: true}]}
spec:
  podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}}}]
status:
  conditions: [{type: QuotaReserved, status: "False", reason: Pending}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: group, namespace: cv,
  ownerReferences: [{apiVersion: v1, kind: Pod, name: group-0, uid: pod-group-0}, {apiVersion: v1, kind: Pod, name: group-1, uid: pod-group-1}]}
spec:
  podSets: [{name: a, count: 2, template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}}}]
status:
  admission: {clusterQueue: vision.a100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: jobset-js-0a1b2, namespace: cv,
  ownerReferences: [{apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: js, uid: jobset-js, controller: true}]}
spec:
  podSets:
  - {name: launcher, count: 1, template: {spec: {containers: [{name: c}]}}}
  - {name: workers, count: 4, template: {spec: {initContainers: [{name: i, resources: {limits: {nvidia.com/gpu: "8"}}}], containers: [{name: c, resources: {limits: {nvidia.com/gpu: "4"}}}]}}}
status:
  admission: {clusterQueue: vision.a100}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: rayjob-rj-3c4d5, namespace: cv,
  ownerReferences: [{apiVersion: ray.io/v1, kind: RayJob, name: rj, uid: rayjob-rj, controller: true}]}
spec:
  podSets: [{name: head, count: 1, template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: "1"}}}]}}}]
status:
  admission: {clusterQueue: vision.a100}`

func accountingOptions() workloads.AccountOptions {
	return workloads.AccountOptions{
		Queued: func(ns, profile string, claimsOnly bool) bool {
			return ns == "cv" && !(claimsOnly && profile == "by-node")
		},
		Accelerator:  func(r string) bool { return strings.HasPrefix(r, "nvidia.com/") },
		ProfileLabel: "accelc.io/profile",
	}
}

func TestUnaccounted(t *testing.T) {
	set, err := workloads.SetOf(objects(t, accountingPods), "kueue.x-k8s.io/v1beta2", objects(t, accountingWorkloads), "batch/Job", "jobset.x-k8s.io/JobSet", "ray.io/RayCluster")
	require.NoError(t, err)
	got := map[string]workloads.Unaccounted{}
	var names []string
	for _, u := range set.Unaccounted(accountingOptions()) {
		names = append(names, u.Namespace+"/"+u.Name+": "+u.Reason)
		got[u.Name] = u
	}
	assert.Equal(t, []string{
		"cv/bare: NoWorkload",
		"cv/claim-queued: NoWorkload",
		"cv/ghost: OwnerMissing",
		"cv/group-2: NoWorkload",
		"cv/impostor: OwnerMissing",
		"cv/spoof: FewerDevices",
		"cv/train-b: MorePods",
		"cv/ungated: NotAdmitted",
	}, names)

	spoof := got["spoof"]
	assert.Equal(t, "gpu-3", spoof.Node)
	assert.Equal(t, map[string]int64{"nvidia.com/gpu": 4}, spoof.Devices)
	assert.Equal(t, &workloads.Ref{APIVersion: "batch/v1", Kind: "Job", Namespace: "cv", Name: "cpu-only"}, spoof.Owner)
	assert.Equal(t, "cv/job-cpu-only-4c5d6", spoof.Workload)
	assert.Equal(t, "Workload cv/job-cpu-only-4c5d6, admitted for the pod or its owner Job cv/cpu-only, asks for at most 0 nvidia.com/gpu a pod; the pod holds 4 nvidia.com/gpu", spoof.Message)

	assert.Equal(t, "no Workload of Kueue's is for the pod: Kueue counts none of its devices", got["bare"].Message)
	assert.Nil(t, got["bare"].Owner)
	assert.Equal(t, "its owner Job cv/ghost does not exist: no Workload of Kueue's is for it, and Kueue counts none of its devices", got["ghost"].Message)
	assert.Equal(t, "its owner Job cv/train is not that object: the reference's uid not-job-train is not the Job's (job-train): no Workload of Kueue's is for it, and Kueue counts none of its devices", got["impostor"].Message)
	assert.Equal(t, "Workload cv/pod-ungated-7e8f9 is for the pod, but Kueue has not admitted it: the pod runs outside its quota", got["ungated"].Message)
	assert.Equal(t, "Workload cv/job-train-1a2b3 admits 1 pod; 2 hold devices for it (this one is among the newest)", got["train-b"].Message)
	assert.Equal(t, []string{"gpu=template/one-gpu"}, got["claim-queued"].Claims)
	assert.Equal(t, "claim gpu=template/one-gpu", got["claim-queued"].DevicesText())
}

// A set with no Kueue Workloads read (Kueue not served, or a snapshot)
// says nothing of them.
func TestUnaccountedWithoutKueue(t *testing.T) {
	set, err := workloads.SetOf(objects(t, accountingPods), "", nil)
	require.NoError(t, err)
	assert.Nil(t, set.Unaccounted(accountingOptions()))
}

// An owner of a kind the set did not list (its CRD absent, or the user
// may not list it) may exist: the pod is not called an impostor.
func TestUnaccountedOwnerNotListed(t *testing.T) {
	set, err := workloads.SetOf(objects(t, accountingPods), "kueue.x-k8s.io/v1beta2", objects(t, accountingWorkloads))
	require.NoError(t, err)
	for _, u := range set.Unaccounted(accountingOptions()) {
		assert.NotEqual(t, workloads.OwnerMissing, u.Reason, u.Name)
	}
}

func TestRequests(t *testing.T) {
	var spec map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(`{
		initContainers: [{name: i, resources: {limits: {nvidia.com/gpu: 3}}}],
		containers: [
			{name: a, resources: {requests: {nvidia.com/gpu: "1", cpu: 250m}, limits: {nvidia.com/gpu: "1"}}},
			{name: b, resources: {requests: {nvidia.com/gpu: "1", memory: 1Gi}}}]}`), &spec))
	assert.Equal(t, map[string]int64{"nvidia.com/gpu": 3, "cpu": 1, "memory": 1 << 30}, workloads.Requests(spec))
}
