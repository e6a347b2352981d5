package serve

// The routes: the HTTP handler, its guard (concurrency, time, methods,
// metrics) and the handlers that compute their answer per request.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/accelc/accelc/pkg/estimate"
	"github.com/accelc/accelc/pkg/inventory"
)

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
		body, _ := nodesJSON(v, inv, v.row, shown)
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
	serveFresh(w, r, mustJSON(estimateResponse{Meta: v.meta(), Report: estimate.ReportOf(t, es)}))
}
