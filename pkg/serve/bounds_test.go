package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/inventory"
)

// rawRequest writes req as it is on a connection to srv and reads the
// answer: what a client that net/http would not let be written sends.
func rawRequest(t *testing.T, srv *httptest.Server, req string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = io.WriteString(conn, req)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// TestBodyRefusedWhateverItsEncoding: a GET with a body is 413, whether
// the body says its length or comes chunked (ContentLength -1).
func TestBodyRefusedWhateverItsEncoding(t *testing.T) {
	m, snap := example(t, "small-lab")
	srv := New(m, Static{Snap: snap}, Options{})
	srv.Update()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	for name, req := range map[string]string{
		"chunked":       "GET /api/v1/profiles HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"length":        "GET /api/v1/profiles HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
		"empty chunked": "GET /api/v1/profiles HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	} {
		assert.Equal(t, http.StatusRequestEntityTooLarge, rawRequest(t, ts, req).StatusCode, name)
	}
	assert.Equal(t, http.StatusOK, rawRequest(t, ts, "GET /api/v1/profiles HTTP/1.1\r\nHost: x\r\n\r\n").StatusCode)
}

// TestNoRedirectForUncleanPaths: /../x, //x and /./x are answered 404
// where they are asked, not redirected to a path ServeMux cleaned.
func TestNoRedirectForUncleanPaths(t *testing.T) {
	m, snap := example(t, "small-lab")
	srv := New(m, Static{Snap: snap}, Options{})
	srv.Update()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	for _, p := range []string{"/../x", "/../api/v1/profiles", "//api/v1/profiles", "/api/v1/./profiles", "/api/v1/profiles/../nodes", "/%2e%2e/x"} {
		resp := rawRequest(t, ts, "GET "+p+" HTTP/1.1\r\nHost: x\r\n\r\n")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, p)
		assert.Empty(t, resp.Header.Get("Location"), p)
	}
	// A trailing slash is clean: no such path, without a redirect either.
	resp := rawRequest(t, ts, "GET /api/v1/profiles/ HTTP/1.1\r\nHost: x\r\n\r\n")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Location"))
}

// TestClientGoneIsNotAServerError: a request whose client hung up is
// counted with code 499, never as the server's 503.
func TestClientGoneIsNotAServerError(t *testing.T) {
	m, snap := example(t, "small-lab")
	srv := New(m, Static{Snap: snap}, Options{})
	srv.Update()
	h := srv.Handler()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, p := range []string{"/api/v1/profiles", "/api/v1/nodes?status=Ready", "/api/v1/estimate?params=7B&tokens=20B"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, p, nil).WithContext(ctx))
	}
	// A write that fails: the connection went.
	h.ServeHTTP(failingWriter{httptest.NewRecorder()}, httptest.NewRequest(http.MethodGet, "/", nil))
	metrics := string(body(t, get(t, h, http.MethodGet, "/metrics", nil)))
	for _, route := range []string{"/api/v1/profiles", "/api/v1/nodes", "/api/v1/estimate", "/"} {
		assert.Contains(t, metrics, fmt.Sprintf(`accelc_serve_request_duration_seconds_count{code="499",route=%q} 1`, route))
	}
	assert.NotContains(t, metrics, `code="503"`)
}

type failingWriter struct{ *httptest.ResponseRecorder }

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// TestTimeoutDoesNotBuffer: a request whose time has run out before its
// answer was made is 503; one served from encoded bytes is written as
// it is (no handler in between holds a copy: the writer gets the
// server's own slice).
func TestTimeoutDoesNotBuffer(t *testing.T) {
	m, snap := example(t, "hetero-prod")
	srv := New(m, Static{Snap: snap}, Options{})
	srv.Update()
	h := srv.Handler()
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-ctx.Done()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/recommend?min-memory=80GB", nil).WithContext(ctx))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Contains(t, rec.Body.String(), "took too long")

	w := &sameSlice{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/api/v1/nodes", nil))
	require.Equal(t, http.StatusOK, w.Code)
	want := srv.cur.Load().nodes.body
	require.Len(t, w.writes, 1, "one write of the whole document")
	assert.Same(t, &want[0], &w.writes[0][0], "the encoded document itself, not a copy")
}

func queryOf(t *testing.T, q string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(q)
	require.NoError(t, err)
	return v
}

type sameSlice struct {
	*httptest.ResponseRecorder
	writes [][]byte
}

func (s *sameSlice) Write(b []byte) (int, error) {
	s.writes = append(s.writes, b)
	return s.ResponseRecorder.Write(b)
}

// TestFilteredNodeViews: a filtered view is the one encoding whole would
// give, made once per count and normalized filter (case, order and
// repeats do not make another), gzipped only for a client that asks,
// and a new count makes it again.
func TestFilteredNodeViews(t *testing.T) {
	m, _ := example(t, "hetero-prod")
	srv := New(m, Static{Snap: fleet(t, 300)}, Options{})
	srv.Update()
	h := srv.Handler()
	v := srv.cur.Load()

	// The unfiltered view, put together from rows, is what encoding/json
	// gives.
	assert.Equal(t, string(mustJSON(nodesResponse(v, v.inv))), string(v.nodes.body))
	for _, q := range []string{"status=Ready", "type=nvidia-a100-80gb&sort-by=available", "sort-by=gpus", "type=nope", "sharing=mig-mixed,exclusive&status=Ready,NotReady"} {
		f := inventory.Filter{Types: list(queryOf(t, q), "type"), Sharing: list(queryOf(t, q), "sharing"), Status: list(queryOf(t, q), "status")}
		inv := v.inv.Select(f)
		sortBy := queryOf(t, q).Get("sort-by")
		if sortBy == "" {
			sortBy = "name"
		}
		require.NoError(t, inv.Sort(sortBy))
		r := get(t, h, http.MethodGet, "/api/v1/nodes?"+q, nil)
		require.Equal(t, http.StatusOK, r.StatusCode, q)
		assert.Empty(t, r.Header.Get("Content-Encoding"), q)
		got := body(t, r)
		assert.JSONEq(t, string(mustJSON(nodesResponse(v, inv))), string(got), q)
		assert.Equal(t, string(mustJSON(nodesResponse(v, inv))), string(got), q)
	}

	views := func() int {
		v.filtered.mu.Lock()
		defer v.filtered.mu.Unlock()
		return len(v.filtered.views)
	}
	before := views()
	a := get(t, h, http.MethodGet, "/api/v1/nodes?status=ready,Ready&sharing=exclusive", nil)
	b := get(t, h, http.MethodGet, "/api/v1/nodes?sharing=exclusive&status=Ready", nil)
	assert.Equal(t, a.Header.Get("ETag"), b.Header.Get("ETag"))
	assert.Equal(t, before+1, views(), "one view for one normalized filter")
	// The view by its exact key: another view's key (sharing=exclusive,
	// mig-mixed) holds "sharing=exclusive" too.
	v.filtered.mu.Lock()
	el := v.filtered.views[filterKey(inventory.Filter{Sharing: []string{"exclusive"}, Status: []string{"Ready"}}, "name")]
	v.filtered.mu.Unlock()
	require.NotNil(t, el)
	c := el.Value.(*cachedView)
	assert.Nil(t, c.zipped, "not gzipped while no client asked")
	z := get(t, h, http.MethodGet, "/api/v1/nodes?sharing=exclusive&status=Ready", map[string]string{"Accept-Encoding": "gzip"})
	assert.Equal(t, "gzip", z.Header.Get("Content-Encoding"))
	assert.NotNil(t, c.zipped)

	// 304 for the view the client has; a bad sort key is 400.
	assert.Equal(t, http.StatusNotModified, get(t, h, http.MethodGet, "/api/v1/nodes?status=Ready", map[string]string{"If-None-Match": get(t, h, http.MethodGet, "/api/v1/nodes?status=Ready", nil).Header.Get("ETag")}).StatusCode)
	var e Error
	bad := get(t, h, http.MethodGet, "/api/v1/nodes?sort-by=size", nil)
	assert.Equal(t, http.StatusBadRequest, bad.StatusCode)
	require.NoError(t, json.Unmarshal(body(t, bad), &e))
	assert.Equal(t, "sort-by", e.Field)

	// A new count, new views.
	srv.Update()
	assert.NotSame(t, v.filtered, srv.cur.Load().filtered)
}

// TestFilteredNodeViewsBounded: the views kept hold at most their
// budget of bytes, the least recently used pushed out first; one over
// the budget alone is served and not kept.
func TestFilteredNodeViewsBounded(t *testing.T) {
	n := newNodeViews(100)
	builders := make(chan struct{}, 1)
	view := func(size int) func() *cachedView {
		return func() *cachedView { return &cachedView{encoded: encoded{body: make([]byte, size)}} }
	}
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		_, err := n.get(ctx, k, builders, view(40))
		require.NoError(t, err)
	}
	assert.Len(t, n.views, 2)
	assert.NotContains(t, n.views, "a")
	assert.LessOrEqual(t, n.size, 100)
	c, err := n.get(ctx, "huge", builders, view(1000))
	require.NoError(t, err)
	assert.Len(t, c.body, 1000)
	assert.NotContains(t, n.views, "huge")
	assert.LessOrEqual(t, n.size, 100)

	// A request whose time ran out waiting to build gives up, and the
	// next one builds.
	builders <- struct{}{}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = n.get(cctx, "d", builders, view(10))
	assert.Error(t, err)
	<-builders
	c, err = n.get(ctx, "d", builders, view(10))
	require.NoError(t, err)
	assert.Len(t, c.body, 10)
}

// pipeListener accepts one end of a new pipe each time, counting.
type pipeListener struct {
	accepted atomic.Int64
	closed   chan struct{}
}

func (p *pipeListener) Accept() (net.Conn, error) {
	select {
	case <-p.closed:
		return nil, net.ErrClosed
	default:
	}
	p.accepted.Add(1)
	c, _ := net.Pipe()
	return c, nil
}
func (p *pipeListener) Close() error   { close(p.closed); return nil }
func (p *pipeListener) Addr() net.Addr { return &net.TCPAddr{} }

// TestConnectionsCapped: past MaxConnections, a connection is accepted
// only once another closes; closing the listener ends a waiting Accept.
func TestConnectionsCapped(t *testing.T) {
	under := &pipeListener{closed: make(chan struct{})}
	l := limitConns(under, &http.Server{}, 2)
	c1, err := l.Accept()
	require.NoError(t, err)
	_, err = l.Accept()
	require.NoError(t, err)
	third := make(chan net.Conn)
	go func() {
		c, err := l.Accept()
		assert.NoError(t, err)
		third <- c
	}()
	assert.EqualValues(t, 2, under.accepted.Load(), "the third waits")
	require.NoError(t, c1.Close())
	require.NoError(t, c1.Close(), "a second Close frees nothing more")
	<-third
	assert.EqualValues(t, 3, under.accepted.Load())
	ended := make(chan error)
	go func() {
		_, err := l.Accept()
		ended <- err
	}()
	require.NoError(t, l.Close())
	assert.ErrorIs(t, <-ended, net.ErrClosed)
}
