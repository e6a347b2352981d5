package live_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/livetest"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/inventory/live"
)

// benchKubeconfig names a cluster BenchmarkReadLive reads instead of
// filling one of its own (a real cluster, or one a previous run left up).
const benchKubeconfig = "ACCELC_BENCH_KUBECONFIG"

// BenchmarkReadLive lists and classifies 5,000 nodes and 50,000 pods on a
// real API server (NFR-001: under 2 s), the way Read does (default) and
// with each of its levers turned back, one at a time:
//
//   - quorum: resourceVersion "" instead of "0": the latest data, from
//     etcd page by page where the server cannot serve it from its watch
//     cache;
//   - json: JSON instead of protobuf;
//   - no-gzip: the transport's gzip off;
//   - typed: the clientset decoding each page whole into corev1 types,
//     asking as the default does (watch cache, protobuf, gzip);
//   - former: the clientset as Read was before issue 16 (quorum reads in
//     pages of 2000, corev1 types).
//
// Beside each: the fastest read (best-s: other work on the machine slows
// some reads more than others), the CPU the read cost this process
// (client-cpu-s) and the API server and etcd (server-cpu-s, when they run
// here), the bytes the server sent (wire-MB, through a counting proxy);
// and on the same server in the same run `kubectl get pods -A -o json`
// (kubectl-pods-s, and its bytes as kubectl-pods-MB), `kubectl get nodes
// -o json` (kubectl-s) and Read without pods (nodes-only-s). Filling the
// server takes a few minutes: make bench-live. With
// $ACCELC_BENCH_KUBECONFIG it reads that cluster instead.
func BenchmarkReadLive(b *testing.B) {
	const nodes, podsPerNode = 5000, 10
	ctx := b.Context()
	kubeconfig := os.Getenv(benchKubeconfig)
	server := ""
	if kubeconfig == "" {
		cp := controlplane.Start(b)
		cfg := cp.RESTConfig()
		cfg.QPS, cfg.Burst = 5000, 5000
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		begin := time.Now()
		livetest.Fill(ctx, b, cs, nodes, podsPerNode)
		b.Logf("created %d nodes and %d pods in %s", nodes, nodes*podsPerNode, time.Since(begin).Round(time.Second))
		kubeconfig = cp.Kubeconfig()
	}
	// The control plane's processes name its directory on their command
	// lines (the kubeconfig is in it).
	server = filepath.Dir(kubeconfig)
	cat, err := catalog.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	proxied, wire := countingProxy(b, kubeconfig)

	kubectl := kubectlSeconds(b, kubeconfig, "get", "nodes", "-o", "json")
	wire.Store(0)
	kubectlPods := kubectlSeconds(b, proxied, "get", "pods", "-A", "-o", "json")
	kubectlPodsMB := float64(wire.Load()) / 1e6
	nodesOnly := time.Now()
	want, err := live.Read(ctx, live.Options{Kubeconfig: kubeconfig, SkipPods: true})
	if err != nil {
		b.Fatal(err)
	}
	nodesOnlySec := time.Since(nodesOnly).Seconds()
	if os.Getenv(benchKubeconfig) == "" && len(want.Nodes) != nodes {
		b.Fatalf("read %d nodes of %d", len(want.Nodes), nodes)
	}
	var wantSummary []string

	type variant struct {
		name string
		read func(kubeconfig string) (*inventory.Snapshot, error)
	}
	var variants []variant
	for _, m := range live.Methods {
		variants = append(variants, variant{m.Name, func(kc string) (*inventory.Snapshot, error) {
			return live.ReadWith(ctx, live.Options{Kubeconfig: kc}, m.M)
		}})
	}
	variants = append(variants,
		variant{"typed", func(kc string) (*inventory.Snapshot, error) { return readClientset(ctx, kc, "0") }},
		variant{"former", func(kc string) (*inventory.Snapshot, error) { return readClientset(ctx, kc, "") }},
	)
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			// The bytes, once, through the proxy; the times without it.
			wire.Store(0)
			if _, err := v.read(proxied); err != nil {
				b.Fatal(err)
			}
			wireMB := float64(wire.Load()) / 1e6
			self, srv := cpuTimes(server)
			best := time.Duration(0)
			for b.Loop() {
				start := time.Now()
				snap, err := v.read(kubeconfig)
				if d := time.Since(start); best == 0 || d < best {
					best = d
				}
				if err != nil {
					b.Fatal(err)
				}
				inv := snap.Classify(cat, inventory.Options{})
				if len(inv.Nodes)+inv.OtherNodes != len(want.Nodes) || !inv.UsageKnown() {
					b.Fatalf("read %d accelerator nodes, usage known %v", len(inv.Nodes), inv.UsageKnown())
				}
				var summary []string
				for _, s := range inv.Summary() {
					summary = append(summary, s.String())
				}
				if wantSummary == nil {
					wantSummary = summary
				} else if !slices.Equal(summary, wantSummary) {
					b.Fatalf("%s read\n%s\nwhere the default read\n%s", v.name, strings.Join(summary, "\n"), strings.Join(wantSummary, "\n"))
				}
			}
			self2, srv2 := cpuTimes(server)
			n := float64(b.N)
			b.ReportMetric(best.Seconds(), "best-s")
			b.ReportMetric((self2-self).Seconds()/n, "client-cpu-s/op")
			if srv2 > 0 {
				b.ReportMetric((srv2-srv).Seconds()/n, "server-cpu-s/op")
			}
			b.ReportMetric(wireMB, "wire-MB")
			b.ReportMetric(kubectlPods, "kubectl-pods-s")
			b.ReportMetric(kubectlPodsMB, "kubectl-pods-MB")
			b.ReportMetric(kubectl, "kubectl-s")
			b.ReportMetric(nodesOnlySec, "nodes-only-s")
		})
	}
}

// readClientset reads as Read did before issue 16: the clientset, corev1
// types, pages of 2000 at resourceVersion rv.
func readClientset(ctx context.Context, kubeconfig, rv string) (*inventory.Snapshot, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = 50, 100
	cfg.Timeout = 60 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	type podResult struct {
		inUse map[string]map[string]int
		err   error
	}
	pods := make(chan podResult, 1)
	go func() {
		inUse := map[string]map[string]int{}
		opts := metav1.ListOptions{Limit: 2000, ResourceVersion: rv, FieldSelector: "status.phase!=Succeeded,status.phase!=Failed"}
		for {
			list, err := cs.CoreV1().Pods("").List(ctx, opts)
			if err != nil {
				pods <- podResult{nil, err}
				return
			}
			for i := range list.Items {
				p := &list.Items[i]
				if n := live.PodAcceleratorsReference(&p.Spec); n > 0 && p.Spec.NodeName != "" {
					if inUse[p.Spec.NodeName] == nil {
						inUse[p.Spec.NodeName] = map[string]int{}
					}
					inUse[p.Spec.NodeName][p.Namespace] += n
				}
			}
			if list.Continue == "" {
				pods <- podResult{inUse, nil}
				return
			}
			opts.Continue, opts.ResourceVersion = list.Continue, ""
		}
	}()
	snap := &inventory.Snapshot{Source: &inventory.Source{PodsCounted: true}}
	opts := metav1.ListOptions{Limit: 2000, ResourceVersion: rv}
	for {
		list, err := cs.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return nil, err
		}
		for i := range list.Items {
			snap.Nodes = append(snap.Nodes, live.RawFromNodeReference(&list.Items[i]))
		}
		if list.Continue == "" {
			break
		}
		opts.Continue, opts.ResourceVersion = list.Continue, ""
	}
	slices.SortFunc(snap.Nodes, func(a, b inventory.RawNode) int { return strings.Compare(a.Metadata.Name, b.Metadata.Name) })
	pr := <-pods
	if pr.err != nil {
		return nil, pr.err
	}
	for i := range snap.Nodes {
		if byNS := pr.inUse[snap.Nodes[i].Metadata.Name]; len(byNS) > 0 {
			inventory.SetInUse(&snap.Nodes[i], byNS)
		}
	}
	return snap, nil
}

// countingProxy is a TCP proxy to the API server of kubeconfig that counts
// the bytes the server sends; it returns a kubeconfig for the proxy (the
// server's certificate names 127.0.0.1, whatever the port).
func countingProxy(b *testing.B, kubeconfig string) (string, *atomic.Int64) {
	cfg, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		b.Fatal(err)
	}
	var server string
	if ctx, ok := cfg.Contexts[cfg.CurrentContext]; ok && cfg.Clusters[ctx.Cluster] != nil {
		server = cfg.Clusters[ctx.Cluster].Server
	}
	target := strings.TrimPrefix(server, "https://")
	if _, _, err := net.SplitHostPort(target); err != nil {
		b.Fatalf("the API server %q: %v", server, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	var count atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer s.Close()
				go func() { _, _ = io.Copy(s, c) }()
				_, _ = io.Copy(countingWriter{c, &count}, s)
			}()
		}
	}()
	cfg.Clusters[cfg.Contexts[cfg.CurrentContext].Cluster].Server = "https://" + l.Addr().String()
	path := filepath.Join(b.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		b.Fatal(err)
	}
	return path, &count
}

type countingWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// cpuTimes is the CPU this process has used, and the processes whose
// command line names dir (the control plane's etcd and kube-apiserver):
// 0 where there are none or no /proc.
func cpuTimes(dir string) (self, server time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
		if err != nil {
			continue
		}
		// After "(comm) ", utime and stime are the 12th and 13th fields,
		// in clock ticks (100 a second on Linux).
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		server += time.Duration(ut+st) * 10 * time.Millisecond
	}
	return self, server
}

// fill creates the generated nodes (status through the status subresource)
// and podsPerNode pods bound to each, half of them asking for a GPU.
// kubectlSeconds is the best of three runs of kubectl with args, its
// output thrown away; of one run for a list of pods (half a minute).
func kubectlSeconds(b *testing.B, kubeconfig string, args ...string) float64 {
	path, err := exec.LookPath("kubectl")
	if err != nil {
		b.Logf("no kubectl on PATH: kubectl %s takes 0 s", strings.Join(args, " "))
		return 0
	}
	runs := 3
	if slices.Contains(args, "pods") {
		runs = 1
	}
	best := 0.0
	for range runs {
		cmd := exec.Command(path, append([]string{"--kubeconfig", kubeconfig}, args...)...)
		devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		cmd.Stdout = devnull
		start := time.Now()
		err = cmd.Run()
		devnull.Close()
		if err != nil {
			b.Fatal(err)
		}
		if s := time.Since(start).Seconds(); best == 0 || s < best {
			best = s
		}
	}
	return best
}
