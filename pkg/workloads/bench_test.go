package workloads_test

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/livetest"
	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/workloads"
)

// BenchmarkReadLive is ReadLive on a real API server holding
// $ACCELC_BENCH_PODS pods (default 50,000; livetest.Fill, ten a node)
// beside `kubectl get pods -A -o json` on the same server in the same run
// (kubectl-pods-s, the best of three, its output thrown away): as ReadLive
// asks (default), and with each lever turned (no-gzip, cache: the first
// page from the watch cache, whole; serial: no page asked for before the
// last is read). Beside each read: the fastest (best-s), the CPU it cost
// this process (client-cpu-s/op) and the heap the set holds once read
// (held-MB). Filling the server takes minutes: make bench-live runs it
// (ACCELC_BENCH_LIVE=1). With $ACCELC_BENCH_KUBECONFIG it reads that
// cluster instead.
func BenchmarkReadLive(b *testing.B) {
	kubeconfig := os.Getenv("ACCELC_BENCH_KUBECONFIG")
	if os.Getenv("ACCELC_BENCH_LIVE") == "" && kubeconfig == "" {
		b.Skip("fills an API server for minutes: make bench-live (ACCELC_BENCH_LIVE=1)")
	}
	pods := 50000
	if s := os.Getenv("ACCELC_BENCH_PODS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 10 {
			b.Fatalf("ACCELC_BENCH_PODS=%q: a number of pods, 10 or more", s)
		}
		pods = n
	}
	pods = pods / 10 * 10
	ctx := b.Context()
	if kubeconfig == "" {
		cp := controlplane.Start(b)
		cfg := cp.RESTConfig()
		cfg.QPS, cfg.Burst = 5000, 5000
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		begin := time.Now()
		livetest.Fill(ctx, b, cs, pods/10, 10)
		b.Logf("created %d nodes and %d pods in %s", pods/10, pods, time.Since(begin).Round(time.Second))
		kubeconfig = cp.Kubeconfig()
	}

	kubectl := kubectlPath(b)
	kubectlBest := 0.0
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	for range 3 {
		cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", kubeconfig, "get", "pods", "-A", "-o", "json")
		cmd.Stdout = devnull
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		if s := time.Since(start).Seconds(); kubectlBest == 0 || s < kubectlBest {
			kubectlBest = s
		}
	}
	b.Logf("kubectl get pods -A -o json: %.2fs", kubectlBest)

	opts := live.Options{Kubeconfig: kubeconfig}
	for _, m := range workloads.Methods {
		b.Run(m.Name, func(b *testing.B) {
			var set *workloads.Set
			var err error
			best := time.Duration(0)
			cpu := cpuTime()
			for b.Loop() {
				set = nil
				start := time.Now()
				set, err = workloads.ReadLiveWith(ctx, opts, m.M)
				if d := time.Since(start); best == 0 || d < best {
					best = d
				}
				if err != nil {
					b.Fatal(err)
				}
				if n := len(set.Pods()); os.Getenv("ACCELC_BENCH_KUBECONFIG") == "" && n != pods {
					b.Fatalf("read %d pods of %d", n, pods)
				}
			}
			b.StopTimer()
			spent := cpuTime() - cpu
			var m runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m)
			held := m.HeapAlloc
			n := len(set.Pods())
			set = nil
			runtime.GC()
			runtime.ReadMemStats(&m)
			b.ReportMetric(float64(n), "pods")
			b.ReportMetric(best.Seconds(), "best-s")
			b.ReportMetric(spent.Seconds()/float64(b.N), "client-cpu-s/op")
			b.ReportMetric((float64(held)-float64(m.HeapAlloc))/1e6, "held-MB")
			b.ReportMetric(kubectlBest, "kubectl-pods-s")
		})
	}
}

// cpuTime is the CPU this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
