package workloads_test

import (
	"fmt"

	"github.com/accelc/accelc/pkg/workloads"
)

// A snapshot's pods, each with the workload it belongs to.
func Example() {
	set, err := workloads.Decode([]byte(`
kind: List
items:
- {apiVersion: apps/v1, kind: Deployment, metadata: {name: train, namespace: team-a, uid: d1}}
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata:
    name: train-5d8f9
    namespace: team-a
    uid: rs1
    ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: train, uid: d1, controller: true}]
- apiVersion: v1
  kind: Pod
  metadata:
    name: train-5d8f9-x2v7q
    namespace: team-a
    ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: train-5d8f9, uid: rs1, controller: true}]
  spec:
    containers:
    - name: app
      image: registry.example/train:1
      env: [{name: HF_TOKEN, value: hf_s3cret}]
- {apiVersion: v1, kind: Node, metadata: {name: h200-01}}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, pod := range set.Pods() {
		fmt.Println(workloads.RefOf(pod), "belongs to", set.Workload(pod))
		fmt.Println(pod.Object["spec"])
	}
	// Output:
	// Pod team-a/train-5d8f9-x2v7q belongs to Deployment team-a/train
	// map[containers:[map[env:[map[name:HF_TOKEN]] image:registry.example/train:1 name:app]]]
}
