package compile_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// TestPlaced: the placed cluster answers what the model does, asked node
// by node: each node's pool (by the pools' lists, then the type-wide
// pools), its GPUs, each pool's members and each type's GPUs, on the
// pools test's cluster and on every example with an inventory.
func TestPlaced(t *testing.T) {
	type placed struct {
		name string
		m    *compile.Model
		inv  *inventory.Inventory
	}
	m, inv := poolsModel(t, "")
	cases := []placed{{"pools", m, inv}}
	dirs, err := filepath.Glob("../../examples/clusters/*/inventory.json")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	for _, f := range dirs {
		dir := filepath.Dir(f)
		m, err := compile.Load(dir)
		require.NoError(t, err, dir)
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		raw, _, err := inventory.Decode(data)
		require.NoError(t, err, f)
		cases = append(cases, placed{filepath.Base(dir), m, inventory.Classify(raw, m.Catalog, inventory.Options{Pins: m.Pins})})
	}
	pooled := 0
	for _, c := range cases {
		pl := c.m.Place(c.inv)
		gpus := map[string]int{}
		for i := range c.inv.Nodes {
			n := &c.inv.Nodes[i]
			want := c.m.PoolOf(n.Name, n.AcceleratorType)
			assert.Same(t, want, pl.NodePool(n), "%s: %s's pool", c.name, n.Name)
			if want != nil {
				pooled++
			}
			g, ok := pl.GPUs(n)
			wg, wok := c.m.NodeGPUs(n)
			assert.Equal(t, [2]any{wg, wok}, [2]any{g, ok}, "%s: %s's GPUs", c.name, n.Name)
			gpus[n.AcceleratorType] += g
		}
		for id, g := range gpus {
			assert.Equal(t, g, pl.TypeGPUs(id), "%s: %s's GPUs", c.name, id)
		}
		for _, pool := range c.m.NodePools {
			var want []*inventory.Node
			for i := range c.inv.Nodes {
				n := &c.inv.Nodes[i]
				if n.AcceleratorType == pool.AcceleratorType && c.m.PoolOf(n.Name, n.AcceleratorType) == pool {
					want = append(want, n)
				}
			}
			assert.True(t, slices.Equal(want, pl.Members(pool)), "%s: %s's members", c.name, pool.Name)
		}
	}
	assert.Positive(t, pooled, "no node in a pool: the cases test nothing of the pools")
}
