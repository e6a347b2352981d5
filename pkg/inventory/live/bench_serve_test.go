package live_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/livetest"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/serve"
)

// BenchmarkServeLive is accelc serve against a real API server filled as
// BenchmarkReadLive fills it (5,000 nodes, 50,000 pods, half of them
// holding a GPU), with hetero-prod's catalog: the time until it is ready
// (informers synced and the first count in), then 100 clients at once
// (keep-alive, gzip) on the profiles endpoint and on the page, beside the
// same 100 clients reading the rendered catalog ConfigMap from the API
// server (what users read today) and one `kubectl get --raw` of it; how
// long a pod bound to a node takes to show in the catalog; and this
// process's peak resident memory (the server's informers and the
// benchmark's own clients). make bench-live runs it: filling the server
// takes minutes.
func BenchmarkServeLive(b *testing.B) {
	ctx := b.Context()
	cp := controlplane.Start(b)
	cfg := cp.RESTConfig()
	cfg.QPS, cfg.Burst = 5000, 5000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	begin := time.Now()
	livetest.Fill(ctx, b, cs, 5000, 10)
	b.Logf("filled the API server with 5,000 nodes and 50,000 pods in %s", time.Since(begin).Round(time.Second))

	res, err := accelc.Cluster(ctx, "../../../examples/clusters/hetero-prod", accelc.Options{Render: true})
	if err != nil {
		b.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(res.Tree["profiles/configmap-accelc-hardware-catalog.yaml"], &cm); err != nil {
		b.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cm.Namespace}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, &cm, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}

	model, err := accelc.Cluster(ctx, "../../../examples/clusters/hetero-prod", accelc.Options{SkipCheck: true, NoInventory: true})
	if err != nil {
		b.Fatal(err)
	}
	// The fill's garbage goes, and the peak resident memory restarts
	// (clear_refs 5), so that what is measured is the server's.
	runtime.GC()
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0o644)
	rssAtStart := 0.0
	if data, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
				rssAtStart = float64(kb) / 1024
			}
		}
	}
	begin = time.Now()
	w, err := serve.NewWatcher(serve.WatchOptions{Options: live.Options{Kubeconfig: cp.Kubeconfig()}})
	if err != nil {
		b.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		if err := w.Run(sctx); err != nil {
			b.Error(err)
		}
	}()
	srv := serve.New(model.Model, w, serve.Options{MaxInFlight: 1024})
	go srv.Run(sctx)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	for {
		resp, err := http.Get(ts.URL + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	firstReady := time.Since(begin)

	const clients, each = 100, 20
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	hammer := func(get func() error) (p50, p99 time.Duration) {
		var mu sync.Mutex
		var lats []time.Duration
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for range each {
					t0 := time.Now()
					if err := get(); err != nil {
						b.Error(err)
						return
					}
					mu.Lock()
					lats = append(lats, time.Since(t0))
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		slices.Sort(lats)
		return lats[len(lats)/2], lats[len(lats)*99/100]
	}
	httpGet := func(path string) func() error {
		return func() error {
			resp, err := hc.Get(ts.URL + path)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			return resp.Body.Close()
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for b.Loop() {
		p50, p99 := hammer(httpGet("/api/v1/profiles"))
		b.ReportMetric(ms(p50), "profiles-p50-ms")
		b.ReportMetric(ms(p99), "profiles-p99-ms")
		p50, p99 = hammer(httpGet("/"))
		b.ReportMetric(ms(p50), "page-p50-ms")
		b.ReportMetric(ms(p99), "page-p99-ms")
		p50, p99 = hammer(func() error {
			_, err := cs.CoreV1().ConfigMaps(cm.Namespace).Get(ctx, cm.Name, metav1.GetOptions{})
			return err
		})
		b.ReportMetric(ms(p50), "configmap-p50-ms")
		b.ReportMetric(ms(p99), "configmap-p99-ms")
	}
	b.ReportMetric(kubectlSeconds(b, cp.Kubeconfig(), "get", "--raw", "/api/v1/namespaces/"+cm.Namespace+"/configmaps/"+cm.Name)*1000, "kubectl-raw-ms")
	b.ReportMetric(firstReady.Seconds(), "first-ready-s")

	// A pod bound with 4 GPUs: how long until the catalog counts it.
	avail := func() int {
		resp, err := hc.Get(ts.URL + "/api/v1/nodes")
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var v struct {
			Summary []struct {
				Available *int `json:"available"`
			} `json:"summary"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			b.Fatal(err)
		}
		total := 0
		for _, s := range v.Summary {
			if s.Available != nil {
				total += *s.Available
			}
		}
		return total
	}
	before := avail()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil || len(nodes.Items) == 0 {
		b.Fatalf("no node to bind to: %v", err)
	}
	begin = time.Now()
	if _, err := cs.CoreV1().Pods("load").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "lag-probe"},
		Spec: corev1.PodSpec{NodeName: nodes.Items[0].Name, Containers: []corev1.Container{{Name: "app", Image: "app",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}}}}},
	}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	for avail() == before {
		if time.Since(begin) > time.Minute {
			b.Fatal("the catalog did not count a bound pod within a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.ReportMetric(ms(time.Since(begin)), "update-lag-ms")
	status := func(field string) float64 {
		data, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return 0
		}
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, field+":"); ok {
				if kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB"))); err == nil {
					return float64(kb) / 1024
				}
			}
		}
		return 0
	}
	b.ReportMetric(status("VmHWM"), "peak-RSS-MB")
	b.ReportMetric(status("VmRSS"), "RSS-MB")
	// What the server holds: the heap after a collection, returned to
	// the system.
	debug.FreeOSMemory()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	b.ReportMetric(float64(mem.HeapAlloc)/(1<<20), "heap-MB")
	b.ReportMetric(status("VmRSS"), "RSS-after-GC-MB")
	b.Logf("resident memory when the server started: %.0f MB (after the fill's garbage went)", rssAtStart)
}
