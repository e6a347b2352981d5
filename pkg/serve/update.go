package serve

// Counting: the catalog counted again from the source whenever it
// changes, into a view that is then served as it is.

import (
	"context"
	"time"

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
	begin := time.Now()
	m := s.model.Load()
	snap, since := s.src.Snapshot()
	inv := snap.Classify(m.Catalog, inventory.Options{Pins: m.Pins, TypeLabel: m.Cluster.TypeLabel(), NonAccelerator: m.Cluster.NonAccelerator})
	v := &view{inv: inv, doc: render.Catalog(m, inv), updated: time.Now().UTC(), warnings: s.src.Warnings()}
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
	body, rows := nodesJSON(v, inv, nil, nil)
	v.nodes, v.rows = encode(body), rows
	v.rowIndex = make(map[string]int, len(inv.Nodes))
	for i := range inv.Nodes {
		v.rowIndex[inv.Nodes[i].Name] = i
	}
	v.filtered = newNodeViews(2*len(body) + 1<<20)
	page, fragment := renderPage(v, s.opts.Refresh, pageOptions{})
	v.page, v.fragment = encode(page), encode(fragment)
	s.cur.Store(v)
	s.ready.Store(true)
	s.metrics.observe(v, begin, since)
}
