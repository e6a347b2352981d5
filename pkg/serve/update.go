package serve

// Counting: the catalog counted again from the source whenever it
// changes, into a view that is then served as it is. A count after a
// node change classifies and places only the nodes that changed, and
// encodes only their rows (counter).

import (
	"context"
	"sync"
	"time"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// Run counts the catalog whenever the source changes, until ctx ends.
// The server is ready once the source has synced and the first count is
// in.
func (s *Server) Run(ctx context.Context) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !s.src.Synced() {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
	s.Update()
	var recount <-chan time.Time
	if _, ok := s.src.(Queues); ok {
		t := time.NewTicker(s.opts.Recount)
		defer t.Stop()
		recount = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.src.Changed():
		case <-s.reload:
		case <-recount:
		}
		// Gather what else comes within the debounce.
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.opts.Debounce):
		}
		s.Update()
	}
}

// Update counts the catalog from the source now.
func (s *Server) Update() {
	s.counter.mu.Lock()
	defer s.counter.mu.Unlock()
	begin := time.Now()
	m := s.model.Load()
	snap, since := s.src.Snapshot()
	pl, kept, recounted := s.counter.place(m, snap)
	s.metrics.recounted.Add(float64(recounted))
	inv := pl.Inventory
	v := &view{inv: inv, placed: pl, doc: render.CatalogOf(pl), updated: time.Now().UTC(), warnings: s.src.Warnings()}
	for _, p := range inv.Problems {
		v.warnings = append(v.warnings, p.String()+"; "+p.Effect())
	}
	wls, why := []Workload(nil), "a snapshot holds no Kueue Workloads: --live watches them"
	if q, ok := s.src.(Queues); ok {
		wls, why = q.Workloads()
	}
	v.waiting = waiting(&v.doc, m, wls, why, s.opts.Now())
	if _, live := s.src.(Queues); live && why != "" && v.waiting != nil {
		v.warnings = append(v.warnings, why+": how long a job waits is unknown")
	}
	v.live = make([]liveProfile, len(v.doc.Profiles))
	for i, p := range v.doc.Profiles {
		v.live[i] = liveProfile{Profile: p, Waiting: v.waiting[p.Name]}
	}
	v.noteFigures(m)
	v.profiles = encode(mustJSON(profilesResponse{Meta: v.meta(), Document: v.doc, Profiles: v.live}))
	v.byProfile = make(map[string]encoded, len(v.doc.Profiles))
	for _, p := range v.live {
		v.byProfile[p.Name] = encode(mustJSON(profileResponse{Meta: v.meta(), Profile: p}))
	}
	body, rows := nodesJSON(v, inv, kept, nil)
	v.nodes, v.rows = encode(body), rows
	v.rowIndex = make(map[string]int, len(inv.Nodes))
	for i := range inv.Nodes {
		v.rowIndex[inv.Nodes[i].Name] = i
	}
	v.filtered = newNodeViews(2*len(body) + 1<<20)
	page, fragment := renderPage(v, s.opts.Refresh, pageOptions{})
	v.page, v.fragment = encode(page), encode(fragment)
	s.counter.last = v
	s.cur.Store(v)
	s.ready.Store(true)
	s.metrics.observe(v, begin, since)
}

// counter is what one count keeps for the next: each node's
// classification, the placed cluster and the view, so that a count after
// a node change classifies and places only the nodes that changed
// (inventory.Reclassifier, compile.Placed.Replaced) and encodes only
// their rows. A new model, or a change the Reclassifier cannot confine
// to its nodes (a ResourceSlice's), is counted whole.
type counter struct {
	// mu holds one count at a time.
	mu    sync.Mutex
	model *compile.Model
	re    *inventory.Reclassifier
	// last is the last count's view, with its placed cluster.
	last *view
}

// place classifies the snapshot and places m on it, again only where
// nodes changed since the last count of m. kept gives the last count's
// row of each node that did not change, nil where every node changed;
// recounted is how many nodes were classified again.
func (c *counter) place(m *compile.Model, snap *inventory.Snapshot) (pl *compile.Placed, kept func(*inventory.Node) []byte, recounted int) {
	if c.model != m {
		c.model, c.last = m, nil
		c.re = inventory.NewReclassifier(m.Catalog, inventory.Options{Pins: m.Pins, TypeLabel: m.Cluster.TypeLabel(), NonAccelerator: m.Cluster.NonAccelerator})
	}
	inv, changed, all := c.re.Classify(snap)
	last := c.last
	if all || last == nil {
		return m.Place(inv), nil, len(snap.Nodes)
	}
	again := make(map[string]bool, len(changed))
	for _, name := range changed {
		again[name] = true
	}
	return last.placed.Replaced(inv, changed), func(n *inventory.Node) []byte {
		if again[n.Name] {
			return nil
		}
		if i, ok := last.rowIndex[n.Name]; ok {
			return last.rows[i]
		}
		return nil
	}, len(changed)
}
