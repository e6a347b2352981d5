package audit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/audit"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/policytest/engine"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/workloads"
)

// TestMain puts this test binary on PATH as the policy engine.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		policytest.EngineCommand: func() { os.Exit(engine.Command()) },
	})
}

// lab is a cluster in dryrun with team ml moved to deny: an L4 node and
// an A100 node; ml may use L4s (quota 2, through Kueue), web too.
const lab = `package lab

cluster: name: "lab"
profiles: l4: {displayName: "L4", acceleratorTypes: ["nvidia-l4-24gb"]}
teams: {
	ml: {namespaces: ["ml"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 2, enforcement: "deny"}
	web: {namespaces: ["web"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 8}
}
`

const nodes = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: l4-1
    labels: {nvidia.com/gpu.product: NVIDIA-L4, nvidia.com/gpu.count: "8", nvidia.com/gpu.memory: "23034"}
  status:
    capacity: {nvidia.com/gpu: "8"}
    conditions: [{type: Ready, status: "True"}]
- apiVersion: v1
  kind: Node
  metadata:
    name: a100-1
    labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, nvidia.com/gpu.count: "8", nvidia.com/gpu.memory: "81920"}
  status:
    capacity: {nvidia.com/gpu: "8"}
    conditions: [{type: Ready, status: "True"}]
`

// running is what the cluster runs before accelc: the same plain GPU pod
// in ml (deny) and web (dryrun); a Deployment of L4 pods in ml, written
// with ODH's annotation before accelc; an L4 pod on the A100 node; three
// one-GPU L4 pods against ml's quota of two.
const running = `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: plain, namespace: ml}, spec: {nodeName: l4-1, containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: plain, namespace: web}, spec: {nodeName: l4-1, containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]}, status: {phase: Running}}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: serve, namespace: ml, creationTimestamp: "2026-11-01T00:00:00Z"}
  spec:
    selector: {matchLabels: {app: serve}}
    template:
      metadata: {labels: {app: serve}, annotations: {opendatahub.io/hardware-profile-name: l4}}
      spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]}
- apiVersion: apps/v1
  kind: ReplicaSet
  metadata: {name: serve-1, namespace: ml, creationTimestamp: "2026-11-01T00:00:00Z", ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: serve, uid: u1, controller: true}]}
  spec:
    selector: {matchLabels: {app: serve}}
    template:
      metadata: {labels: {app: serve}, annotations: {opendatahub.io/hardware-profile-name: l4}}
      spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]}
- {apiVersion: v1, kind: Pod, metadata: {name: serve-1-a, namespace: ml, creationTimestamp: "2026-11-01T00:00:00Z", labels: {app: serve}, annotations: {opendatahub.io/hardware-profile-name: l4}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: serve-1, uid: u2, controller: true}]}, spec: {nodeName: l4-1, containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: serve-1-b, namespace: ml, creationTimestamp: "2026-11-01T00:00:01Z", labels: {app: serve}, annotations: {opendatahub.io/hardware-profile-name: l4}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: serve-1, uid: u2, controller: true}]}, spec: {nodeName: l4-1, containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: misplaced, namespace: ml, creationTimestamp: "2026-11-02T00:00:00Z", annotations: {opendatahub.io/hardware-profile-name: l4}}, spec: {nodeName: a100-1, containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]}, status: {phase: Running}}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: burn, namespace: web}
  spec:
    selector: {matchLabels: {app: burn}}
    template:
      metadata: {labels: {app: burn}}
      spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]}
- {apiVersion: v1, kind: Pod, metadata: {name: done, namespace: web, annotations: {opendatahub.io/hardware-profile-name: l4}}, spec: {nodeName: l4-1, containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]}, status: {phase: Succeeded}}
`

func run(t *testing.T) *audit.Report {
	t.Helper()
	return runWith(t, nil)
}

// runWith audits running, changed by edit first.
func runWith(t *testing.T, edit func(*workloads.Set)) *audit.Report {
	t.Helper()
	return runLab(t, lab, edit)
}

// runLab audits running on the cluster src declares.
func runLab(t *testing.T, src string, edit func(*workloads.Set)) *audit.Report {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lab.cue"), []byte(src), 0o644))
	m, err := compile.Load(dir)
	require.NoError(t, err)
	snap, err := inventory.DecodeSnapshot([]byte(nodes))
	require.NoError(t, err)
	inv := snap.Classify(m.Catalog, inventory.Options{TypeLabel: m.Cluster.TypeLabel()})
	tree, err := render.Cluster(m, inv, render.Provenance{})
	require.NoError(t, err)
	set, err := workloads.Decode([]byte(running))
	require.NoError(t, err)
	if edit != nil {
		edit(set)
	}
	r, err := audit.Run(t.Context(), audit.Input{Model: m, Inventory: inv, Tree: tree, Workloads: set, Source: "running.yaml"})
	require.NoError(t, err)
	return r
}

// finding is the workload's finding, or fails.
func finding(t *testing.T, r *audit.Report, ns, kind, name string) audit.Finding {
	t.Helper()
	for _, team := range r.Teams {
		for _, n := range team.Namespaces {
			for _, f := range n.Workloads {
				if n.Name == ns && f.Kind == kind && f.Name == name {
					return f
				}
			}
		}
	}
	out, _ := yaml.Marshal(r)
	t.Fatalf("no finding for %s %s/%s in\n%s", kind, ns, name, out)
	return audit.Finding{}
}

// TestAudit: each workload gets what its team's stage does with it.
func TestAudit(t *testing.T) {
	r := run(t)

	// The same pod: refused where its team denies, only reported where
	// it is in dryrun.
	ml, web := finding(t, r, "ml", "Pod", "plain"), finding(t, r, "web", "Pod", "plain")
	assert.Equal(t, "deny", ml.Action)
	assert.Equal(t, "dryrun", web.Action)
	require.Len(t, ml.Violations, 1)
	require.Len(t, web.Violations, 1)
	assert.Contains(t, ml.Violations[0], "names no hardware profile")
	assert.Contains(t, web.Violations[0], "names no hardware profile")

	// A workload, not only a pod, is judged at its team's stage: the
	// same GPU Deployment without a profile is only reported in web.
	burn := finding(t, r, "web", "Deployment", "burn")
	assert.Equal(t, "dryrun", burn.Action)
	assert.True(t, burn.Audited)

	// A Deployment's replicas, its ReplicaSet and itself are one
	// workload. Written before accelc, it lacks what accelc's
	// mutations add: Gatekeeper's audit lists it until its pods are made
	// again, and they would then be queued — no violation.
	serve := finding(t, r, "ml", "Deployment", "serve")
	assert.Equal(t, 2, serve.Pods)
	assert.Empty(t, serve.Action, "made again, its pods are mutated and admitted")
	assert.True(t, serve.Audited)
	assert.NotEmpty(t, serve.AuditOnly)
	assert.Contains(t, serve.Changes, "would be queued in ml.l4")

	// An L4 pod running on the A100 node would move.
	misplaced := finding(t, r, "ml", "Pod", "misplaced")
	assert.Contains(t, misplaced.Changes, "would move off its node's type (nvidia-a100-80gb): it may run on nvidia-l4-24gb")
	// ml's quota of two L4s: the Deployment's two pods, older, hold it.
	assert.Contains(t, misplaced.Waits, "quota of nvidia-l4-24gb is 2, and 2 are held")
	assert.Empty(t, serve.Waits)

	// A finished pod holds nothing and is not made again; its profile
	// would have confined it: nothing to say.
	for _, team := range r.Teams {
		for _, ns := range team.Namespaces {
			for _, f := range ns.Workloads {
				assert.False(t, ns.Name == "web" && f.Name == "done", "a finished pod with nothing wrong is listed")
			}
		}
	}

	// ml's plain pod runs a GPU and could not be made again: stranded.
	assert.Equal(t, audit.Totals{Workloads: 6, Pods: 6, Audited: 5, Denied: 1, Reported: 2, Changed: 2, Waiting: 1, Stranded: 1, StrandedDevices: 1}, r.Totals)
	assert.True(t, r.Failed("deny"))
	assert.True(t, r.Failed("dryrun"))
	assert.False(t, r.Failed(""))

	// The workloads with findings, team by team, ml (deny) first.
	require.Len(t, r.Teams, 2)
	assert.Equal(t, "ml", r.Teams[0].Name)
	assert.Equal(t, "deny", r.Teams[0].Stage)
	assert.Equal(t, "dryrun", r.Teams[1].Stage)
}

// TestAuditText is the report as people read it.
func TestAuditText(t *testing.T) {
	var b strings.Builder
	require.NoError(t, run(t).WriteText(&b))
	testutil.Golden(t, filepath.Join("testdata", "lab.txt"), []byte(b.String()))
}

// TestAuditKueue: read live where Kueue is served, the pods holding GPUs
// in ml's and web's namespaces (both teams queue through Kueue) that no
// admitted Workload accounts for are listed, and fail the audit at every
// stage. The Deployment's pods are accounted for by a Workload for their
// ReplicaSet (the last owner the pods name: the set lacks its uid).
func TestAuditKueue(t *testing.T) {
	r := runWith(t, func(set *workloads.Set) {
		set.Kueue = "kueue.x-k8s.io/v1beta2"
		set.KueueWorkloads = []workloads.KueueWorkload{{
			Namespace: "ml", Name: "replicaset-serve-1-1a2b3", Admitted: true,
			Owners:  []workloads.OwnerRef{{Ref: workloads.Ref{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "ml", Name: "serve-1"}, UID: "u2"}},
			PodSets: []workloads.PodSet{{Name: "main", Count: 2, PerPod: map[string]int64{"nvidia.com/gpu": 1}}},
		}}
	})
	var got []string
	for _, u := range r.Unaccounted {
		got = append(got, u.Namespace+"/"+u.Name+" "+u.Reason+" "+u.DevicesText())
	}
	assert.Equal(t, []string{
		"ml/misplaced NoWorkload 1 nvidia.com/gpu",
		"ml/plain NoWorkload 1 nvidia.com/gpu",
		"web/plain NoWorkload 1 nvidia.com/gpu",
	}, got)
	assert.Equal(t, 3, r.Totals.Unaccounted)
	assert.True(t, r.Failed("deny"), "a pod Kueue does not count fails the audit at deny")
	assert.False(t, r.Failed(""))

	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	testutil.Golden(t, filepath.Join("testdata", "lab-kueue.txt"), []byte(b.String()))

	// Read from a snapshot, the Workloads are not known: nothing is said
	// of them.
	assert.Empty(t, run(t).Unaccounted)
	assert.Empty(t, run(t).Kueue)
}

// TestAuditRetiredProfile: a commit that retires the profile ml's
// workloads run on says which it strands and how many accelerators they
// hold; each denial names the replacement.
func TestAuditRetiredProfile(t *testing.T) {
	retired := strings.Replace(lab, `profiles: l4: {displayName: "L4", acceleratorTypes: ["nvidia-l4-24gb"]}`,
		`profiles: l4: {displayName: "L4", acceleratorTypes: ["nvidia-l4-24gb"], retired: replacement: "l4-next"}
profiles: "l4-next": {displayName: "L4", acceleratorTypes: ["nvidia-l4-24gb"]}`, 1)
	require.NotEqual(t, lab, retired)
	r := runLab(t, retired, nil)
	serve := finding(t, r, "ml", "Deployment", "serve")
	assert.Equal(t, "deny", serve.Action)
	assert.Equal(t, 2, serve.Devices)
	assert.Contains(t, strings.Join(serve.Violations, "\n"), `hardware profile "l4" is retired: use l4-next`)
	misplaced := finding(t, r, "ml", "Pod", "misplaced")
	assert.Equal(t, "deny", misplaced.Action)
	// plain (no profile), serve's two pods and misplaced, all in ml.
	assert.Equal(t, 3, r.Totals.Stranded)
	assert.Equal(t, 4, r.Totals.StrandedDevices)
	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	assert.Contains(t, b.String(), "stranded: 3 workloads running 4 accelerators would be denied if their pods were made again")
}
