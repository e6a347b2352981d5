package inventory_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
)

func builtin(t testing.TB) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	return cat
}

// TestRealNodes classifies the verbatim label sets of real clusters
// (testdata/nodes/real-nodes-sample.json, copied from shared/testdata).
func TestRealNodes(t *testing.T) {
	raw, problems, err := inventory.ReadFile("../../testdata/nodes/real-nodes-sample.json")
	require.NoError(t, err)
	require.Empty(t, problems)
	inv := inventory.Classify(raw, builtin(t), inventory.Options{})
	require.Zero(t, inv.OtherNodes)

	type want struct {
		typ         string
		vendor      string
		count       int
		allocatable int
		sharing     inventory.Sharing
		replicas    int
		mig         map[string]int
	}
	wants := map[string]want{
		"192-222-54-148":   {"nvidia-h100-80gb", "nvidia", 8, 8, inventory.Exclusive, 0, nil},
		"s4124-0073-mixed": {"nvidia-h100-80gb", "nvidia", 1, 4, inventory.MIGMixed, 0, map[string]int{"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1}},
		"node-03":          {"nvidia-a100-40gb", "nvidia", 7, 7, inventory.MIGSingle, 0, map[string]int{"1g.5gb": 7}},
		"node-06":          {"nvidia-a100-40gb", "nvidia", 1, 1, inventory.Exclusive, 0, nil},
		"node-07":          {"nvidia-t4-16gb", "nvidia", 1, 8, inventory.TimeSliced, 8, nil},
		"node-13":          {"amd-mi300x-192gb", "amd", 0, 0, inventory.Exclusive, 0, nil},
		"gke-dev-pangeo-io-cl-jupyter-gpu-pool-026fa47a-q754": {"nvidia-t4-16gb", "nvidia", 0, 0, inventory.Exclusive, 0, nil},
		"node-17":        {"nvidia-a100-80gb", "nvidia", 0, 0, inventory.MIGSingle, 0, nil},
		"node-20":        {"nvidia-t4-16gb", "nvidia", 4, 16, inventory.TimeSliced, 4, nil},
		"219.245.186.40": {"unknown", "nvidia", 3, 3, inventory.Exclusive, 0, nil},
		"node-21":        {"unknown", "intel", 8, 8, inventory.Exclusive, 0, nil},
	}
	require.Len(t, inv.Nodes, len(wants))
	for _, n := range inv.Nodes {
		w, ok := wants[n.Name]
		if !assert.True(t, ok, n.Name) {
			continue
		}
		assert.Equal(t, w.typ, n.AcceleratorType, n.Name)
		assert.Equal(t, w.vendor, n.Vendor, n.Name)
		assert.Equal(t, w.count, n.Count, n.Name)
		assert.Equal(t, w.allocatable, n.Allocatable, n.Name)
		assert.Equal(t, w.sharing, n.Sharing, n.Name)
		assert.Equal(t, w.replicas, n.Replicas, n.Name)
		assert.Equal(t, w.mig, n.MIGDevices, n.Name)
		assert.NotEmpty(t, n.Notes, "%s: every classification says why", n.Name)
		if w.typ == "unknown" {
			assert.Equal(t, inventory.TypeUnknown, n.AcceleratorType)
			assert.Contains(t, n.DisplayName, "type unknown")
		}
	}
}
