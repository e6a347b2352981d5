package serve

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/accelc/accelc/internal/nodegen"
	"github.com/accelc/accelc/pkg/inventory"
)

// BenchmarkNodeChange is serve's recount of one node change: hetero-prod
// over the 5,000 generated nodes BenchmarkRender5000 renders, pods
// counted, and between counts one node's pods bound or gone (its in-use
// count), the change a watch sees most. Each count reads the snapshot
// (a copy of the node list, as the Watcher makes one), classifies,
// places and counts the catalog, encodes every answer and the page. Also
// the live heap after the last count, with the server in it.
func BenchmarkNodeChange(b *testing.B) {
	m, _ := example(b, "hetero-prod")
	raw, _, err := inventory.Decode(nodegen.List(nodegen.Generated(5000)))
	if err != nil {
		b.Fatal(err)
	}
	src := &nodeChanges{nodes: raw, source: &inventory.Source{Cluster: "bench", TakenAt: time.Unix(0, 0).UTC(), PodsCounted: true}}
	srv := New(m, src, Options{})
	srv.Update()
	i := 0
	for b.Loop() {
		src.inUse(i%len(raw), 1+i%2)
		srv.Update()
		i++
	}
	b.ReportMetric(float64(len(srv.cur.Load().inv.Nodes)), "accelerator-nodes")
	// What the server holds between counts: the view, and what a count
	// keeps for the next.
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-heap-MiB")
	runtime.KeepAlive(srv)
}

// nodeChanges is a source whose nodes the benchmark changes one at a
// time; each snapshot is a fresh copy of the node list.
type nodeChanges struct {
	mu     sync.Mutex
	nodes  []inventory.RawNode
	source *inventory.Source
}

func (c *nodeChanges) Snapshot() (*inventory.Snapshot, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &inventory.Snapshot{Source: c.source, Nodes: append([]inventory.RawNode(nil), c.nodes...)}, time.Time{}
}
func (c *nodeChanges) Changed() <-chan struct{} { return nil }
func (c *nodeChanges) Synced() bool             { return true }
func (c *nodeChanges) Warnings() []string       { return nil }

// inUse replaces node i with a copy whose pods hold n devices, as the
// Watcher replaces a node it annotates.
func (c *nodeChanges) inUse(i, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	node := c.nodes[i]
	node.Metadata.Annotations = cloneMap(node.Metadata.Annotations)
	inventory.SetInUse(&node, map[string]int{fmt.Sprintf("team-%d", i%7): n})
	c.nodes[i] = node
}
