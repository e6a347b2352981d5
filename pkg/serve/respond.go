package serve

// Writing an answer: documents encoded once per count with their ETags
// and gzipped copies, conditional and gzipped requests, errors.

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

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

// tooLong answers a request whose time ran out before its answer was
// made.
func tooLong(w http.ResponseWriter) {
	writeError(w, http.StatusServiceUnavailable, Error{Error: "the request took too long"})
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
