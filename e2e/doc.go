// Package e2e holds accelc's end-to-end tests: every example cluster
// rendered by the real accelc binary and put through the components a
// cluster runs, on 127.0.0.1 — etcd, kube-apiserver, kube-scheduler
// (internal/controlplane) and Gatekeeper's controller manager as the
// validating and mutating admission webhook, with kubectl at the API
// server's version.
//
// The tests carry the build tag e2e, so `go test ./...` does not run them;
// `make e2e` builds what they need (hack/control-plane.sh,
// hack/e2e-tools.sh) and runs them:
//
//	go test -tags e2e -count=1 -v -timeout 40m ./e2e
//
// The steps, each a subtest that says what it checked:
//
//  1. crds: the CRDs of every API group the rendered trees use are installed
//     for real (server-side apply) and Established.
//  2. dry-run/<example>: the whole rendered tree of every example is
//     accepted by `kubectl apply --server-side --dry-run=server`.
//  3. live/<example>: the example's nodes are created as a kubelet and GPU
//     Feature Discovery would leave them; `accelc inventory snapshot --live`
//     and `accelc render --live` against them give what the snapshot file
//     gives, for the admin and for a user that may not list pods.
//  4. admission/<example>: the tree is applied as Flux would; each node's
//     features are published as nfd-worker would (NodeFeature: its name and
//     its GPU's PCI vendor, device and class) and Node Feature Discovery's
//     own nfd-master ([controlplane.ControlPlane.StartNFDMaster], with
//     -enable-taints) labels and taints the nodes from the rendered
//     NodeFeatureRules, giving each the type accelc gives it; once
//     Gatekeeper has taken every template,
//     constraint and mutator, a pod naming only its profile is mutated,
//     admitted and bound by kube-scheduler to a node of the profile's type;
//     the admission fixtures are admitted or denied with their messages; with
//     enforcementAction dryrun the hostile pods are admitted and show up in
//     Gatekeeper's audit.
//  5. entitlement/<example>: a team's pod never binds to a node of a type the
//     team is not entitled to, even when only such nodes have room.
//
// TestFlux, on a control plane of its own with Gatekeeper, delivers a tree
// through Flux's own source-controller and kustomize-controller
// ([controlplane.ControlPlane.StartFlux]): accelc push to docker-registry on
// 127.0.0.1, only flux/ applied by hand; the tree rolls out with the
// constraints after its health check, a new version rolls out and prunes, a
// broken one is refused with the cluster left on the last good revision,
// and accelc diff against the applied artifact is clean.
//
// TestKueue, on a control plane of its own, runs Kueue's controller manager
// ([controlplane.ControlPlane.StartKueue]) with kube-scheduler: pods naming a
// LocalQueue are gated, admitted to a ClusterQueue's flavors in order and
// bound to the flavor's nodes, and a pod past the quota stays gated until
// another finishes. Its queues are written in the test, not rendered by
// accelc.
//
// TestKueueRendered applies what accelc renders for hetero-prod and
// gpu-pools (team Namespaces, WorkloadPriorityClasses, ResourceFlavors,
// Cohorts, ClusterQueues, LocalQueues) to a control plane with
// kube-scheduler and Kueue, on one node per flavor, and creates pods as
// Open Data Hub does from a Queue HardwareProfile, with the tolerations
// accelc's mutation adds: a profile's pods fill its first flavor, then the
// next; past the team's quota a pod stays gated until another finishes; a
// Cohort under a parent borrows up to its borrowingLimit and no further; a
// MIG-slice profile's pods are admitted against the slice's quota. Pod
// sizes come from the rendered quotas and profiles.
//
// TestStory runs every part in one cluster: kube-controller-manager
// ([controlplane.WithControllerManager]) and KWOK's kubelets
// ([controlplane.ControlPlane.StartKWOK]) beside the API server, the
// scheduler, Gatekeeper, Kueue, nfd-master and Flux. An admin's copy of
// hetero-prod goes through CI (accelc vet, render, test, push signed) commit
// by commit, dryrun to warn to deny, and Flux applies each artifact: running
// pods stay untouched, the audit lists them, kubectl shows warn's warnings,
// ODH's workloads (a Notebook and its StatefulSet, a KServe Deployment, a
// gang Job, a DRA claim) are queued and run on their types, hostile
// workloads are refused, an unsigned artifact and a commit that fails vet
// never reach the cluster, and a node of a new type joins and gets a
// profile. TestAttacks starts the same cluster at deny and tries, as a
// team's member, the ways past accelc that trusted another layer: a pod
// owned by the user's own Job so that Kueue looks away, Kueue's gate taken
// off by hand, an empty or unconfined DRA claim, CDI annotations,
// capabilities, host namespaces and the runtime socket in a generic GPU
// namespace, an excluded namespace nobody has (accelc vet --live), vendors'
// resource names, a named claim on a queued profile: each is refused with
// accelc's message (or by Pod Security admission first, which it says), and
// nothing of them runs. TestCluster is `make cluster`: the same cluster
// kept for a person. BenchmarkCluster (`make bench-cluster`) runs a storm
// of GPU pods and Jobs on 1,015 KWOK nodes with and without accelc's tree.
package e2e
