//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	// podGroupLabel and podGroupCountAnnotation make pods one Kueue pod
	// group: one Workload, named after the group, that Kueue admits (and
	// ungates) all at once when the quota holds every pod, and marks
	// Finished when every pod has Succeeded.
	podGroupLabel           = "kueue.x-k8s.io/pod-group-name"
	podGroupCountAnnotation = "kueue.x-k8s.io/pod-group-total-count"

	// waitProfile is hetero-prod's H200 profile, which ml-research's
	// Kueue queues hold.
	waitProfile = "premium-gpu"
)

// TestServeWait runs `accelc serve --live` for hetero-prod against a control
// plane with kube-scheduler and Kueue's controller manager (v0.19.2) running
// with the Configuration fragment accelc renders, hetero-prod's rendered
// queues (WorkloadPriorityClasses, ResourceFlavors, Cohorts, ClusterQueues,
// LocalQueues) and its inventory's nodes, typed as Node Feature Discovery
// would type them; it reads premium-gpu's wait line in headless Chromium,
// without a reload, while Kueue decides:
//
//   - nothing queued: "32 available — 0 pending — no wait" (4 H200 nodes of 8);
//   - ml-research's four-node run pretrain-1, a Kueue pod group of 4 pods of
//     8 GPUs (its team's 16 H200s and the 16 it borrows from model-serving
//     under Cohort gpu-pool), admitted by Kueue, bound by kube-scheduler one
//     pod to each H200 node: "0 available — 0 pending — wait unknown: …";
//   - two more such runs, pretrain-2 in ml-research and pretrain-3 in
//     ml-research-dev, which Kueue leaves pending for want of quota:
//     "0 available — 2 pending — wait unknown: no finished run …";
//   - pretrain-1's pods Succeed (written through the status subresource, as
//     their kubelets would): Kueue marks its Workload Finished, then admits
//     pretrain-2, the older of the two, whose pods kube-scheduler binds to the
//     freed nodes, and pretrain-3 stays pending. By queue.go's rules: one
//     finished run, of D seconds (Admitted to Finished, as Kueue stamped
//     them), is the typical run; pretrain-2 runs (its place frees after D
//     less its age), pretrain-3 pends and gets that place for D more; a
//     workload queued now waits for both, at most 2D, at least D: with D
//     under 30 s, "0 available — 1 pending — about 1 min", and beneath it
//     "median of 1 finished run of this profile, 1 min; 1 running, 1
//     pending ahead".
//
// Every Workload is Kueue's own, its conditions and times Kueue's; the test
// writes only pods and their phase. A screenshot is kept in
// $ACCELC_TEST_ARTIFACTS (default bin/test-artifacts).
func TestServeWait(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and no %s: make browser installs Debian's chromium", chromium)
		}
		t.Skipf("skipping: no %s: make browser", chromium)
	}
	begin := time.Now()
	root := repoRoot(t)
	s := &suite{root: root, work: t.TempDir(), accelc: program(t, root, filepath.Join("bin", "accelc"), "build")}
	c, typed := startWaitCluster(t, s, "hetero-prod")
	ctx := t.Context()

	q := c.profileQueue(t, waitProfile)
	flavor := q.flavors[0]
	var nodes []string
	for n, typ := range typed {
		if typ == flavor {
			nodes = append(nodes, n)
		}
	}
	slices.Sort(nodes)
	// The page's numbers below are hetero-prod's: 4 H200 nodes of 8, and
	// premium-gpu's pods of at most 8.
	if len(q.flavors) != 1 || len(nodes) != 4 || q.max != 8 {
		t.Fatalf("hetero-prod's %s: flavors %v, nodes of %s %v, at most %d devices a pod: want one flavor, 4 nodes, 8", waitProfile, q.flavors, flavor, nodes, q.max)
	}
	other := c.otherNamespace(t, q)
	t.Logf("ClusterQueue %s (Cohort %s) for %s in %s and %s; nodes of %s: %v", q.cq.GetName(), q.cohort.GetName(), waitProfile, q.namespace, other, flavor, nodes)

	// Who may read the page is TestServePage's: here anyone may.
	base := s.serve(t, "examples/clusters/hetero-prod", "--live", "--auth=false", "--kubeconfig", s.cp.Kubeconfig(), "--refresh", "300ms")
	actx, cancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 1600),
		chromedp.Flag("headless", "new"))...)
	defer cancel()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(bctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatalf("loading %s/: %v", base, err)
	}
	read := func(selector string) string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[string](`(document.querySelector('tr[data-profile="`+waitProfile+`"] `+selector+`') || {textContent: ""}).textContent`))
		if err != nil {
			t.Fatalf("reading the page: %v", err)
		}
		return v
	}
	waitFor := func(want string, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for time.Now().Before(deadline) {
			if read(".wait-line") == want {
				t.Logf("%s: the page shows for %s: %q", time.Since(begin).Round(time.Millisecond), waitProfile, want)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("the page shows for %s %q, want %q (without a reload)\n%s", waitProfile, read(".wait-line"), want, c.kueue(q).dump(ctx))
	}
	waitFor("32 available — 0 pending — no wait", 20*time.Second)

	// A four-node run takes every H200: Kueue admits it, borrowing, and
	// kube-scheduler binds one pod to each node.
	first := c.podGroup(t, q, q.namespace, "pretrain-1", len(nodes))
	admitted := c.waitWorkload(t, q.namespace, "pretrain-1", "admitted", isAdmitted)
	c.waitOnNodes(t, first, nodes)
	waitFor("0 available — 0 pending — wait unknown: no finished run of this profile observed yet", 20*time.Second)

	// Two more, each past what the Cohorts have left: Kueue leaves them
	// pending, their pods gated.
	second := c.podGroup(t, q, q.namespace, "pretrain-2", len(nodes))
	queued := c.waitWorkload(t, q.namespace, "pretrain-2", "pending for want of quota", isPendingForQuota)
	// Kueue orders workloads of one priority by their creation time, in
	// whole seconds (then by UID): pretrain-3 comes a second later, so
	// that pretrain-2 is first in line.
	sleepPast(queued.GetCreationTimestamp().Time)
	third := c.podGroup(t, q, other, "pretrain-3", len(nodes))
	// Kueue may write nothing on pretrain-3: a workload the same as a head
	// that did not fit goes straight back to wait with it.
	c.waitWorkload(t, other, "pretrain-3", "pending", isPending)
	waitFor("0 available — 2 pending — wait unknown: no finished run of this profile observed yet", 20*time.Second)

	// pretrain-1 finishes. Its run must last a whole second or more on
	// Kueue's clock (condition times are whole seconds), else D is 0 and
	// the estimate "no wait".
	sleepPast(conditionTime(t, admitted, "Admitted"))
	kq := c.kueue(q)
	for _, p := range first {
		kq.succeed(t, p.Name)
	}
	finished := c.waitWorkload(t, q.namespace, "pretrain-1", "finished", func(wl *unstructured.Unstructured) bool {
		cond := condition(wl, "Finished")
		return cond != nil && cond["status"] == "True"
	})
	run := conditionTime(t, finished, "Finished").Sub(conditionTime(t, finished, "Admitted"))
	t.Logf("pretrain-1 ran %s by its Workload's conditions; %s", run, workloadState(finished))
	// Kueue admits the older pending run into the freed quota; the other
	// stays pending.
	c.waitWorkload(t, q.namespace, "pretrain-2", "admitted", isAdmitted)
	c.waitOnNodes(t, second, nodes)
	c.waitWorkload(t, other, "pretrain-3", "still pending", isPending)
	c.stillGated(t, third)
	// The estimate (queue.go): D = run, the one finished run; pretrain-2's
	// place frees after max(D - its age, 0), then pretrain-3 holds it for
	// D: a workload queued now waits between D and 2D, in whole minutes
	// rounded up. With D of a few seconds that is 1 min from the start;
	// in general it is ceil(D) minutes once pretrain-2 is D old.
	n := int(math.Ceil(run.Minutes()))
	waitFor(fmt.Sprintf("0 available — 1 pending — about %d min", n), run+20*time.Second)
	method := read(".wait small")
	if want := fmt.Sprintf("median of 1 finished run of this profile, %d min; 1 running, 1 pending ahead", n); method != want {
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
	t.Logf("TestServeWait's wall time: %s", time.Since(begin).Round(time.Millisecond))
}

// startWaitCluster renders the example and starts a control plane with
// kube-scheduler and Kueue's manager with the rendered Configuration
// fragment; it creates the team namespaces and the rendered queues, waits
// until every ClusterQueue and LocalQueue is Active, and creates the nodes
// of the example's inventory, each of a type that has a ResourceFlavor
// labelled with the flavor's node labels (as the Node Feature Discovery
// rules accelc renders label it). typed is each such node's type.
func startWaitCluster(t *testing.T, s *suite, example string) (c *kueueCluster, typed map[string]string) {
	t.Helper()
	begin := time.Now()
	c = startRenderedQueues(t, s, example, kueueQueueKinds)

	view, err := s.inventoryView(t, example)
	if err != nil {
		t.Fatal(err)
	}
	typed = map[string]string{}
	extra := map[string]map[string]string{}
	for _, n := range view.Nodes {
		rf := c.objs["ResourceFlavor"][n.AcceleratorType]
		if rf == nil {
			continue
		}
		labels, _, _ := unstructured.NestedStringMap(rf.Object, "spec", "nodeLabels")
		if len(labels) > 0 {
			typed[n.Name], extra[n.Name] = n.AcceleratorType, labels
		}
	}
	s.createNodes(t, filepath.Join(s.root, clusterDir(example), "inventory.json"), extra)
	t.Logf("%s: queues Active, %d nodes (%d typed) in %s", example, len(view.Nodes), len(typed), time.Since(begin).Round(time.Millisecond))
	return c, typed
}

// otherNamespace is the second namespace the ClusterQueue takes
// workloads from (the team's other namespace).
func (c *kueueCluster) otherNamespace(t *testing.T, q queueProfile) string {
	t.Helper()
	exprs, _, _ := unstructured.NestedSlice(q.cq.Object, "spec", "namespaceSelector", "matchExpressions")
	for _, e := range exprs {
		vals, _, _ := unstructured.NestedStringSlice(e.(map[string]any), "values")
		for _, v := range vals {
			if v != q.namespace {
				return v
			}
		}
	}
	t.Fatalf("ClusterQueue %s takes workloads from %s alone", q.cq.GetName(), q.namespace)
	return ""
}

// podGroup creates a Kueue pod group of n pods of the profile's largest
// size in namespace ns, made as Open Data Hub makes a pod of the profile
// (queue.pod), and checks that Kueue's webhook gated each.
func (c *kueueCluster) podGroup(t *testing.T, q queueProfile, ns, name string, n int) []*corev1.Pod {
	t.Helper()
	q.namespace, q.tier = ns, c.tiers()[ns]
	var pods []*corev1.Pod
	for i := range n {
		pod := q.pod(t, fmt.Sprintf("%s-%d", name, i), q.max)
		pod.Labels[podGroupLabel] = name
		pod.Annotations[podGroupCountAnnotation] = strconv.Itoa(n)
		c.createGated(t, pod)
		pods = append(pods, pod)
	}
	return pods
}

// waitWorkload waits until Kueue's Workload ns/name is what done checks,
// and returns it.
func (c *kueueCluster) waitWorkload(t *testing.T, ns, name, what string, done func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	var wl *unstructured.Unstructured
	err := poll(t.Context(), admitTimeout, func(ctx context.Context) (bool, string, error) {
		var err error
		if wl, err = c.s.dyn.Resource(workloadGVR).Namespace(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return false, err.Error(), nil
		}
		return done(wl), workloadState(wl), nil
	})
	if err != nil {
		t.Fatalf("Workload %s/%s not %s: %v", ns, name, what, err)
	}
	t.Logf("Workload %s/%s %s: %s", ns, name, what, workloadState(wl))
	return wl
}

func isAdmitted(wl *unstructured.Unstructured) bool {
	c := condition(wl, "Admitted")
	return c != nil && c["status"] == "True"
}

// isPendingForQuota: Kueue tried the Workload and found too little quota.
func isPendingForQuota(wl *unstructured.Unstructured) bool {
	c := condition(wl, "QuotaReserved")
	return !isAdmitted(wl) && c != nil && c["status"] == "False" && c["reason"] == "Pending" &&
		strings.Contains(fmt.Sprint(c["message"]), "insufficient")
}

// isPending: Kueue has not reserved quota for the Workload.
func isPending(wl *unstructured.Unstructured) bool {
	c := condition(wl, "QuotaReserved")
	return !isAdmitted(wl) && (c == nil || c["status"] == "False")
}

// stillGated checks that none of the pods has lost Kueue's scheduling gate
// or been bound.
func (c *kueueCluster) stillGated(t *testing.T, pods []*corev1.Pod) {
	t.Helper()
	for _, p := range pods {
		got, err := c.s.client.CoreV1().Pods(p.Namespace).Get(t.Context(), p.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !gated(got) || got.Spec.NodeName != "" {
			t.Fatalf("pod %s/%s of a pending Workload: gates %v, node %q", p.Namespace, p.Name, got.Spec.SchedulingGates, got.Spec.NodeName)
		}
	}
}

// sleepPast sleeps until a whole second after at, a time the API server
// wrote in whole seconds.
func sleepPast(at time.Time) {
	time.Sleep(time.Until(at.Add(time.Second)))
}

// conditionTime is when the Workload's condition of the type became what
// it is.
func conditionTime(t *testing.T, wl *unstructured.Unstructured, typ string) time.Time {
	t.Helper()
	c := condition(wl, typ)
	at, err := time.Parse(time.RFC3339, fmt.Sprint(c["lastTransitionTime"]))
	if c == nil || err != nil {
		t.Fatalf("Workload %s/%s: condition %s: %v (%v)", wl.GetNamespace(), wl.GetName(), typ, c, err)
	}
	return at
}

// waitOnNodes waits until kube-scheduler has bound each pod, one to each
// of the nodes.
func (c *kueueCluster) waitOnNodes(t *testing.T, pods []*corev1.Pod, nodes []string) {
	t.Helper()
	var got []string
	for _, p := range pods {
		node, err := c.s.waitBound(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, node.Name)
	}
	slices.Sort(got)
	if !slices.Equal(got, nodes) {
		t.Fatalf("the pods of %s were bound to %v, want one on each of %v", pods[0].Labels[podGroupLabel], got, nodes)
	}
	t.Logf("the pods of %s bound to %v", pods[0].Labels[podGroupLabel], got)
}
