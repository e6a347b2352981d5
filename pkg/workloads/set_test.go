package workloads_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/workloads"
)

// ownersYAML holds the chains controllers make, an owner of a kind the set
// does not list, an owner that is gone, references without uids, and a
// loop no controller would make.
const ownersYAML = `
kind: List
items:
- {apiVersion: apps/v1, kind: Deployment, metadata: {name: train, namespace: a, uid: d1}}
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata:
    name: train-5d8f9
    namespace: a
    uid: rs1
    ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: train, uid: d1, controller: true}]
- apiVersion: v1
  kind: Pod
  metadata:
    name: train-5d8f9-x
    namespace: a
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: train-5d8f9, uid: rs1, controller: true}]
- {apiVersion: batch/v1, kind: CronJob, metadata: {name: nightly, namespace: a, uid: cj1}}
- apiVersion: batch/v1
  kind: Job
  metadata:
    name: nightly-29000000
    namespace: a
    ownerReferences: [{apiVersion: batch/v1, kind: CronJob, name: nightly, controller: true}]
- apiVersion: v1
  kind: Pod
  metadata:
    name: nightly-29000000-k2x
    namespace: a
    ownerReferences: [{apiVersion: batch/v1, kind: Job, name: nightly-29000000, controller: true}]
- apiVersion: v1
  kind: Pod
  metadata:
    name: step-1
    namespace: a
    ownerReferences:
    - {apiVersion: v1, kind: ConfigMap, name: scratch}
    - {apiVersion: argoproj.io/v1alpha1, kind: Workflow, name: etl, uid: wf1, controller: true}
- apiVersion: v1
  kind: Pod
  metadata:
    name: orphan-x
    namespace: a
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: deleted, uid: rs9, controller: true}]
- apiVersion: v1
  kind: Pod
  metadata:
    name: same-name-elsewhere
    namespace: b
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: train-5d8f9, controller: true}]
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata:
    name: loop-a
    namespace: a
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: loop-b}]
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata:
    name: loop-b
    namespace: a
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: loop-a}]
- {apiVersion: v1, kind: Pod, metadata: {name: bare, namespace: a}}
`

func TestWorkload(t *testing.T) {
	set, err := workloads.Decode([]byte(ownersYAML))
	require.NoError(t, err)
	got := map[string]workloads.Ref{}
	for _, u := range set.Objects {
		got[workloads.RefOf(u).String()] = set.Workload(u)
	}
	deployment := workloads.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "a", Name: "train"}
	cronJob := workloads.Ref{APIVersion: "batch/v1", Kind: "CronJob", Namespace: "a", Name: "nightly"}
	assert.Equal(t, deployment, got["Pod a/train-5d8f9-x"], "Pod → ReplicaSet → Deployment")
	assert.Equal(t, deployment, got["ReplicaSet a/train-5d8f9"])
	assert.Equal(t, deployment, got["Deployment a/train"], "an object with no owner is its own workload")
	assert.Equal(t, cronJob, got["Pod a/nightly-29000000-k2x"], "Pod → Job → CronJob, by name where references have no uid")
	assert.Equal(t, workloads.Ref{APIVersion: "argoproj.io/v1alpha1", Kind: "Workflow", Namespace: "a", Name: "etl"}, got["Pod a/step-1"],
		"the controller's reference, of a kind the set does not list")
	assert.Equal(t, workloads.Ref{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "a", Name: "deleted"}, got["Pod a/orphan-x"],
		"an owner the set does not hold ends the chain")
	assert.Equal(t, workloads.Ref{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "b", Name: "train-5d8f9"}, got["Pod b/same-name-elsewhere"],
		"owners are in the object's namespace")
	assert.Equal(t, "ReplicaSet", got["ReplicaSet a/loop-a"].Kind, "a loop ends")
	assert.Equal(t, workloads.Ref{APIVersion: "v1", Kind: "Pod", Namespace: "a", Name: "bare"}, got["Pod a/bare"])

	var none *workloads.Set
	pod := set.Pods()[4]
	require.Equal(t, "train-5d8f9-x", pod.GetName())
	assert.Empty(t, none.Pods())
	assert.Equal(t, "ReplicaSet", none.Workload(pod).Kind, "a nil set holds no owners")
}

func TestOrder(t *testing.T) {
	set, err := workloads.Decode([]byte(ownersYAML))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"Pod a/bare", "Pod a/nightly-29000000-k2x", "Pod a/orphan-x", "Pod a/step-1", "Pod a/train-5d8f9-x", "Pod b/same-name-elsewhere",
		"Deployment a/train",
		"ReplicaSet a/loop-a", "ReplicaSet a/loop-b", "ReplicaSet a/train-5d8f9",
		"Job a/nightly-29000000",
		"CronJob a/nightly",
	}, names(set), "kinds in the order of Kinds, then namespace and name")
	var kinds []string
	for _, k := range workloads.Kinds() {
		kinds = append(kinds, k.Kind)
	}
	assert.Equal(t, []string{"Pod", "Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "Job", "CronJob",
		"Notebook", "PyTorchJob", "RayCluster", "JobSet", "RayJob", "LeaderWorkerSet", "MPIJob", "AppWrapper", "TrainJob", "InferenceService",
		"ResourceClaim", "ResourceClaimTemplate"}, kinds)
}
