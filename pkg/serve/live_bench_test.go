package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/livetest"
	"github.com/accelc/accelc/internal/nodegen"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/serve"
)

// benchScale is a live benchmark's size: make bench-live sets
// ACCELC_BENCH_LIVE=1 for the full one; make bench-once runs it small so
// that it does not rot. ACCELC_BENCH_NODES and ACCELC_BENCH_PODS (pods in
// all) change the size of either.
func benchScale(b *testing.B, nodes, pods, clients, each int) (int, int, int, int) {
	if os.Getenv("ACCELC_BENCH_LIVE") == "" {
		nodes, pods, clients, each = max(nodes/100, 20), max(pods/100, 100), max(clients/10, 5), 5
	}
	for env, into := range map[string]*int{"ACCELC_BENCH_NODES": &nodes, "ACCELC_BENCH_PODS": &pods} {
		if v := os.Getenv(env); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				b.Fatalf("%s=%q: write a positive number", env, v)
			}
			*into = n
		}
	}
	return nodes, pods, clients, each
}

// BenchmarkServeLive is `accelc serve --live`, a process of its own (so
// that its resident memory is its own), against a real API server holding
// 5,000 nodes and 50,000 pods, half of them holding a GPU (livetest.Fill),
// with hetero-prod's catalog and the memory limit accelc renders for that
// size (render.CatalogServiceMemory; the process's Go memory limit is set
// from it as from its container's cgroup). It reports the time until
// ready, the resident memory then and its peak so far (the lists), then
// 100 clients at once (keep-alive, gzip) on /api/v1/profiles, on the page,
// on the node view and on a filtered node view, beside the same clients
// reading the rendered catalog ConfigMap from the API server (what users
// read without serve), in turns (a burst of 100 on each, 20 times), so
// that the load from elsewhere on the machine falls on every one alike:
// each one's p99, and the peak resident memory under that load. It fails
// if the peak, at start or under load, is over the limit.
// make bench-live runs it at that size (ACCELC_BENCH_LIVE=1: filling the
// server takes minutes); make bench-once at a hundredth.
func BenchmarkServeLive(b *testing.B) {
	nodes, pods, clients, each := benchScale(b, 5000, 50000, 100, 20)
	ctx := b.Context()
	accelcBin := buildAccelc(b)
	cp := controlplane.Start(b)
	cfg := cp.RESTConfig()
	cfg.QPS, cfg.Burst = 5000, 5000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	begin := time.Now()
	livetest.Fill(ctx, b, cs, nodes, max(pods/nodes, 1))
	b.Logf("filled the API server with %d nodes and %d pods in %s", nodes, nodes*max(pods/nodes, 1), time.Since(begin).Round(time.Second))

	const dir = "../../examples/clusters/hetero-prod"
	res, err := accelc.Cluster(ctx, dir, accelc.Options{Stages: accelc.Rendered})
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

	limit := render.CatalogServiceMemory(nodes)
	begin = time.Now()
	p := startServe(b, accelcBin, limit.Value(), dir, "--live", "--kubeconfig", cp.Kubeconfig())
	ready := time.Since(begin)
	// The clients are a team member, as the cluster knows them: the
	// catalog and the node view, and the pods of ml-research alone
	// (not those of "load", which hold the devices), so that every
	// answer is the cut one (ACCELC_BENCH_AUTH=false: the server asks
	// no one, to compare).
	if os.Getenv("ACCELC_BENCH_AUTH") != "false" {
		p.token = teamMember(b, cs, cm.Namespace)
	}
	readyRSS, startPeak := p.status(b, "VmRSS"), p.status(b, "VmHWM")
	p.resetPeak(b)

	// The endpoints take turns, a burst of every client at once each, so
	// that load from elsewhere on the machine falls on all of them alike.
	l := loader{clients: clients, each: each}
	lats := l.turns(b, []func() error{
		p.get("/api/v1/profiles"), p.get("/"), p.get("/api/v1/nodes"), p.get("/api/v1/nodes?status=Ready"),
		func() error {
			_, err := cs.CoreV1().ConfigMaps(cm.Namespace).Get(ctx, cm.Name, metav1.GetOptions{})
			return err
		},
	})
	loadPeak := p.status(b, "VmHWM")
	lag := p.updateLag(b, cs)
	// Reported after the loop, which forgets what was reported before it.
	b.ReportMetric(ready.Seconds(), "ready-s")
	b.ReportMetric(float64(lag.Microseconds())/1000, "update-lag-ms")
	b.ReportMetric(float64(limit.Value())/(1<<20), "limit-MiB")
	b.ReportMetric(readyRSS, "ready-RSS-MiB")
	b.ReportMetric(startPeak, "start-peak-RSS-MiB")
	b.ReportMetric(loadPeak, "load-peak-RSS-MiB")
	b.ReportMetric(p.status(b, "VmRSS"), "RSS-MiB")
	for i, name := range []string{"profiles", "page", "nodes", "ready-nodes", "configmap"} {
		b.ReportMetric(p99(lats[i]), name+"-p99-ms")
	}
	overLimit(b, max(startPeak, loadPeak), nodes, limit)
}

// BenchmarkServeNodeView is 250 clients at once on the unfiltered node
// view of a 20,000-node snapshot (`accelc serve --inventory`, a process
// of its own under the memory limit accelc renders for 20,000 nodes):
// p99, and the peak resident memory beside the limit (it fails if over).
// make bench-live runs it at that size; make bench-once at a hundredth.
func BenchmarkServeNodeView(b *testing.B) {
	nodes, _, clients, each := benchScale(b, 20000, 0, 250, 4)
	accelcBin := buildAccelc(b)
	inv := filepath.Join(b.TempDir(), "nodes.json")
	if err := os.WriteFile(inv, nodegen.List(nodegen.Generated(nodes)), 0o644); err != nil {
		b.Fatal(err)
	}
	limit := render.CatalogServiceMemory(nodes)
	p := startServe(b, accelcBin, limit.Value(), "../../examples/clusters/hetero-prod", "--inventory", inv)
	startPeak := p.status(b, "VmHWM")
	p.resetPeak(b)
	l := loader{clients: clients, each: each}
	lats := l.turns(b, []func() error{p.get("/api/v1/nodes"), p.get("/api/v1/nodes?status=Ready")})
	b.ReportMetric(p99(lats[0]), "nodes-p99-ms")
	b.ReportMetric(p99(lats[1]), "ready-nodes-p99-ms")
	loadPeak := p.status(b, "VmHWM")
	b.ReportMetric(float64(limit.Value())/(1<<20), "limit-MiB")
	b.ReportMetric(startPeak, "start-peak-RSS-MiB")
	b.ReportMetric(loadPeak, "load-peak-RSS-MiB")
	overLimit(b, max(startPeak, loadPeak), nodes, limit)
}

// overLimit fails the benchmark when the peak resident memory (MiB) is
// over the limit rendered for its size; of another build
// ($ACCELC_BENCH_BIN), or under a Go memory limit of the caller's
// ($GOMEMLIMIT), it only says so.
func overLimit(b *testing.B, peak float64, nodes int, limit resource.Quantity) {
	if peak*(1<<20) <= float64(limit.Value()) {
		return
	}
	report := b.Errorf
	if os.Getenv("ACCELC_BENCH_BIN") != "" || os.Getenv("GOMEMLIMIT") != "" {
		report = b.Logf
	}
	report("peak resident memory %.0f MiB is over the limit rendered for %d nodes, %s", peak, nodes, limit.String())
}

// buildAccelc builds accelc as make build does, into a temporary
// directory; $ACCELC_BENCH_BIN names another build to run instead (an
// older one, to compare).
func buildAccelc(b *testing.B) string {
	b.Helper()
	if bin := os.Getenv("ACCELC_BENCH_BIN"); bin != "" {
		return bin
	}
	out := filepath.Join(b.TempDir(), "accelc")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "../../cmd/accelc-core")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, msg)
	}
	return out
}

// served is accelc serve running as a process of its own.
type served struct {
	pid  int
	url  string
	http *http.Client
	// token, when set, is sent with every request but /readyz.
	token string
}

// do is one GET of path, with the token.
func (p *served) do(path string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, p.url+path, nil)
	if err != nil {
		return nil, err
	}
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	return p.http.Do(req)
}

// teamMember is the token of a service account that may list the
// HardwareProfiles (in profileNamespace), the nodes, and the pods of
// ml-research alone.
func teamMember(b *testing.B, cs kubernetes.Interface, profileNamespace string) string {
	ctx := b.Context()
	for _, ns := range []string{"ml-research", "bench-users"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	who := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "member", Namespace: "bench-users"}}
	for _, step := range []func() error{
		func() error {
			_, err := cs.CoreV1().ServiceAccounts("bench-users").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "member"}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "bench-member"}, Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"infrastructure.opendatahub.io"}, Resources: []string{"hardwareprofiles"}, Verbs: []string{"list"}},
				{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
			}}, metav1.CreateOptions{})
			return err
		},
	} {
		if err := step(); err != nil {
			b.Fatal(err)
		}
	}
	// Nodes everywhere; the profiles and pods only where a RoleBinding
	// says.
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "bench-nodes"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}},
	}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bench-nodes"},
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "bench-nodes"}, Subjects: who}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	for _, ns := range []string{profileNamespace, "ml-research"} {
		if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "bench-member"},
			RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "bench-member"}, Subjects: who}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	tr, err := cs.CoreV1().ServiceAccounts("bench-users").CreateToken(ctx, "member", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return tr.Status.Token
}

// startServe runs accelc serve with args on a free port, with the Go
// memory limit a container limited to limit bytes gives it
// (serve.MemoryLimit) unless $GOMEMLIMIT says otherwise, and waits until
// it is ready.
func startServe(b *testing.B, bin string, limit int64, args ...string) *served {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if os.Getenv("ACCELC_BENCH_AUTH") == "false" && slices.Contains(args, "--live") {
		args = append(args, "--auth=false")
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = os.Environ()
	if os.Getenv("GOMEMLIMIT") == "" {
		cmd.Env = append(cmd.Env, "GOMEMLIMIT="+strconv.FormatInt(serve.MemoryLimit(limit), 10))
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cancel(); _ = cmd.Wait() })
	// "serving <cluster> on http://<addr>/ (…)": the address; the rest of
	// stderr goes to the benchmark's log.
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if _, rest, ok := strings.Cut(line, " on http://"); ok && strings.HasPrefix(line, "serving ") {
				a, _, _ := strings.Cut(rest, "/")
				addr <- a
				continue
			}
			b.Log("accelc serve: " + line)
		}
	}()
	var a string
	select {
	case a = <-addr:
	case <-time.After(5 * time.Minute):
		b.Fatal("accelc serve did not listen within 5 minutes")
	}
	p := &served{pid: cmd.Process.Pid, url: "http://" + a,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1000, MaxConnsPerHost: 1000}}}
	for deadline := time.Now().Add(10 * time.Minute); ; {
		resp, err := p.http.Get(p.url + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			b.Fatal("accelc serve was not ready within 10 minutes")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// get is one GET of path, read to its end; a status other than 200 fails.
func (p *served) get(path string) func() error {
	return func() error {
		resp, err := p.do(path)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		return nil
	}
}

// updateLag is how long a pod bound to a node with 4 GPUs takes to show
// in the catalog: from its creation until the node view's available
// devices drop.
func (p *served) updateLag(b *testing.B, cs kubernetes.Interface) time.Duration {
	ctx := b.Context()
	avail := func() int {
		resp, err := p.do("/api/v1/nodes")
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
	begin := time.Now()
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
	return time.Since(begin)
}

// status is a field of the process's /proc status in MiB (VmRSS, VmHWM).
func (p *served) status(b *testing.B, field string) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				b.Fatal(err)
			}
			return float64(kb) / 1024
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, p.pid)
	return 0
}

// resetPeak restarts the process's peak resident memory (clear_refs 5).
func (p *served) resetPeak(b *testing.B) {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.pid), []byte("5"), 0o644); err != nil {
		b.Logf("the peak resident memory under load includes the start: %v", err)
	}
}

// loader is clients at once, each making each requests of every kind.
type loader struct{ clients, each int }

// turns runs b.N rounds of each bursts of every get in turn, every client
// making one request of the get at once, and gives each get's times.
func (l loader) turns(b *testing.B, gets []func() error) [][]time.Duration {
	lats := make([][]time.Duration, len(gets))
	for b.Loop() {
		for range l.each {
			for i, get := range gets {
				lats[i] = append(lats[i], l.burst(b, get)...)
			}
		}
	}
	return lats
}

// burst is every client making one request at once: their times.
func (l loader) burst(b *testing.B, get func() error) []time.Duration {
	var mu sync.Mutex
	var lats []time.Duration
	var wg sync.WaitGroup
	for range l.clients {
		wg.Go(func() {
			t0 := time.Now()
			if err := get(); err != nil {
				b.Error(err)
				return
			}
			mu.Lock()
			lats = append(lats, time.Since(t0))
			mu.Unlock()
		})
	}
	wg.Wait()
	return lats
}

// p99 is the 99th percentile of lats in milliseconds.
func p99(lats []time.Duration) float64 {
	if len(lats) == 0 {
		return 0
	}
	slices.Sort(lats)
	return float64(lats[len(lats)*99/100].Microseconds()) / 1000
}
