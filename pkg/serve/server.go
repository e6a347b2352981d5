// Package serve is accelc serve: the hardware catalog of a cluster, live.
// It holds a compiled cluster (its profiles, types, pools, teams) and keeps
// the catalog's availability current from the cluster's nodes, pods and
// ResourceSlices (Watcher), counted by the code `accelc catalog` and
// `accelc inventory show` count with (inventory.Snapshot.Classify,
// render.Catalog), and serves it: a versioned JSON API, Prometheus
// metrics, and a page for people. Beside each profile that schedules
// through Kueue it says what waits in the profile's queue and for about
// how long (Waiting), from Kueue's Workloads.
package serve

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/estimate"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
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
}

// view is everything a count gives, ready to serve: the documents are
// encoded once per count, not once per request.
type view struct {
	inv      *inventory.Inventory
	doc      catalogdoc.Document
	updated  time.Time
	warnings []string
	profiles encoded // /api/v1/profiles
	nodes    encoded // /api/v1/nodes without filters
	// rows are each node's JSON in nodes.body, by inv.Nodes' index; a
	// filtered node view is put together from them (nodeViews).
	rows      [][]byte
	rowIndex  map[string]int
	filtered  *nodeViews
	page      encoded // /
	fragment  encoded // the page's refreshed part
	byProfile map[string]encoded
	// waiting is what waits for each profile that schedules through
	// Kueue; live is the catalog's profiles with it.
	waiting map[string]*Waiting
	live    []liveProfile
	// figures are, for each team whose quota use the catalog counts, its
	// namespaces; podNamespaces are the namespaces whose pods hold
	// devices on a node (inUseByNamespace). Both sorted: who may not list
	// pods in one is not told what it holds (scoped.go).
	figures       map[string][]string
	teamNS        []string
	podNamespaces []string
}

// liveProfile is a catalog profile as the API serves it: with what
// waits for it.
type liveProfile struct {
	catalogdoc.Profile
	// Waiting is absent for a profile that does not schedule through
	// Kueue.
	Waiting *Waiting `json:"waiting,omitempty"`
}

type encoded struct {
	body []byte
	etag string
	// gz is body gzipped, for clients that accept it; nil for a small
	// body.
	gz []byte
}

// gzipOver is the size past which a body is also kept gzipped: the page
// and the node view of a large cluster are hundreds of kilobytes of
// repetitive text.
const gzipOver = 1024

// encode is a document served until the next count: its ETag, and
// gzipped once for every client that asks.
func encode(body []byte) encoded {
	sum := sha256.Sum256(body)
	e := encoded{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
	if len(body) > gzipOver {
		e.gz = gzipped(body)
	}
	return e
}

// gzipped is body gzipped (fastest), nil if that fails.
func gzipped(body []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	_, _ = zw.Write(body)
	if zw.Close() != nil {
		return nil
	}
	return buf.Bytes()
}

// serveFresh answers with a body made for this one request: gzipped only
// where the client asks; past the request's time, 503.
func serveFresh(w http.ResponseWriter, r *http.Request, body []byte) {
	if r.Context().Err() != nil {
		tooLong(w)
		return
	}
	sum := sha256.Sum256(body)
	e := encoded{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
	if len(body) > gzipOver && acceptsGzip(r) {
		e.gz = gzipped(body)
	}
	serveEncoded(w, r, e, "application/json")
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

// Meta says how fresh a response is.
type Meta struct {
	APIVersion string    `json:"apiVersion"`
	Cluster    string    `json:"cluster"`
	UpdatedAt  time.Time `json:"updatedAt"`
	// PodsCounted says availability subtracts what pods hold.
	PodsCounted bool     `json:"podsCounted"`
	Warnings    []string `json:"warnings,omitempty"`
}

func (v *view) meta() Meta {
	return Meta{APIVersion: APIVersion, Cluster: v.doc.Cluster, UpdatedAt: v.updated, PodsCounted: v.inv.UsageKnown(), Warnings: v.warnings}
}

type profilesResponse struct {
	Meta Meta `json:"meta"`
	catalogdoc.Document
	// Profiles are the document's, with what waits for each.
	Profiles []liveProfile `json:"profiles"`
}

type profileResponse struct {
	Meta    Meta        `json:"meta"`
	Profile liveProfile `json:"profile"`
}

type nodesBody struct {
	Meta     Meta                    `json:"meta"`
	Nodes    []inventory.Node        `json:"nodes"`
	Summary  []inventory.TypeSummary `json:"summary"`
	Problems []inventory.Problem     `json:"problems,omitempty"`
}

func nodesResponse(v *view, inv *inventory.Inventory) nodesBody {
	out := nodesBody{Meta: v.meta(), Nodes: inv.Nodes, Summary: inv.Summary(), Problems: inv.Problems}
	if out.Nodes == nil {
		out.Nodes = []inventory.Node{}
	}
	return out
}

// nodesJSON is nodesResponse(v, inv) encoded, put together field by field
// so that each node's row can be cut from it (rows, by inv.Nodes' index)
// and a filtered view put together from the rows without encoding a node
// again. With rows given, inv's nodes are a selection of v.inv's and
// their rows are taken from there. With shown, a node's inUseByNamespace
// keeps only those namespaces: a node with another is encoded again.
func nodesJSON(v *view, inv *inventory.Inventory, from [][]byte, shown map[string]bool) (body []byte, rows [][]byte) {
	resp := nodesResponse(v, inv)
	var b bytes.Buffer
	b.WriteString(`{"meta":`)
	b.Write(mustJSON(resp.Meta))
	b.WriteString(`,"nodes":[`)
	ends := make([]int, 0, len(resp.Nodes))
	for i := range resp.Nodes {
		if i > 0 {
			b.WriteByte(',')
		}
		if n := &resp.Nodes[i]; shown != nil && hidesSome(n.InUseBy, shown) {
			b.Write(mustJSON(scopedNode(n, shown)))
		} else if from != nil {
			b.Write(from[v.rowIndex[resp.Nodes[i].Name]])
		} else {
			b.Write(mustJSON(&resp.Nodes[i]))
		}
		ends = append(ends, b.Len())
	}
	b.WriteString(`],"summary":`)
	b.Write(mustJSON(resp.Summary))
	if len(resp.Problems) > 0 {
		b.WriteString(`,"problems":`)
		b.Write(mustJSON(resp.Problems))
	}
	b.WriteByte('}')
	body = b.Bytes()
	if from == nil {
		rows = make([][]byte, len(ends))
		start := bytes.Index(body, []byte(`"nodes":[`)) + len(`"nodes":[`)
		for i, end := range ends {
			rows[i] = body[start:end:end]
			start = end + 1
		}
	}
	return body, rows
}

type recommendResponse struct {
	Meta Meta `json:"meta"`
	estimate.Recommendation
}

// estimateResponse is accelc estimate -o json's document, with meta.
type estimateResponse struct {
	Meta           Meta                `json:"meta"`
	Params         float64             `json:"params"`
	Tokens         float64             `json:"tokens"`
	Precision      string              `json:"precision"`
	GPUs           int                 `json:"gpus"`
	MFU            float64             `json:"mfu"`
	MemoryPerGPUGB float64             `json:"memoryPerGPUGB"`
	Estimates      []estimate.Estimate `json:"estimates"`
}

// Error is every error response's body.
type Error struct {
	Error string `json:"error"`
	// Field is the query parameter at fault, when one is.
	Field string `json:"field,omitempty"`
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Every type served is plain data: this is a bug.
		panic(err)
	}
	return b
}

// Handler is the server's HTTP handler: every route, with the
// concurrency cap, the request timeout and metrics, and with Access, who
// may read what (docs/serve.md, Who sees what): /healthz and /readyz
// answer anyone.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", s.readyz)
	catalog := func() right { return catalogRight(s.model.Load().Cluster.ProfileNamespace) }
	mux.Handle("GET /metrics", s.allowed(func() right { return metricsRight }, promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}).ServeHTTP))
	api := "/api/" + APIVersion
	mux.HandleFunc("GET "+api+"/profiles", s.allowed(catalog, s.withView(s.profiles)))
	mux.HandleFunc("GET "+api+"/profiles/{name}", s.allowed(catalog, s.withView(s.profile)))
	mux.HandleFunc("GET "+api+"/nodes", s.allowed(func() right { return nodesRight }, s.withView(s.nodes)))
	mux.HandleFunc("GET "+api+"/recommend", s.allowed(catalog, s.withView(s.recommend)))
	mux.HandleFunc("GET "+api+"/estimate", s.allowed(catalog, s.withView(s.estimate)))
	mux.HandleFunc("GET /{$}", s.allowed(catalog, s.withView(s.page)))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, Error{Error: "read-only: only GET and HEAD"})
			return
		}
		writeError(w, http.StatusNotFound, Error{Error: "no such path: " + api + "/profiles, /profiles/{name}, /nodes, /recommend, /estimate; /, /healthz, /readyz, /metrics"})
	})
	if s.opts.Access == nil {
		return s.guard(mux)
	}
	return s.guard(s.gate(mux))
}

// statusClientGone is the code metrics give a request whose client hung
// up before its answer was written (nginx's 499): not the server's error.
const statusClientGone = 499

// guard caps concurrency and time, refuses bodies, paths that are not
// clean and any method but GET and HEAD, and measures each request.
//
// Nothing is buffered: a response is written as it is made, the
// documents encoded once per count straight from the bytes the count
// made. Time is bounded by the request's context (RequestTimeout: the
// handlers that compute check it before they answer) and by a write
// deadline on the connection, so a client that stops reading holds one
// of MaxInFlight places until then, and no copy of what it was sent.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		begin := time.Now()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		defer func() {
			code := rec.code
			if rec.failed || errors.Is(r.Context().Err(), context.Canceled) {
				code = statusClientGone
			}
			s.metrics.request(route(r), code, time.Since(begin))
		}()
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			rec.Header().Set("Allow", "GET, HEAD")
			writeError(rec, http.StatusMethodNotAllowed, Error{Error: "read-only: only GET and HEAD"})
			return
		}
		// A body of any length or encoding: chunked is ContentLength -1.
		if r.ContentLength != 0 || len(r.TransferEncoding) > 0 {
			rec.Header().Set("Connection", "close")
			writeError(rec, http.StatusRequestEntityTooLarge, Error{Error: "a request has no body here"})
			return
		}
		// ServeMux would redirect /../x and //x to the clean path; no
		// path here has those.
		if p := r.URL.Path; p == "" || p[0] != '/' || (path.Clean(p) != p && path.Clean(p)+"/" != p) {
			writeError(rec, http.StatusNotFound, Error{Error: "no such path: " + strconv.Quote(p) + " is not a clean path"})
			return
		}
		r.Body = http.MaxBytesReader(rec, r.Body, 0)
		select {
		case s.sem <- struct{}{}:
			defer func() { <-s.sem }()
		default:
			rec.Header().Set("Retry-After", "1")
			writeError(rec, http.StatusServiceUnavailable, Error{Error: "too many requests at once; retry"})
			return
		}
		deadline := time.Now().Add(s.opts.RequestTimeout)
		_ = http.NewResponseController(rec).SetWriteDeadline(deadline)
		ctx, cancel := context.WithDeadline(r.Context(), deadline)
		defer cancel()
		rec.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(rec, r.WithContext(ctx))
	})
}

// tooLong answers a request whose time ran out before its answer was
// made.
func tooLong(w http.ResponseWriter) {
	writeError(w, http.StatusServiceUnavailable, Error{Error: "the request took too long"})
}

// route names a request's route for metrics, never its path's values.
func route(r *http.Request) string {
	p := r.URL.Path
	switch {
	case p == "/":
		return "/"
	case strings.HasPrefix(p, "/api/"+APIVersion+"/profiles/"):
		return "/api/" + APIVersion + "/profiles/{name}"
	}
	for _, known := range []string{"/healthz", "/readyz", "/metrics", "/api/" + APIVersion + "/profiles", "/api/" + APIVersion + "/nodes", "/api/" + APIVersion + "/recommend", "/api/" + APIVersion + "/estimate"} {
		if p == known {
			return p
		}
	}
	return "other"
}

type statusRecorder struct {
	http.ResponseWriter
	code int
	once sync.Once
	// failed says a write failed: the client went.
	failed bool
}

func (r *statusRecorder) WriteHeader(code int) {
	r.once.Do(func() { r.code = code })
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	r.once.Do(func() {})
	n, err := r.ResponseWriter.Write(b)
	if err != nil {
		r.failed = true
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the connection.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	if !s.ready.Load() {
		http.Error(w, "not ready: the cluster's nodes and pods are still being listed", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

func (s *Server) withView(h func(http.ResponseWriter, *http.Request, *view)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v := s.cur.Load()
		if v == nil {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, Error{Error: "not ready: the cluster's nodes and pods are still being listed"})
			return
		}
		h(w, r, v)
	}
}

// serveEncoded answers with e, gzipped where the client accepts it, or
// 304 when the client has it. The gzipped answer has its own ETag, as
// another representation.
func serveEncoded(w http.ResponseWriter, r *http.Request, e encoded, contentType string) {
	h := w.Header()
	body, etag := e.body, e.etag
	if len(e.body) > gzipOver {
		h.Set("Vary", "Accept-Encoding")
	}
	if e.gz != nil {
		if acceptsGzip(r) {
			body, etag = e.gz, strings.TrimSuffix(e.etag, `"`)+`-gz"`
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("ETag", etag)
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-cache")
	}
	if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, etag) {
		h.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.ReplaceAll(strings.TrimSpace(params), " ", "") != "q=0" {
			return true
		}
	}
	return false
}

func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

func writeError(w http.ResponseWriter, code int, e Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(e)
}

// nodes is the node view with the CLI's filters: type, sharing, status
// (comma-separated) and sort-by. The unfiltered view is encoded once per
// count; a filtered one is put together from the nodes' encoded rows once
// per count and filter, and kept for the next request (nodeViews).
func (s *Server) nodes(w http.ResponseWriter, r *http.Request, v *view) {
	q := r.URL.Query()
	f := inventory.Filter{Types: list(q, "type"), Sharing: list(q, "sharing"), Status: list(q, "status")}
	sortBy := q.Get("sort-by")
	if sortBy == "" {
		sortBy = "name"
	}
	if !slices.Contains(inventory.SortKeys, sortBy) {
		writeError(w, http.StatusBadRequest, Error{Error: fmt.Sprintf("unknown sort key %q: use one of %s", q.Get("sort-by"), strings.Join(inventory.SortKeys, ", ")), Field: "sort-by"})
		return
	}
	shown, scope := s.podScope(r, v)
	if len(f.Types)+len(f.Sharing)+len(f.Status) == 0 && sortBy == "name" && shown == nil {
		serveEncoded(w, r, v.nodes, "application/json")
		return
	}
	key := filterKey(f, sortBy) + scope
	e, err := v.filtered.get(r.Context(), key, s.build, func() *cachedView {
		inv := v.inv.Select(f)
		_ = inv.Sort(sortBy)
		body, _ := nodesJSON(v, inv, v.rows, shown)
		sum := sha256.Sum256([]byte(key))
		return &cachedView{encoded: encoded{body: body,
			etag: strings.TrimSuffix(v.nodes.etag, `"`) + "-" + hex.EncodeToString(sum[:6]) + `"`}}
	})
	if err != nil {
		tooLong(w)
		return
	}
	serveEncoded(w, r, e.served(r), "application/json")
}

// filterKey is a node view's filter, normalized: each list lower-cased,
// sorted and without repeats (Filter.Match ignores case and order).
func filterKey(f inventory.Filter, sortBy string) string {
	norm := func(l []string) string {
		out := make([]string, len(l))
		for i, x := range l {
			out[i] = strings.ToLower(x)
		}
		slices.Sort(out)
		return strings.Join(slices.Compact(out), ",")
	}
	return "type=" + norm(f.Types) + "&sharing=" + norm(f.Sharing) + "&status=" + norm(f.Status) + "&sort-by=" + sortBy
}

func list(q map[string][]string, key string) []string {
	var out []string
	for _, v := range q[key] {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// recommend is accelc recommend with its flags as query parameters.
func (s *Server) recommend(w http.ResponseWriter, r *http.Request, v *view) {
	q := r.URL.Query()
	a := estimate.Asked{
		MinMemory: q.Get("min-memory"), PreferArch: q.Get("prefer-arch"), Model: q.Get("model"),
		MinThroughput: q.Get("min-throughput"), MaxCost: q.Get("max-cost"), Team: q.Get("team"), GPUs: 1,
	}
	if g := q.Get("gpus"); g != "" {
		n, err := strconv.Atoi(g)
		if err != nil || n < 1 {
			writeError(w, http.StatusBadRequest, Error{Error: fmt.Sprintf("%q: write a positive number of GPUs per replica", g), Field: "gpus"})
			return
		}
		a.GPUs = n
	}
	needs, err := estimate.ParseNeeds(a, s.model.Load())
	if ne := (*estimate.NeedError)(nil); errors.As(err, &ne) {
		writeError(w, http.StatusBadRequest, Error{Error: ne.Err.Error(), Field: ne.Field})
		return
	} else if err != nil {
		writeError(w, http.StatusBadRequest, Error{Error: err.Error()})
		return
	}
	rec := estimate.Recommend(&v.doc, needs)
	serveFresh(w, r, mustJSON(recommendResponse{Meta: v.meta(), Recommendation: rec}))
}

// estimate is accelc estimate with its flags as query parameters: params
// and tokens (required), precision, mfu, gpus and model; profile keeps
// one profile's estimates.
func (s *Server) estimate(w http.ResponseWriter, r *http.Request, v *view) {
	q := r.URL.Query()
	bad := func(field, format string, a ...any) {
		writeError(w, http.StatusBadRequest, Error{Error: fmt.Sprintf(format, a...), Field: field})
	}
	t := estimate.Training{Precision: "bf16", MFU: estimate.DefaultMFU, GPUs: 1, Model: q.Get("model")}
	for _, c := range []struct {
		field string
		into  *float64
	}{{"params", &t.Params}, {"tokens", &t.Tokens}} {
		raw := q.Get(c.field)
		if raw == "" {
			bad(c.field, "%s is required: the model's size and the tokens it trains on, such as ?params=7B&tokens=20B", c.field)
			return
		}
		n, err := estimate.ParseCount(raw)
		if err != nil {
			bad(c.field, "%v", err)
			return
		}
		*c.into = n
	}
	if p := q.Get("precision"); p != "" {
		if p = strings.ToLower(p); p != "bf16" && p != "fp16" {
			bad("precision", "%q: write bf16 or fp16", q.Get("precision"))
			return
		}
		t.Precision = p
	}
	if m := q.Get("mfu"); m != "" {
		f, err := strconv.ParseFloat(m, 64)
		if err != nil || f <= 0 || f > 1 {
			bad("mfu", "%q: give a share of peak above 0 and at most 1, such as 0.4", m)
			return
		}
		t.MFU = f
	}
	if g := q.Get("gpus"); g != "" {
		n, err := strconv.Atoi(g)
		if err != nil || n < 1 {
			bad("gpus", "%q: write a positive number of GPUs for the run", g)
			return
		}
		t.GPUs = n
	}
	es := estimate.Train(&v.doc, t)
	if name := q.Get("profile"); name != "" {
		if _, ok := v.byProfile[name]; !ok {
			bad("profile", "no profile %q: GET /api/%s/profiles lists them", name, APIVersion)
			return
		}
		es = slices.DeleteFunc(es, func(e estimate.Estimate) bool { return e.Profile != name })
	}
	if es == nil {
		es = []estimate.Estimate{}
	}
	serveFresh(w, r, mustJSON(estimateResponse{
		Meta: v.meta(), Params: t.Params, Tokens: t.Tokens, Precision: t.Precision, GPUs: t.GPUs, MFU: t.MFU,
		MemoryPerGPUGB: t.MemoryPerGPUGB(), Estimates: es,
	}))
}

// ListenAndServe serves on addr until ctx ends, then shuts down
// gracefully: requests in flight get grace to finish. The listener's
// address goes to ready before serving.
func (s *Server) ListenAndServe(ctx context.Context, addr string, grace time.Duration, ready func(net.Addr)) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      s.opts.RequestTimeout + 5*time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	l = limitConns(l, srv, s.opts.MaxConnections)
	if s.opts.TLS != nil {
		l = tls.NewListener(l, s.opts.TLS)
	}
	if ready != nil {
		ready(l.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// limitConns caps l at max connections open at once, and turns srv's
// keep-alive off while three quarters of them are open: a connection
// costs its buffers and goroutine (some 10 KiB) whether or not it asks
// anything, so clients that only hold connections open cannot grow the
// process either.
func limitConns(l net.Listener, srv *http.Server, max int) net.Listener {
	var open atomic.Int64
	srv.ConnState = func(_ net.Conn, state http.ConnState) {
		switch state {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		default:
			return
		}
		srv.SetKeepAlivesEnabled(open.Load() < int64(max*3/4))
	}
	return &connLimit{Listener: l, slots: make(chan struct{}, max), done: make(chan struct{})}
}

type connLimit struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
}

func (l *connLimit) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *connLimit) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// metrics are the server's Prometheus metrics, in a registry of its own.
type metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.HistogramVec
	lag       prometheus.Histogram
	count     prometheus.Histogram
	available *prometheus.GaugeVec
	nodes     *prometheus.GaugeVec
	profile   *prometheus.GaugeVec
	pending   *prometheus.GaugeVec
	updated   prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "accelc_serve_request_duration_seconds", Help: "Time to answer a request, by route and status code.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}, []string{"route", "code"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "accelc_serve_update_lag_seconds", Help: "From the first change the informers saw to the catalog that counts it.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2, 5, 10},
		}),
		count: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "accelc_serve_count_duration_seconds", Help: "Time to classify the nodes and count the catalog once.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1},
		}),
		available: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "accelc_accelerators_available", Help: "Accelerator devices available now, by type (allocatable on Ready nodes less what pods hold)."}, []string{"accelerator_type"}),
		nodes:     prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "accelc_accelerator_nodes", Help: "Nodes by accelerator type."}, []string{"accelerator_type"}),
		profile:   prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "accelc_profile_available", Help: "Devices available now to each hardware profile."}, []string{"profile"}),
		pending:   prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "accelc_profile_workloads_pending", Help: "Kueue Workloads pending in each hardware profile's queue (profiles that schedule through Kueue, when Workloads can be read)."}, []string{"profile"}),
		updated:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "accelc_serve_updated_timestamp_seconds", Help: "When the catalog was last counted."}),
	}
	m.reg.MustRegister(m.requests, m.lag, m.count, m.available, m.nodes, m.profile, m.pending, m.updated,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) request(route string, code int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Observe(d.Seconds())
}

func (m *metrics) observe(v *view, begin, since time.Time) {
	m.count.Observe(time.Since(begin).Seconds())
	if !since.IsZero() {
		m.lag.Observe(time.Since(since).Seconds())
	}
	m.updated.Set(float64(v.updated.Unix()))
	m.available.Reset()
	m.nodes.Reset()
	for _, t := range v.inv.Summary() {
		avail := t.Allocatable
		if t.Available != nil {
			avail = *t.Available
		}
		m.available.WithLabelValues(t.AcceleratorType).Set(float64(avail))
		m.nodes.WithLabelValues(t.AcceleratorType).Set(float64(t.Nodes))
	}
	m.profile.Reset()
	for _, p := range v.doc.Profiles {
		m.profile.WithLabelValues(p.Name).Set(float64(p.Available))
	}
	m.pending.Reset()
	for name, w := range v.waiting {
		if w.Pending != nil {
			m.pending.WithLabelValues(name).Set(float64(*w.Pending))
		}
	}
}
