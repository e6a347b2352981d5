package compile_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
)

// TestConfigurationCompilesAlone: the evaluated configuration, written
// as the one file of a cluster directory, compiles to the same model, in
// a folder without the CUE module it came from (as accelc serve reads it
// in the cluster).
func TestConfigurationCompilesAlone(t *testing.T) {
	for _, ex := range []string{"hetero-prod", "gpu-pools", "small-lab"} {
		m, err := compile.Load(filepath.Join("../../examples/clusters", ex))
		require.NoError(t, err)
		cfg, err := m.Configuration()
		require.NoError(t, err)
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "cluster.cue"), cfg, 0o644))
		back, err := compile.Load(dir)
		require.NoError(t, err, string(cfg))
		for _, pair := range [][2]any{{m.Cluster, back.Cluster}, {m.Profiles, back.Profiles}, {m.Teams, back.Teams}, {m.Pins, back.Pins}, {m.Catalog.Classes(), back.Catalog.Classes()}, {m.NodePools, back.NodePools}} {
			want, err := json.Marshal(pair[0])
			require.NoError(t, err)
			got, err := json.Marshal(pair[1])
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got), ex)
		}
		t.Logf("%s: %d bytes", ex, len(cfg))
	}
}
