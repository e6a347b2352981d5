// Package serve is accelc serve: the hardware catalog of a cluster, live.
// It holds a compiled cluster (its profiles, types, pools, teams) and keeps
// the catalog's availability current from the cluster's nodes, pods and
// ResourceSlices (Watcher), counted by the code `accelc catalog` and
// `accelc inventory show` count with (inventory classification,
// compile.Placed, render.CatalogOf), again only for the nodes that
// changed, and serves it: a versioned JSON API, Prometheus metrics, and a
// page for people. Beside each profile that schedules
// through Kueue it says what waits in the profile's queue and for about
// how long (Waiting), from Kueue's Workloads.
package serve

import (
	"crypto/tls"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// APIVersion is the JSON API's version, the first segment of its paths.
const APIVersion = "v1"

// Source gives the cluster's nodes: a Watcher, or a snapshot that never
// changes (Static).
type Source interface {
	// Snapshot is the nodes now, and since when changes waited for it.
	Snapshot() (*inventory.Snapshot, time.Time)
	// Changed receives when the nodes changed.
	Changed() <-chan struct{}
	// Synced says the nodes were read once.
	Synced() bool
	// Warnings are what the source works around.
	Warnings() []string
}

// Static is a snapshot served as it is (accelc serve --inventory).
type Static struct{ Snap *inventory.Snapshot }

func (s Static) Snapshot() (*inventory.Snapshot, time.Time) { return s.Snap, time.Time{} }
func (s Static) Changed() <-chan struct{}                   { return nil }
func (s Static) Synced() bool                               { return true }
func (s Static) Warnings() []string                         { return s.Snap.Warnings }

// Options shape a Server.
type Options struct {
	// Debounce is how long the server gathers changes before it counts
	// again (default 200ms): availability lags a pod's binding by that
	// and one count.
	Debounce time.Duration
	// MaxInFlight caps the requests served at once (default 256); past
	// it, 503 with Retry-After.
	MaxInFlight int
	// MaxConnections caps the connections open at once (default 4 ×
	// MaxInFlight): past it a new one waits to be accepted; from three
	// quarters of it, keep-alive is off, so idle connections close and
	// each answer closes its own.
	MaxConnections int
	// RequestTimeout bounds one request (default 10s).
	RequestTimeout time.Duration
	// Refresh is how often the page asks for news (default 5s).
	Refresh time.Duration
	// Now is the clock the waits are estimated by (default time.Now).
	Now func() time.Time
	// Recount is how often a server over Kueue's Workloads counts again
	// though nothing changed, so that running workloads' ages, and the
	// waits, move on (default a minute).
	Recount time.Duration
	// Access, when set, lets in only requests whose bearer token the
	// cluster knows, and gives each user what the cluster lets it read
	// (auth.go); nil serves anyone who reaches the server.
	Access *Access
	// TLS, when set, serves HTTPS with it.
	TLS *tls.Config
}

// Server serves one cluster's catalog.
type Server struct {
	model atomic.Pointer[compile.Model]
	src   Source
	opts  Options
	cur   atomic.Pointer[view]
	sem   chan struct{}
	// build caps the filtered node views put together at once.
	build   chan struct{}
	metrics *metrics
	ready   atomic.Bool
	reload  chan struct{}
	// shell is the page without the catalog, for a browser that has yet
	// to give a token (with Access).
	shell encoded
	// counter is what a count keeps for the next (update.go).
	counter counter
}

// New makes a server of m's catalog over src.
func New(m *compile.Model, src Source, opts Options) *Server {
	if opts.Debounce <= 0 {
		opts.Debounce = 200 * time.Millisecond
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 256
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = 4 * opts.MaxInFlight
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 10 * time.Second
	}
	if opts.Refresh <= 0 {
		opts.Refresh = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Recount <= 0 {
		opts.Recount = time.Minute
	}
	s := &Server{src: src, opts: opts, sem: make(chan struct{}, opts.MaxInFlight), build: make(chan struct{}, max(2, runtime.GOMAXPROCS(0))),
		metrics: newMetrics(), reload: make(chan struct{}, 1)}
	s.model.Store(m)
	if opts.Access != nil {
		s.shell = encode(renderShell(opts.Refresh))
		s.metrics.reg.MustRegister(opts.Access.Collectors()...)
	}
	return s
}

// SetModel replaces the cluster's compiled configuration (its CUE
// changed) and counts the catalog again with it.
func (s *Server) SetModel(m *compile.Model) {
	s.model.Store(m)
	select {
	case s.reload <- struct{}{}:
	default:
	}
}
