package serve

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// example loads an example cluster's model and snapshot.
func example(t testing.TB, name string) (*compile.Model, *inventory.Snapshot) {
	t.Helper()
	dir := filepath.Join("../../examples/clusters", name)
	res, err := accelc.Cluster(context.Background(), dir, accelc.Options{})
	require.NoError(t, err)
	snap, err := inventory.ReadSnapshot(filepath.Join(dir, "inventory.json"))
	require.NoError(t, err)
	return res.Model, snap
}

// counted is the snapshot with pods counted: hold GPUs on the first node
// of each type that has any allocatable.
func counted(snap *inventory.Snapshot, hold int) *inventory.Snapshot {
	out := *snap
	out.Source = &inventory.Source{Cluster: "test", TakenAt: time.Unix(0, 0).UTC(), PodsCounted: true}
	out.Nodes = append([]inventory.RawNode(nil), snap.Nodes...)
	for i := range out.Nodes {
		n := &out.Nodes[i]
		n.Metadata.Annotations = cloneMap(n.Metadata.Annotations)
		if i%3 == 0 {
			inventory.SetInUse(n, map[string]int{"ml-research": hold})
		}
	}
	return &out
}

func get(t *testing.T, h http.Handler, method, path string, header map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, r *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	return b
}

// TestResponsesAreDocumented serves every example, as a snapshot and
// with pods counted, and checks every field of every answer against the
// docs/serve.md's api-fields.
func TestResponsesAreDocumented(t *testing.T) {
	doc := documentedFields(t)
	for _, ex := range []string{"hetero-prod", "gpu-pools", "small-lab"} {
		m, snap := example(t, ex)
		for _, src := range []Source{Static{Snap: snap}, Static{Snap: counted(snap, 2)}, queued{Static: Static{Snap: allInUse(snap)}, wls: premiumQueue()}} {
			srv := New(m, src, Options{Now: func() time.Time { return now }})
			srv.Update()
			h := srv.Handler()
			check := func(prefix, path string, want int) {
				r := get(t, h, http.MethodGet, path, nil)
				require.Equal(t, want, r.StatusCode, "%s %s", ex, path)
				checkDocumented(t, doc, prefix, body(t, r))
			}
			check("profiles", "/api/v1/profiles", 200)
			for _, p := range m.Profiles {
				check("profile", "/api/v1/profiles/"+p.Name, 200)
			}
			check("nodes", "/api/v1/nodes", 200)
			check("nodes", "/api/v1/nodes?status=Ready,Unschedulable&sort-by=type", 200)
			check("recommend", "/api/v1/recommend?min-memory=40GB&gpus=2", 200)
			check("recommend", "/api/v1/recommend?min-memory=2000GB", 200)
			check("error", "/api/v1/profiles/nope", 404)
			check("error", "/api/v1/recommend?min-memory=80", 400)
			check("error", "/api/v1/recommend?team=nobody", 400)
			check("error", "/api/v1/nodes?sort-by=colour", 400)
			check("estimate", "/api/v1/estimate?params=7B&tokens=20B&gpus=8", 200)
			check("estimate", "/api/v1/estimate?params=1.5B&tokens=2B&precision=fp16&mfu=0.5&profile="+m.Profiles[0].Name, 200)
			check("error", "/api/v1/estimate?params=7B", 400)
			check("error", "/api/v1/estimate?params=7B&tokens=20B&profile=nope", 400)
		}
	}
}

func TestServesTheCatalogLikeTheCLI(t *testing.T) {
	m, snap := example(t, "hetero-prod")
	srv := New(m, Static{Snap: counted(snap, 3)}, Options{})
	h := srv.Handler()
	r := get(t, h, http.MethodGet, "/readyz", nil)
	assert.Equal(t, http.StatusServiceUnavailable, r.StatusCode, "not ready before the first count")
	assert.Equal(t, http.StatusServiceUnavailable, get(t, h, http.MethodGet, "/api/v1/profiles", nil).StatusCode)
	srv.Update()
	assert.Equal(t, http.StatusOK, get(t, h, http.MethodGet, "/readyz", nil).StatusCode)

	var got profilesResponse
	r = get(t, h, http.MethodGet, "/api/v1/profiles", nil)
	require.NoError(t, json.Unmarshal(body(t, r), &got))
	assert.True(t, got.Meta.PodsCounted)
	assert.Equal(t, "hetero-prod", got.Meta.Cluster)
	// The same document accelc catalog prints, from the same inventory.
	res, err := accelc.Cluster(context.Background(), "../../examples/clusters/hetero-prod", accelc.Options{})
	require.NoError(t, err)
	want := renderCatalog(res.Model, counted(snap, 3).Classify(res.Model.Catalog, inventory.Options{Pins: res.Model.Pins}))
	require.Len(t, got.Profiles, len(want.Profiles))
	for i := range want.Profiles {
		assert.Equal(t, want.Profiles[i].Available, got.Profiles[i].Available, want.Profiles[i].Name)
		assert.Equal(t, want.Profiles[i].Summary, got.Profiles[i].Summary)
	}

	// ETags: 304 for what the client has, on the API and the page.
	for _, path := range []string{"/api/v1/profiles", "/api/v1/profiles/premium-gpu", "/api/v1/nodes", "/", "/?part=main", "/api/v1/nodes?type=nvidia-h200-141gb"} {
		r := get(t, h, http.MethodGet, path, nil)
		etag := r.Header.Get("ETag")
		require.NotEmpty(t, etag, path)
		assert.Equal(t, http.StatusNotModified, get(t, h, http.MethodGet, path, map[string]string{"If-None-Match": etag}).StatusCode, path)
		assert.Equal(t, http.StatusOK, get(t, h, http.MethodGet, path, map[string]string{"If-None-Match": `"other"`}).StatusCode, path)
	}
	head := get(t, h, http.MethodHead, "/api/v1/profiles", nil)
	assert.Equal(t, http.StatusOK, head.StatusCode)
	assert.Empty(t, body(t, head))

	// Read-only, no bodies, no unknown paths.
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		r := get(t, h, m, "/api/v1/profiles", nil)
		assert.Equal(t, http.StatusMethodNotAllowed, r.StatusCode, m)
		assert.Equal(t, "GET, HEAD", r.Header.Get("Allow"))
	}
	req := httptest.NewRequest(http.MethodGet, "/api/v1/profiles", strings.NewReader(strings.Repeat("x", 1<<20)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	assert.Equal(t, http.StatusNotFound, get(t, h, http.MethodGet, "/api/v2/profiles", nil).StatusCode)

	// The node view's filters are the CLI's.
	var nodes nodesBody
	require.NoError(t, json.Unmarshal(body(t, get(t, h, http.MethodGet, "/api/v1/nodes?type=nvidia-h200-141gb", nil)), &nodes))
	require.NotEmpty(t, nodes.Nodes)
	for _, n := range nodes.Nodes {
		assert.Equal(t, "nvidia-h200-141gb", n.AcceleratorType)
	}
	// recommend takes the CLI's parameters and says which is wrong.
	var e Error
	require.NoError(t, json.Unmarshal(body(t, get(t, h, http.MethodGet, "/api/v1/recommend?max-cost=free", nil)), &e))
	assert.Equal(t, "max-cost", e.Field)
	var rec2 recommendResponse
	require.NoError(t, json.Unmarshal(body(t, get(t, h, http.MethodGet, "/api/v1/recommend?min-memory=80GB&prefer-arch=Hopper&team=ml-research", nil)), &rec2))
	require.NotNil(t, rec2.Best)
	assert.Equal(t, "nvidia-h200-141gb", rec2.Best.Type)

	// Metrics: availability per type and profile, request latencies.
	metrics := string(body(t, get(t, h, http.MethodGet, "/metrics", nil)))
	for _, want := range []string{
		`accelc_accelerators_available{accelerator_type="nvidia-h200-141gb"}`,
		`accelc_profile_available{profile="premium-gpu"}`,
		`accelc_serve_request_duration_seconds_bucket{code="304",route="/api/v1/profiles"`,
		`accelc_serve_count_duration_seconds_count 1`,
	} {
		assert.Contains(t, metrics, want)
	}
}

func TestPage(t *testing.T) {
	m, snap := example(t, "hetero-prod")
	srv := New(m, Static{Snap: snap}, Options{Refresh: 750 * time.Millisecond})
	srv.Update()
	page := string(body(t, get(t, srv.Handler(), http.MethodGet, "/", nil)))
	for _, want := range []string{
		`<title>Accelerators of hetero-prod</title>`,
		`data-profile="premium-gpu" data-available="32"`,
		`data-refresh="750"`,
		`fetch("?part=main"`,
		`data-type="nvidia-h200-141gb"`,
		`Needs attention`,
		`gpu-unlabelled-02`, // of unknown type
	} {
		assert.Contains(t, page, want)
	}
	// No external assets: the page works air-gapped.
	for _, ref := range []string{"http://", "https://", "src=", "<link"} {
		assert.NotContains(t, page, ref)
	}
	part := string(body(t, get(t, srv.Handler(), http.MethodGet, "/?part=main", nil)))
	assert.Contains(t, part, `data-profile="premium-gpu"`)
	assert.NotContains(t, part, "<html")
}

// changing is a source whose snapshot the test changes.
type changing struct {
	mu      sync.Mutex
	snap    *inventory.Snapshot
	changed chan struct{}
}

func (c *changing) Snapshot() (*inventory.Snapshot, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap, time.Now()
}
func (c *changing) Changed() <-chan struct{} { return c.changed }
func (c *changing) Synced() bool             { return true }
func (c *changing) Warnings() []string       { return nil }

func (c *changing) set(s *inventory.Snapshot) {
	c.mu.Lock()
	c.snap = s
	c.mu.Unlock()
	c.changed <- struct{}{}
}

// TestFollowsChanges: a change of the source is counted after the
// debounce, and the ETag changes with it.
func TestFollowsChanges(t *testing.T) {
	m, snap := example(t, "hetero-prod")
	src := &changing{snap: counted(snap, 0), changed: make(chan struct{}, 1)}
	srv := New(m, src, Options{Debounce: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Run(ctx)
	h := srv.Handler()
	available := func() (int, string) {
		r := get(t, h, http.MethodGet, "/api/v1/profiles/premium-gpu", nil)
		if r.StatusCode != http.StatusOK {
			return -1, ""
		}
		var p profileResponse
		require.NoError(t, json.Unmarshal(body(t, r), &p))
		return p.Profile.Available, r.Header.Get("ETag")
	}
	require.Eventually(t, func() bool { n, _ := available(); return n >= 0 }, 5*time.Second, 10*time.Millisecond)
	before, etag := available()
	src.set(counted(snap, 4))
	require.Eventually(t, func() bool { n, _ := available(); return n < before }, 5*time.Second, 10*time.Millisecond)
	_, etag2 := available()
	assert.NotEqual(t, etag, etag2)
	metrics := string(body(t, get(t, h, http.MethodGet, "/metrics", nil)))
	assert.Contains(t, metrics, "accelc_serve_update_lag_seconds_count")
}

// TestConcurrencyCap: past MaxInFlight, 503 with Retry-After.
func TestConcurrencyCap(t *testing.T) {
	m, snap := example(t, "small-lab")
	srv := New(m, Static{Snap: snap}, Options{MaxInFlight: 1})
	srv.Update()
	srv.sem <- struct{}{} // one request in flight
	r := get(t, srv.Handler(), http.MethodGet, "/api/v1/profiles", nil)
	assert.Equal(t, http.StatusServiceUnavailable, r.StatusCode)
	assert.Equal(t, "1", r.Header.Get("Retry-After"))
	<-srv.sem
	assert.Equal(t, http.StatusOK, get(t, srv.Handler(), http.MethodGet, "/api/v1/profiles", nil).StatusCode)
}

// TestGracefulShutdown: a request in flight when the context ends is
// answered; the listener then closes.
func TestGracefulShutdown(t *testing.T) {
	m, snap := example(t, "small-lab")
	srv := New(m, Static{Snap: snap}, Options{})
	srv.Update()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- srv.ListenAndServe(ctx, "127.0.0.1:0", 5*time.Second, func(a net.Addr) { addr <- a.String() })
	}()
	base := "http://" + <-addr
	resp, err := http.Get(base + "/api/v1/profiles")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	cancel()
	require.NoError(t, <-done)
	_, err = http.Get(base + "/healthz")
	assert.Error(t, err, "the listener is closed")
}

func renderCatalog(m *compile.Model, inv *inventory.Inventory) catalogdoc.Document {
	return render.Catalog(m, inv)
}

// TestGzip: a large answer goes gzipped to a client that accepts it, as
// another representation with its own ETag; the body is the same.
func TestGzip(t *testing.T) {
	m, snap := example(t, "hetero-prod")
	srv := New(m, Static{Snap: snap}, Options{})
	srv.Update()
	h := srv.Handler()
	plain := get(t, h, http.MethodGet, "/", nil)
	zipped := get(t, h, http.MethodGet, "/", map[string]string{"Accept-Encoding": "br, gzip"})
	require.Equal(t, "gzip", zipped.Header.Get("Content-Encoding"))
	assert.Empty(t, plain.Header.Get("Content-Encoding"))
	assert.Equal(t, "Accept-Encoding", zipped.Header.Get("Vary"))
	assert.NotEqual(t, plain.Header.Get("ETag"), zipped.Header.Get("ETag"))
	zr, err := gzip.NewReader(zipped.Body)
	require.NoError(t, err)
	unzipped, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, body(t, plain), unzipped)
	assert.Equal(t, http.StatusNotModified, get(t, h, http.MethodGet, "/", map[string]string{"Accept-Encoding": "gzip", "If-None-Match": zipped.Header.Get("ETag")}).StatusCode)
	assert.Empty(t, get(t, h, http.MethodGet, "/", map[string]string{"Accept-Encoding": "gzip;q=0"}).Header.Get("Content-Encoding"))
}

// TestPageOfALargeCluster: the page shows at most 50 nodes of a type and
// sends people to the node view for the rest.
func TestPageOfALargeCluster(t *testing.T) {
	m, _ := example(t, "hetero-prod")
	srv := New(m, Static{Snap: fleet(t, 2000)}, Options{})
	srv.Update()
	page := string(body(t, get(t, srv.Handler(), http.MethodGet, "/", nil)))
	assert.Contains(t, page, `data-type="nvidia-a100-80gb"`)
	assert.Regexp(t, `and \d+ more: <a href="api/v1/nodes\?type=nvidia-a100-80gb">the node view</a> lists them all`, page)
	assert.Less(t, strings.Count(page, "<tr>"), 6*50+10, "rows per type are bounded")
}
