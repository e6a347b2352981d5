package compile_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/internal/nodechange"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// TestPlacedReplaced: serve's recount of a node change, reclassifying the
// changed nodes (inventory.Reclassifier) and placing them again
// (Placed.Replaced), gives what classifying and placing the whole snapshot
// gives, over random runs of node changes (pods bound and gone, nodes
// cordoned, relabelled as another type, resized, added and removed) on
// every example with an inventory.
func TestPlacedReplaced(t *testing.T) {
	files, err := filepath.Glob("../../examples/clusters/*/inventory.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		dir := filepath.Dir(f)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			m, err := compile.Load(dir)
			require.NoError(t, err)
			snap, err := inventory.ReadSnapshot(f)
			require.NoError(t, err)
			require.NotEmpty(t, snap.Nodes)
			opts := inventory.Options{Pins: m.Pins, TypeLabel: m.Cluster.TypeLabel(), NonAccelerator: m.Cluster.NonAccelerator}
			for seed := range uint64(20) {
				rng := rand.New(rand.NewPCG(seed, 49))
				re := inventory.NewReclassifier(m.Catalog, opts)
				cur := &inventory.Snapshot{Source: &inventory.Source{Cluster: "test", PodsCounted: seed%2 == 0}, Nodes: slices.Clone(snap.Nodes), Slices: snap.Slices}
				inv, _, all := re.Classify(cur)
				require.True(t, all, "the first count classifies every node")
				pl := m.Place(inv)
				incremental := 0
				for step := range 30 {
					next, what := nodechange.Random(rng, cur)
					inv, changed, all := re.Classify(next)
					full := next.Classify(m.Catalog, opts)
					require.Equal(t, full, inv, "seed %d step %d (%s): the reclassified inventory", seed, step, what)
					if all {
						pl = m.Place(inv)
					} else {
						pl = pl.Replaced(inv, changed)
						incremental++
					}
					require.Equal(t, placement(m, m.Place(full)), placement(m, pl), "seed %d step %d (%s): the placed cluster", seed, step, what)
					cur = next
				}
				if len(snap.Slices) == 0 {
					require.Positive(t, incremental, "seed %d: no change was counted incrementally", seed)
				}
			}
		})
	}
}

// placement is what a placed cluster answers, by node name: each node's
// pool and GPUs, each type's and pool's nodes and GPUs, each quota key's
// flavor nodes.
func placement(m *compile.Model, pl *compile.Placed) map[string]any {
	out := map[string]any{}
	names := func(nodes []*inventory.Node) []string {
		var out []string
		for _, n := range nodes {
			out = append(out, n.Name)
		}
		return out
	}
	for i := range pl.Inventory.Nodes {
		n := &pl.Inventory.Nodes[i]
		pool := "-"
		if p := pl.NodePool(n); p != nil {
			pool = p.Name
		}
		g, ok := pl.GPUs(n)
		out["node "+n.Name] = fmt.Sprint(pool, g, ok)
	}
	for _, c := range m.Catalog.Classes() {
		out["type "+c.ID] = fmt.Sprint(pl.TypeGPUs(c.ID), names(pl.ByType(c.ID)), names(pl.FlavorNodes(c.ID)))
	}
	for _, pool := range m.NodePools {
		out["pool "+pool.Name] = fmt.Sprint(names(pl.Members(pool)), pl.Capacity(pool, ""))
	}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		total, per, ok := pl.SharedCapacity(p)
		out["profile "+p.Name] = fmt.Sprint(total, per, ok)
	}
	return out
}
