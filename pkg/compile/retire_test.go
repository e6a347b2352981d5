package compile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
)

// TestRetiredProfile: a retired profile stays in the model (its running
// pods need its queues and NodePools) but is not offered to new pods;
// its replacement must be a profile in service.
func TestRetiredProfile(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": `package c

cluster: name: "lab"
profiles: t4: {displayName: "T4", acceleratorTypes: ["nvidia-t4-16gb"], retired: replacement: "l4"}
profiles: l4: {displayName: "L4", acceleratorTypes: ["nvidia-l4-24gb"]}
teams: a: {namespaces: ["a"], acceleratorTypes: ["nvidia-l4-24gb", "nvidia-t4-16gb"], quota: {"nvidia-l4-24gb": 4, "nvidia-t4-16gb": 2}}
`})
	m, err := compile.Load(dir)
	require.NoError(t, err)
	t4 := m.Profile("t4")
	require.NotNil(t, t4)
	assert.True(t, t4.Enabled, "a retired profile keeps what its running pods need")
	assert.False(t, t4.Offered())
	assert.Equal(t, "l4", t4.Retired.Replacement)
	assert.True(t, m.Profile("l4").Offered())
}

func TestRetiredProfileReplacement(t *testing.T) {
	for _, c := range []struct{ replacement, want string }{
		{"t4", "profiles.t4.retired.replacement: a profile cannot replace itself"},
		{"a100", "profiles.t4.retired.replacement: a100 is not a profile (l4, old, t4): name the one its users move to"},
		{"old", "profiles.t4.retired.replacement: old takes no new pods itself (disabled or retired): name a profile in service"},
	} {
		dir := cluster(t, map[string]string{"c.cue": `package c

cluster: name: "lab"
profiles: t4: {displayName: "T4", acceleratorTypes: ["nvidia-t4-16gb"], retired: replacement: "` + c.replacement + `"}
profiles: l4: {displayName: "L4", acceleratorTypes: ["nvidia-l4-24gb"]}
profiles: old: {displayName: "Old", acceleratorTypes: ["nvidia-l4-24gb"], retired: {}}
teams: a: {namespaces: ["a"], acceleratorTypes: ["nvidia-l4-24gb", "nvidia-t4-16gb"], quota: {"nvidia-l4-24gb": 4, "nvidia-t4-16gb": 2}}
`})
		_, err := compile.Load(dir)
		require.Error(t, err, c.replacement)
		assert.Contains(t, err.Error(), c.want)
	}
}
