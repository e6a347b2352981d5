package audit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/audit"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/workloads"
)

// migLab is a cluster in dryrun whose MIG config cuts the A100 node
// a100-1 into 3g.40gb slices; the L4 node is in no pool. STAGE is the MIG
// config's own stage.
const migLab = `package lab

cluster: {
	name: "lab"
	mig: configs: "a100-3g": {acceleratorType: "nvidia-a100-80gb", nodes: ["a100-1"], layout: "3g.40gb": 2, enforcement: "STAGE"}
}
profiles: {
	l4: {displayName: "L4", acceleratorTypes: ["nvidia-l4-24gb"]}
	"a100-3g": {displayName: "A100 3g.40gb", acceleratorTypes: ["nvidia-a100-80gb"], mig: "3g.40gb"}
}
teams: ml: {namespaces: ["ml"], acceleratorTypes: ["nvidia-l4-24gb", "nvidia-a100-80gb"]}
`

// migNodes: the GPU Operator has put its default MIG config on a100-1.
const migNodes = `apiVersion: v1
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
    labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, nvidia.com/gpu.count: "8", nvidia.com/gpu.memory: "81920", nvidia.com/mig.config: all-disabled}
  status:
    capacity: {nvidia.com/gpu: "8"}
    conditions: [{type: Ready, status: "True"}]
`

// migRunning: two GPU pods, a pod holding its GPU through a DRA claim and
// a CPU pod on a100-1, a finished GPU pod there, and a GPU pod on the L4
// node.
const migRunning = `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Pod, metadata: {name: train-0, namespace: ml}, spec: {nodeName: a100-1, containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "4"}}}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: notebook, namespace: ml}, spec: {nodeName: a100-1, containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: exporter, namespace: ml}, spec: {nodeName: a100-1, containers: [{name: c, image: x}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: done, namespace: ml}, spec: {nodeName: a100-1, containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]}, status: {phase: Succeeded}}
- {apiVersion: v1, kind: Pod, metadata: {name: serve, namespace: ml}, spec: {nodeName: l4-1, containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]}, status: {phase: Running}}
- {apiVersion: v1, kind: Pod, metadata: {name: claimed, namespace: ml}, spec: {nodeName: a100-1, resourceClaims: [{name: gpu, resourceClaimTemplateName: a100}], containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]}, status: {phase: Running}}
`

// auditMIG audits migRunning on migNodes with the MIG config at stage,
// and returns the report and the tree.
func auditMIG(t *testing.T, stage string) (*audit.Report, render.Tree) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lab.cue"), []byte(strings.Replace(migLab, "STAGE", stage, 1)), 0o644))
	m, err := compile.Load(dir)
	require.NoError(t, err)
	snap, err := inventory.DecodeSnapshot([]byte(migNodes))
	require.NoError(t, err)
	inv := snap.Classify(m.Catalog, inventory.Options{TypeLabel: m.Cluster.TypeLabel()})
	tree, err := render.Cluster(m, inv, render.Provenance{})
	require.NoError(t, err)
	set, err := workloads.Decode([]byte(migRunning))
	require.NoError(t, err)
	r, err := audit.Run(t.Context(), audit.Input{Model: m, Inventory: inv, Tree: tree, Workloads: set, Source: "running.yaml"})
	require.NoError(t, err)
	return r, tree
}

// TestAuditNodes: with the MIG config held back at dryrun, the tree puts
// no MIG config label on a100-1, and the audit names the node, its label
// from all-disabled to a100-3g, its pool label and taint, and the three
// running pods holding its GPUs (one through a DRA claim), which the MIG
// manager would evict; not the CPU pod, the finished one, nor the L4
// node's.
func TestAuditNodes(t *testing.T) {
	for _, stage := range []string{"dryrun", "warn"} {
		r, tree := auditMIG(t, stage)
		assert.NotContains(t, string(tree["nodes/nodefeaturerule-"+render.NodeFeatureRuleName+".yaml"]), render.MIGConfigLabel, stage)
		require.Len(t, r.Nodes, 1, stage)
		c := r.Nodes[0]
		assert.Equal(t, "a100-1", c.Node)
		assert.Equal(t, "a100-3g", c.Pool)
		assert.False(t, c.Applied, "withheld at %s", stage)
		assert.Equal(t, stage, c.Stage)
		assert.Equal(t, "cluster.mig.configs.a100-3g.enforcement", c.StageFrom)
		assert.Equal(t, []audit.LabelChange{
			{Kind: "label", Key: render.MIGConfigLabel, From: "all-disabled", To: "a100-3g"},
			{Kind: "label", Key: "accelerator.opendatahub.io/pool", To: "a100-3g"},
			{Kind: "taint", Key: "accelerator.opendatahub.io/pool", To: "accelerator.opendatahub.io/pool=a100-3g:NoSchedule"},
		}, c.Changes)
		assert.Equal(t, []audit.EvictedPod{
			{Namespace: "ml", Name: "claimed", Claims: []string{"gpu"}, Reason: audit.EvictRepartition},
			{Namespace: "ml", Name: "notebook", Devices: map[string]int{"nvidia.com/gpu": 1}, Reason: audit.EvictRepartition},
			{Namespace: "ml", Name: "train-0", Devices: map[string]int{"nvidia.com/gpu": 4}, Reason: audit.EvictRepartition},
		}, c.Evicted)
		assert.Equal(t, 1, r.Totals.Withheld)
		assert.Equal(t, 0, r.Totals.Reconfigured)
		assert.Equal(t, 3, r.Totals.Evicted)
		assert.Zero(t, r.EvictsNow(), "withheld: nothing is evicted when the commit lands")
		assert.False(t, r.Failed(compile.Deny), "a withheld change fails no --fail-on")
	}

	// At deny the tree makes the change: the audit says so before the
	// commit.
	r, tree := auditMIG(t, "deny")
	assert.Contains(t, string(tree["nodes/nodefeaturerule-"+render.NodeFeatureRuleName+".yaml"]), render.MIGConfigLabel+": a100-3g")
	require.Len(t, r.Nodes, 1)
	assert.True(t, r.Nodes[0].Applied)
	assert.Equal(t, 1, r.Totals.Reconfigured)
	assert.Len(t, r.Nodes[0].Evicted, 3)
	// Any --fail-on stops the commit that would evict them.
	assert.Equal(t, 3, r.EvictsNow())
	for _, stage := range []string{compile.Deny, compile.Warn, compile.DryRun} {
		assert.True(t, r.Failed(stage), stage)
	}
	assert.False(t, r.Failed(""))
}

// TestAuditNodesText is the node section as people read it.
func TestAuditNodesText(t *testing.T) {
	r, _ := auditMIG(t, "dryrun")
	var b strings.Builder
	require.NoError(t, r.WriteText(&b))
	testutil.Golden(t, filepath.Join("testdata", "nodes.txt"), []byte(b.String()))
}
