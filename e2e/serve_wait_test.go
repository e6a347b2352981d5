//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
)

var workloadsResource = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}

// TestServeWait runs `accelc serve --live` for hetero-prod, whose profiles
// schedule through Kueue, against a control plane with hetero-prod's nodes
// and Kueue's Workload CRD (Kueue's own, v0.19.2), and reads the page in
// headless Chromium. Pods bound to the four H200 nodes hold all 32 of
// premium-gpu's GPUs, and two Workloads queued in ml-research's
// premium-gpu LocalQueue are pending, with the status Kueue writes when
// quota runs out: the page shows "0 available — 2 pending — wait
// unknown: …", as no run has finished. Then a run that took 20 minutes
// finishes and one admitted 5 minutes ago runs: the page, without a
// reload, shows about 55 minutes (the running one frees its place in 15,
// the first pending runs 20 from then, the second 20 more).
//
// Kueue's controller does not run: the Workloads are written as it writes
// them (conditions through the status subresource), so the times are the
// test's.
func TestServeWait(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no %s: make browser installs Debian's chromium", chromium)
		}
		t.Skipf("skipping: no %s: make browser", chromium)
	}
	crd := filepath.Join(repoRoot(t), "bin", "kueue-"+controlplane.KueueVersion, "crds", "kueue.x-k8s.io_workloads.yaml")
	if _, err := os.Stat(crd); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no Kueue CRDs: %v (make e2e-tools)", err)
		}
		t.Skipf("skipping: no Kueue CRDs: %v (make e2e-tools)", err)
	}
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
	ctx := t.Context()
	if _, err := controlplane.ApplyCRDs(ctx, s.dyn, crd); err != nil {
		t.Fatalf("installing Kueue's Workload CRD: %v", err)
	}
	s.createNodes(t, filepath.Join(root, "examples", "clusters", "hetero-prod", "inventory.json"), nil)
	s.ensureNamespaces(t, "ml-research", "ml-research-dev")

	// premium-gpu's H200s, all held.
	for _, node := range []string{"worker-node-17", "worker-node-18", "worker-node-19", "worker-node-20"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hold-" + node, Namespace: "ml-research"}, Spec: corev1.PodSpec{
			NodeName: node,
			Containers: []corev1.Container{{Name: "c", Image: "registry.example/train:1", Resources: corev1.ResourceRequirements{
				Limits: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(8, resource.DecimalSI)}}}},
		}}
		if _, err := s.client.CoreV1().Pods("ml-research").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	pending := waitConditions(waitCond("QuotaReserved", "False", "Pending", "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor nvidia-h200-141gb, 8 more needed", now))
	s.workload(t, "ml-research", "job-pretrain-a", pending, nil)
	s.workload(t, "ml-research-dev", "job-pretrain-b", pending, nil)

	base := s.serve(t, "examples/clusters/hetero-prod", "--live", "--kubeconfig", s.cp.Kubeconfig(), "--refresh", "300ms")

	actx, cancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 1600),
		chromedp.Flag("headless", "new"))...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(bctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatalf("loading %s/: %v", base, err)
	}
	line := func() string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[string](`(document.querySelector('tr[data-profile="premium-gpu"] .wait-line') || {textContent: ""}).textContent`))
		if err != nil {
			t.Fatalf("reading the page: %v", err)
		}
		return v
	}
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if line() == want {
				t.Logf("the page shows for premium-gpu: %q", want)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("the page shows for premium-gpu %q, want %q (without a reload)", line(), want)
	}
	waitFor("0 available — 2 pending — wait unknown: no finished run of this profile observed yet")

	admission := map[string]any{"clusterQueue": "ml-research.premium-gpu", "podSetAssignments": []any{map[string]any{
		"name": "main", "count": int64(1), "flavors": map[string]any{"nvidia.com/gpu": "nvidia-h200-141gb"},
		"resourceUsage": map[string]any{"nvidia.com/gpu": "8"},
	}}}
	admitted := func(at time.Time) []any {
		return []any{
			waitCond("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue ml-research.premium-gpu", at),
			waitCond("Admitted", "True", "Admitted", "The workload is admitted", at),
		}
	}
	s.workload(t, "ml-research", "job-pretrain-done", waitConditions(append(admitted(now.Add(-30*time.Minute)),
		waitCond("Finished", "True", "Succeeded", "Job finished successfully", now.Add(-10*time.Minute)))...), admission)
	s.workload(t, "ml-research", "job-pretrain-running", waitConditions(admitted(now.Add(-5*time.Minute))...), admission)
	waitFor("0 available — 2 pending — about 55 min")
	method, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.querySelector('tr[data-profile="premium-gpu"] .wait small').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if want := "median of 1 finished run of this profile, 20 min; 1 running, 2 pending ahead"; method != want {
		t.Errorf("the page gives the method %q, want %q", method, want)
	}
	t.Logf("and beneath it: %q", method)
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("ACCELC_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(root, "bin", "test-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "serve-wait.png"), png, 0o644)
	}
}

func waitCond(typ, status, reason, message string, at time.Time) any {
	return map[string]any{"type": typ, "status": status, "reason": reason, "message": message, "lastTransitionTime": at.Format(time.RFC3339)}
}

func waitConditions(cs ...any) []any { return cs }

// workload creates a Workload queued in the namespace's premium-gpu
// LocalQueue, then writes its status (conditions, and admission when
// given) through the status subresource, as Kueue does.
func (s *suite) workload(t *testing.T, ns, name string, conds []any, admission map[string]any) {
	t.Helper()
	ctx := t.Context()
	wl := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2",
		"kind":       "Workload",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"queueName": "premium-gpu",
			"podSets": []any{map[string]any{"name": "main", "count": int64(1), "template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never",
				"containers": []any{map[string]any{"name": "c", "image": "registry.example/train:1", "resources": map[string]any{
					"requests": map[string]any{"nvidia.com/gpu": "8"}, "limits": map[string]any{"nvidia.com/gpu": "8"}}}},
			}}}},
		},
	}}
	r := s.dyn.Resource(workloadsResource).Namespace(ns)
	created, err := r.Create(ctx, wl, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Workload %s/%s: %v", ns, name, err)
	}
	status := map[string]any{"conditions": conds}
	if admission != nil {
		status["admission"] = admission
	}
	created.Object["status"] = status
	if _, err := r.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("writing Workload %s/%s's status: %v", ns, name, err)
	}
}
