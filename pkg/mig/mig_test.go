package mig_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/mig"
)

type layout = map[string]int

// TestGeometry checks layouts on each MIG-capable model against the
// placement rules of NVIDIA's MIG user guide (docs/hardware.md, MIG geometry):
// what fits, what does not, and the names each model uses.
func TestGeometry(t *testing.T) {
	geo, err := mig.Builtin()
	require.NoError(t, err)
	cases := []struct {
		model  string
		layout layout
		ok     bool
		err    string // a part of the error
	}{
		// A100 80GB and the H100 80GB share names and shape.
		{"nvidia-a100-80gb", layout{"3g.40gb": 1, "2g.20gb": 2}, true, ""}, // seed 004's recommendation
		{"nvidia-a100-80gb", layout{"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}, true, ""},
		{"nvidia-a100-80gb", layout{"4g.40gb": 1, "3g.40gb": 1}, true, ""},
		{"nvidia-a100-80gb", layout{"3g.40gb": 2}, true, ""},
		{"nvidia-a100-80gb", layout{"1g.10gb": 7}, true, ""},
		{"nvidia-a100-80gb", layout{"1g.20gb": 4}, true, ""},
		{"nvidia-a100-80gb", layout{"2g.20gb": 3, "1g.10gb": 1}, true, ""},
		{"nvidia-a100-80gb", layout{"3g.40gb": 1, "1g.10gb": 4}, true, ""},
		{"nvidia-a100-80gb", layout{"4g.40gb": 1, "2g.20gb": 1, "1g.10gb": 1}, true, ""},
		{"nvidia-a100-80gb", layout{"7g.80gb": 1}, true, ""},
		{"nvidia-a100-80gb", layout{"1g.10gb": 8}, false, "compute slices"},
		{"nvidia-a100-80gb", layout{"2g.20gb": 3, "3g.40gb": 1}, false, "compute slices"},
		{"nvidia-a100-80gb", layout{"3g.40gb": 2, "1g.10gb": 1}, false, "cannot be placed"}, // 7 compute slices, 9 memory
		{"nvidia-a100-80gb", layout{"3g.40gb": 1, "2g.20gb": 2, "1g.10gb": 1}, false, "8 compute slices"},
		{"nvidia-a100-80gb", layout{"1g.20gb": 4, "1g.10gb": 1}, false, "cannot be placed"},
		{"nvidia-a100-80gb", layout{"1g.10gb+me": 2}, false, "media extensions"},
		{"nvidia-h100-80gb", layout{"3g.40gb": 1, "2g.20gb": 2}, true, ""},
		// A100 40GB: the same shape, half the memory in the names.
		{"nvidia-a100-40gb", layout{"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}, true, ""}, // the operator's all-balanced
		{"nvidia-a100-40gb", layout{"7g.80gb": 1}, false, "did you mean 7g.40gb?"},
		{"nvidia-a100-40gb", layout{"4g.40gb": 1}, false, "did you mean 4g.20gb?"},
		{"nvidia-a100-40gb", layout{"1g.10gb": 4}, true, ""}, // the double-memory 1g
		// H100 NVL 94GB and H200.
		{"nvidia-h100-94gb", layout{"1g.12gb": 2, "2g.24gb": 1, "3g.47gb": 1}, true, ""},
		{"nvidia-h100-94gb", layout{"3g.40gb": 1}, false, "did you mean 3g.47gb?"},
		{"nvidia-h200-141gb", layout{"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1}, true, ""},
		{"nvidia-h200-141gb", layout{"7g.141gb": 1}, true, ""},
		{"nvidia-h200-141gb", layout{"4g.71gb": 1, "3g.71gb": 1, "1g.18gb": 1}, false, "compute slices"},
		// A30: four slices.
		{"nvidia-a30-24gb", layout{"1g.6gb": 2, "2g.12gb": 1}, true, ""},
		{"nvidia-a30-24gb", layout{"4g.24gb": 1}, true, ""},
		{"nvidia-a30-24gb", layout{"2g.12gb": 2, "1g.6gb": 1}, false, "compute slices"},
		{"nvidia-a30-24gb", layout{"3g.20gb": 1}, false, "no MIG profile 3g.20gb"},
		{"nvidia-a30-24gb", layout{"1g.6gb+me": 1, "2g.12gb+me": 1}, false, "media extensions"},
		{"nvidia-a100-80gb", layout{}, false, "no instance"},
	}
	for _, c := range cases {
		g, ok := geo[c.model]
		require.True(t, ok, c.model)
		placed, err := g.Place(c.layout)
		if c.ok {
			require.NoError(t, err, "%s %v", c.model, c.layout)
			n := 0
			for _, v := range c.layout {
				n += v
			}
			assert.Len(t, placed, n)
			checkDisjoint(t, g, placed)
			continue
		}
		require.Error(t, err, "%s %v", c.model, c.layout)
		assert.Contains(t, err.Error(), c.err, "%s %v", c.model, c.layout)
	}
}

// checkDisjoint asserts that placed instances occupy distinct memory slices
// at allowed starts.
func checkDisjoint(t *testing.T, g mig.Geometry, placed []mig.Placement) {
	t.Helper()
	used := map[int]string{}
	for _, p := range placed {
		prof := g.Profiles[p.Profile]
		assert.Contains(t, prof.Starts, p.Start, p.Profile)
		for s := p.Start; s < p.Start+prof.Memory; s++ {
			if other, taken := used[s]; taken {
				t.Errorf("slice %d holds %s and %s", s, other, p.Profile)
			}
			used[s] = p.Profile
		}
	}
}

// TestBalancedPlacement pins the one placement of the balanced layout:
// 2g@0, 1g@2, 1g@3, 3g@4 (a 3g at 0 would leave one slot for two 1g).
func TestBalancedPlacement(t *testing.T) {
	geo, err := mig.Builtin()
	require.NoError(t, err)
	placed, err := geo["nvidia-a100-80gb"].Place(layout{"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2})
	require.NoError(t, err)
	assert.Equal(t, []mig.Placement{{"2g.20gb", 0}, {"1g.10gb", 2}, {"1g.10gb", 3}, {"3g.40gb", 4}}, placed)
}

// TestGeometryMatchesCatalog: every model with a MIG geometry is a catalog
// class, and its largest profile holds the class's memory: all of it, or
// what NVML leaves usable of it (the B300's 288GB give 7g.269gb).
func TestGeometryMatchesCatalog(t *testing.T) {
	geo, err := mig.Builtin()
	require.NoError(t, err)
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	for id, g := range geo {
		c, ok := cat.Get(id)
		require.True(t, ok, id)
		var whole []string
		for name, p := range g.Profiles {
			// +gfx and -me variants of a size are the same slices.
			if p.Compute == g.ComputeSlices && !strings.ContainsAny(name, "+-") {
				whole = append(whole, name)
			}
		}
		if assert.Len(t, whole, 1, "%s: one profile takes the whole GPU", id) {
			gb := mig.MemoryGB(whole[0])
			assert.True(t, gb <= c.MemoryGB && gb*100 >= c.MemoryGB*90, "%s: %s holds %dGB of %dGB", id, whole[0], gb, c.MemoryGB)
			assert.Equal(t, wholeName(g, gb), whole[0], id)
		}
	}
}

func wholeName(g mig.Geometry, memGB int) string {
	return strconv.Itoa(g.ComputeSlices) + "g." + strconv.Itoa(memGB) + "gb"
}
