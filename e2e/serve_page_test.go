//go:build e2e

package e2e

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
)

// chromium is Debian's headless-capable browser (make browser).
const chromium = "/usr/bin/chromium"

// TestServePage runs `accelc serve --live` against a control plane with
// small-lab's nodes and looks at its page in a real headless browser
// (Debian's Chromium, driven over the DevTools protocol): it reads the
// L40S profile's availability, binds a pod with 2 GPUs to an L40S node on
// the API server, and sees the number the page shows drop, without a
// reload (the page refreshes itself), then rise when the pod is deleted.
// Every request the page makes goes to the server itself: no external
// asset. A screenshot is kept in $ACCELC_TEST_ARTIFACTS (default
// bin/test-artifacts).
func TestServePage(t *testing.T) {
	needChromium(t)
	s := smallLabServeSuite(t)
	s.ensureNamespaces(t, "lab")

	// Signing in is TestAccess's (the API and the page's shell, against a
	// real API server); here the page is read as anyone.
	base := s.serve(t, "examples/clusters/small-lab", "--live", "--auth=false", "--kubeconfig", s.cp.Kubeconfig(), "--refresh", "300ms")

	ctx := browser(t)
	var (
		mu       sync.Mutex
		requests []string
	)
	if err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	available := func() int {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('tr[data-profile="lab-l40s"]') || {dataset: {available: ""}}).dataset.available`))
		if err != nil {
			t.Fatalf("reading the page: %v", err)
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("the page shows %q for lab-l40s", v)
		}
		return n
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatalf("loading %s/: %v", base, err)
	}
	before := available()
	if before != 8 {
		t.Fatalf("the page shows %d L40S available, want 8 (two nodes of 4)", before)
	}
	waitFor := func(want int, what string) time.Duration {
		t.Helper()
		begin := time.Now()
		deadline := begin.Add(15 * time.Second)
		for time.Now().Before(deadline) {
			if available() == want {
				return time.Since(begin)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s: the page still shows %d L40S available, want %d (without a reload)", what, available(), want)
		return 0
	}

	unbind := s.bindL40SPod(t)
	dropped := waitFor(before-2, "a pod bound with 2 GPUs")
	t.Logf("the page shows %d L40S available, then %d %s after a pod with 2 GPUs was bound", before, before-2, dropped.Round(time.Millisecond))
	shot := screenshot(t, ctx, "serve-page.png")
	unbind()
	back := waitFor(before, "the pod deleted")
	t.Logf("and %d again %s after it was deleted; screenshot: %s", before, back.Round(time.Millisecond), shot)

	mu.Lock()
	defer mu.Unlock()
	u, _ := url.Parse(base)
	refreshes := 0
	for _, r := range requests {
		ru, err := url.Parse(r)
		if err != nil || ru.Host != u.Host {
			t.Errorf("the page asked for %s: everything it needs must come from the server (clusters are often air-gapped)", r)
		}
		if strings.Contains(r, "part=main") {
			refreshes++
		}
	}
	if refreshes == 0 {
		t.Error("the page never asked for its main part: it did not refresh itself")
	}
	t.Logf("%d requests, all to %s; %d of them the page refreshing itself", len(requests), u.Host, refreshes)
}

// serve starts `accelc serve` on a free 127.0.0.1 port, stops it by its
// process group when the test ends, waits until it is ready, and returns
// its base URL (serveProc).
func (s *suite) serve(t *testing.T, cluster string, args ...string) string {
	t.Helper()
	base, _ := s.serveProc(t, cluster, args...)
	return base
}

// smallLabServeSuite is a control plane with small-lab's nodes, for
// `accelc serve --live` (bin/accelc) to count.
func smallLabServeSuite(t *testing.T) *suite {
	t.Helper()
	root := repoRoot(t)
	s := &suite{root: root, work: t.TempDir(), accelc: program(t, root, filepath.Join("bin", "accelc"), "build")}
	s.cp = controlplane.Start(t)
	var err error
	if s.client, err = kubernetes.NewForConfig(s.cp.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	if s.dyn, err = dynamic.NewForConfig(s.cp.RESTConfig()); err != nil {
		t.Fatal(err)
	}
	s.createNodes(t, filepath.Join(root, "examples", "clusters", "small-lab", "inventory.json"), nil)
	return s
}

// bindL40SPod binds a pod holding 2 GPUs to the L40S node lab-l40s-01
// (namespace lab) and returns the function that deletes it.
func (s *suite) bindL40SPod(t *testing.T) (unbind func()) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "finetune", Namespace: "lab"}, Spec: corev1.PodSpec{
		NodeName: "lab-l40s-01",
		Containers: []corev1.Container{{Name: "c", Image: "registry.example/train:1", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(2, resource.DecimalSI)}}}},
	}}
	if _, err := s.client.CoreV1().Pods("lab").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if err := s.client.CoreV1().Pods("lab").Delete(t.Context(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatal(err)
		}
	}
}

// needChromium skips t without Debian's chromium, or fails it when
// CI=true.
func needChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no %s: make browser installs Debian's chromium", chromium)
		}
		t.Skipf("skipping: no %s: make browser", chromium)
	}
}

// browser starts a headless chromium with one tab, closed when t ends.
func browser(t *testing.T) context.Context {
	t.Helper()
	actx, cancel := chromedp.NewExecAllocator(t.Context(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 1600),
		chromedp.Flag("headless", "new"))...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	return ctx
}

// screenshot keeps the page as it is in the test's artifacts, as name.
func screenshot(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	dir := os.Getenv("ACCELC_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(repoRoot(t), "bin", "test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
