package compile_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
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
