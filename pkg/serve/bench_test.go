package serve

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/accelc/accelc/pkg/inventory"
)

// fleet is hetero-prod's snapshot grown to n nodes (its nodes copied
// under new names), with pods counted: every third node holds GPUs.
func fleet(b testing.TB, n int) *inventory.Snapshot {
	b.Helper()
	_, snap := example(b, "hetero-prod")
	out := &inventory.Snapshot{Source: &inventory.Source{Cluster: "bench", TakenAt: time.Unix(0, 0).UTC(), PodsCounted: true}}
	for i := 0; len(out.Nodes) < n; i++ {
		for _, raw := range snap.Nodes {
			if len(out.Nodes) == n {
				break
			}
			raw.Metadata.Name = fmt.Sprintf("%s-%04d", raw.Metadata.Name, i)
			raw.Metadata.Annotations = cloneMap(raw.Metadata.Annotations)
			if len(out.Nodes)%3 == 0 {
				inventory.SetInUse(&raw, map[string]int{"ml-research": 2})
			}
			out.Nodes = append(out.Nodes, raw)
		}
	}
	return out
}

// BenchmarkServe serves hetero-prod's catalog over a 5,000-node fleet on
// 127.0.0.1 and hammers it as 100 clients at once (keep-alive, gzip as
// browsers ask): p50 and p99 of the profiles endpoint, the page and the
// unfiltered node view (b.N rounds of 20 requests per client each); then
// the time one count of the fleet takes (the work behind every change the
// watcher sees), and the process's peak resident memory (the test binary's
// included).
func BenchmarkServe(b *testing.B) {
	m, _ := example(b, "hetero-prod")
	snap := fleet(b, 5000)
	srv := New(m, Static{Snap: snap}, Options{MaxInFlight: 1024})
	begin := time.Now()
	srv.Update()
	count := time.Since(begin)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	const clients, each = 100, 20
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	for _, path := range []string{"/api/v1/profiles", "/", "/api/v1/nodes"} {
		var (
			mu   sync.Mutex
			lats []time.Duration
			size int
		)
		b.Run(map[string]string{"/api/v1/profiles": "profiles", "/": "page", "/api/v1/nodes": "nodes"}[path], func(b *testing.B) {
			for b.Loop() {
				var wg sync.WaitGroup
				for range clients {
					wg.Go(func() {
						for range each {
							t0 := time.Now()
							resp, err := client.Get(ts.URL + path)
							if err != nil {
								b.Error(err)
								return
							}
							n, _ := io.Copy(io.Discard, resp.Body)
							_ = resp.Body.Close()
							d := time.Since(t0)
							if resp.StatusCode != http.StatusOK {
								b.Errorf("GET %s: %s", path, resp.Status)
								return
							}
							mu.Lock()
							lats = append(lats, d)
							size = int(n)
							mu.Unlock()
						}
					})
				}
				wg.Wait()
			}
			slices.Sort(lats)
			if len(lats) == 0 {
				return
			}
			b.ReportMetric(float64(lats[len(lats)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lats[len(lats)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(float64(size)/1024, "KiB/response")
		})
	}
	// One count: classify the fleet and count the catalog, encode every
	// answer and the page (what each change the watcher sees costs).
	b.Run("count", func(b *testing.B) {
		for b.Loop() {
			srv.Update()
		}
		b.ReportMetric(float64(len(snap.Nodes)), "nodes")
		b.ReportMetric(float64(count.Microseconds())/1000, "first-count-ms")
		if hwm := peakRSS(); hwm > 0 {
			b.ReportMetric(hwm, "peak-RSS-MB")
		}
	})
}

// peakRSS is the process's peak resident memory in MB (VmHWM), 0 where
// /proc does not say.
func peakRSS() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err == nil {
				return float64(kb) / 1024
			}
		}
	}
	return 0
}
