package compile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// TestStages: a namespace's stage is its own, else its team's, else the
// cluster's; Enforced puts every one at deny.
func TestStages(t *testing.T) {
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": minimal + `
teams: {
	ml: {namespaces: ["ml", "ml-dev"], acceleratorTypes: ["nvidia-l4-24gb"], enforcement: "warn", namespaceEnforcement: "ml-dev": "deny"}
	web: {namespaces: ["web"], acceleratorTypes: ["nvidia-l4-24gb"]}
}
`}))
	require.NoError(t, err)
	assert.Equal(t, "dryrun", m.Stage("web"))
	assert.Equal(t, "warn", m.Stage("ml"))
	assert.Equal(t, "deny", m.Stage("ml-dev"))
	assert.Equal(t, "dryrun", m.Stage("default"), "a namespace of no team is at the cluster's stage")
	assert.Equal(t, map[string][]string{"warn": {"ml"}, "deny": {"ml-dev"}}, m.Staged())
	only, except, none := m.Mutating()
	assert.Equal(t, []string{"ml-dev"}, only)
	assert.Nil(t, except)
	assert.False(t, none)

	e := m.Enforced()
	for _, ns := range []string{"web", "ml", "ml-dev", "default"} {
		assert.Equal(t, "deny", e.Stage(ns), ns)
	}
	assert.Equal(t, "warn", m.Stage("ml"), "Enforced leaves the model as it was")
}

// TestNamespaceStageOfAnotherTeam: a namespace the team does not hold is
// an error naming where it is written.
func TestNamespaceStageOfAnotherTeam(t *testing.T) {
	_, err := compile.Load(cluster(t, map[string]string{"c.cue": minimal + `
teams: ml: {namespaces: ["ml"], acceleratorTypes: ["nvidia-l4-24gb"], namespaceEnforcement: "web": "deny"}
`}))
	var errs compile.Errors
	require.True(t, errors.As(err, &errs), "%v", err)
	assert.Contains(t, err.Error(), "team ml has no namespace web")
	assert.Contains(t, err.Error(), "c.cue:")
}

// nodePools is a cluster with a MIG config and a time-slicing pool, a
// profile of each; more CUE follows.
const nodePools = `package c

cluster: {
	name: "lab"
	mig: configs: "a100-3g": {acceleratorType: "nvidia-a100-80gb", nodes: ["a100-mig-1"], layout: "3g.40gb": 2}
	sharing: "l4-shared": {acceleratorType: "nvidia-l4-24gb", replicas: 4}
}
profiles: {
	"a100-3g": {displayName: "A100 3g.40gb", acceleratorTypes: ["nvidia-a100-80gb"], mig: "3g.40gb"}
	"l4-shared": {displayName: "Shared L4", pool: "l4-shared"}
}
`

// TestNodeStage: a pool's node stage is its own, else
// cluster.nodeEnforcement, else cluster.enforcement, and says where it
// comes from; Enforced puts every pool at deny.
func TestNodeStage(t *testing.T) {
	load := func(more string) *compile.Model {
		t.Helper()
		m, err := compile.Load(cluster(t, map[string]string{"c.cue": nodePools + more}))
		require.NoError(t, err)
		return m
	}
	stage := func(m *compile.Model, name string) string {
		pool := mustPool(t, m, name)
		return pool.Stage + " from " + pool.StageFrom
	}
	m := load("")
	assert.Equal(t, "dryrun from cluster.enforcement", stage(m, "a100-3g"))
	assert.Equal(t, "dryrun from cluster.enforcement", stage(m, "l4-shared"))
	e := m.Enforced()
	for _, p := range e.NodePools {
		assert.True(t, p.Reconfigured(), p.Name)
	}
	assert.Equal(t, "dryrun from cluster.enforcement", stage(m, "a100-3g"), "Enforced leaves the model as it was")

	m = load(`cluster: {enforcement: "warn", nodeEnforcement: "deny"}
cluster: mig: configs: "a100-3g": enforcement: "dryrun"`)
	assert.Equal(t, "dryrun from cluster.mig.configs.a100-3g.enforcement", stage(m, "a100-3g"))
	assert.Equal(t, "deny from cluster.nodeEnforcement", stage(m, "l4-shared"))
	assert.Equal(t, "cluster.sharing.l4-shared", mustPool(t, m, "l4-shared").Setting())

	// A stage that is not one is CUE's error, at its line.
	_, err := compile.Load(cluster(t, map[string]string{"c.cue": nodePools + `cluster: sharing: "l4-shared": enforcement: "on"`}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c.cue:")
	assert.Contains(t, err.Error(), `cluster.sharing."l4-shared".enforcement: "on" is not one of "dryrun", "warn", "deny"`)
}

func mustPool(t *testing.T, m *compile.Model, name string) *compile.NodePool {
	t.Helper()
	pool, ok := m.Pool(name)
	require.True(t, ok, name)
	return pool
}

// TestNodeStageWarnsProfiles: vet warns of an enabled profile whose every
// pool is held back, saying what to run and what to set; not of one at
// deny, nor of a disabled one.
func TestNodeStageWarnsProfiles(t *testing.T) {
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": nodePools + `cluster: sharing: "l4-shared": enforcement: "deny"`}))
	require.NoError(t, err)
	var got []string
	for _, d := range m.Check(&inventory.Inventory{}) {
		if strings.Contains(d.Msg, "node stage") {
			got = append(got, d.String())
		}
	}
	require.Len(t, got, 1, "%q", got)
	assert.Contains(t, got[0], "profiles.a100-3g: its MIG config a100-3g is at node stage dryrun (cluster.enforcement): its nodes are not cut into 3g.40gb slices yet, so the profile's pods find no node; `accelc audit` lists")
	assert.Contains(t, got[0], `set cluster.mig.configs.a100-3g.enforcement: "deny"`)
	assert.Contains(t, got[0], "c.cue:")

	m, err = compile.Load(cluster(t, map[string]string{"c.cue": nodePools + `profiles: "a100-3g": enabled: false`}))
	require.NoError(t, err)
	for _, d := range m.Check(&inventory.Inventory{}) {
		assert.NotContains(t, d.String(), "profiles.a100-3g: its MIG config")
	}
}
