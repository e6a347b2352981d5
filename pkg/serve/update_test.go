package serve

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/internal/nodechange"
)

// TestNodeChangesCountedAsAWhole: a server that counts node changes
// incrementally (classifying, placing and encoding only the nodes that
// changed) serves what a server counting the same snapshot afresh does:
// the catalog, every node's row, the node view and the inventory, over
// random runs of node changes on the examples with pools, sharing, MIG
// and other vendors.
func TestNodeChangesCountedAsAWhole(t *testing.T) {
	for _, name := range []string{"hetero-prod", "gpu-pools", "small-lab", "tpu-trainium"} {
		t.Run(name, func(t *testing.T) {
			m, snap := example(t, name)
			src := &changing{snap: counted(snap, 1), changed: make(chan struct{}, 1)}
			srv := New(m, src, Options{})
			srv.Update()
			rng := rand.New(rand.NewPCG(49, uint64(len(name))))
			incremental, recounted := 0, testutil.ToFloat64(srv.metrics.recounted)
			for step := range 40 {
				next, what := nodechange.Random(rng, src.snap)
				src.snap = next
				srv.Update()
				fresh := New(m, Static{Snap: next}, Options{})
				fresh.Update()
				got, want := srv.cur.Load(), fresh.cur.Load()
				require.Equal(t, want.inv, got.inv, "step %d (%s): the inventory", step, what)
				require.Equal(t, want.doc, got.doc, "step %d (%s): the catalog", step, what)
				require.Equal(t, want.rows, got.rows, "step %d (%s): the node rows", step, what)
				require.Equal(t, cutMeta(want.nodes.body), cutMeta(got.nodes.body), "step %d (%s): the node view", step, what)
				n := testutil.ToFloat64(srv.metrics.recounted)
				if n-recounted < float64(len(next.Nodes)) {
					incremental++
				}
				recounted = n
			}
			require.Greater(t, incremental, 30, "most node changes are counted alone")
		})
	}
}

// cutMeta is a node view without its meta, which says when it was made.
func cutMeta(body []byte) []byte {
	return body[bytes.Index(body, []byte(`,"nodes":[`)):]
}
