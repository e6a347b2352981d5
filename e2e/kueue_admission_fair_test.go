//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// admissionFair is fair sharing inside a team: team lab's namespaces
// lab-a and lab-b share 4 H200s under admission fair sharing; team
// studio's train (weight 3) and notebook (weight 1) queues share 4.
const admissionFair = "e2e/testdata/admission-fair"

// TestKueueAdmissionFairSharing applies what accelc renders for
// admission-fair to a control plane with Kueue's manager run with the
// rendered Configuration fragment (admission fair sharing sampled every
// second, fair sharing on for the profiles' weights).
func TestKueueAdmissionFairSharing(t *testing.T) {
	root := repoRoot(t)
	accelc := program(t, root, filepath.Join("bin", "accelc"), "build")
	s := &suite{root: root, work: t.TempDir(), accelc: accelc}
	c := startRenderedQueues(t, s, admissionFair, kueueQueueKinds)
	s.createNodes(t, filepath.Join(root, clusterDir(admissionFair), "inventory.json"), nil)
	s.startKubelet(t)
	t.Run("namespace-usage-orders-admission", c.usageOrder)
	t.Run("profile-weights-split-team-quota", c.profileWeights)
}

// usageOrder: lab-a runs 4 one-GPU pods, using all of lab's quota, and
// then queues 4 more; lab-b queues 4 after them. When lab-a's first pods
// finish, Kueue admits lab-b's, which came later, before lab-a's: lab-a
// used the team's GPUs lately and lab-b did not. By arrival
// (BestEffortFIFO, without admission fair sharing) lab-a's would go first.
func (c *kueueCluster) usageOrder(t *testing.T) {
	ctx := t.Context()
	a := c.queueOf(t, c.objs["ClusterQueue"]["lab.h200"])
	if a.namespace != "lab-a" {
		t.Fatalf("ClusterQueue lab.h200's first namespace is %s, want lab-a", a.namespace)
	}
	b := a
	b.namespace = "lab-b"
	var first []string
	for i := range 4 {
		pod := a.pod(t, fmt.Sprintf("early-%d", i), 1)
		c.createGated(t, pod)
		first = append(first, pod.Name)
	}
	c.waitAdmitted(t, map[string]int{"lab-a": 4, "lab-b": 0})
	// Kueue samples lab-a's use every second: wait until its LocalQueue
	// shows it, so the order below is the usage's and not a race.
	err := poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		lq, err := c.s.dyn.Resource(localQueueGVR).Namespace("lab-a").Get(ctx, a.localQueue(), metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		used, _, _ := unstructured.NestedString(lq.Object, "status", "fairSharing", "admissionFairSharingStatus", "consumedResources", "nvidia.com/gpu")
		return used != "" && used != "0", fmt.Sprintf("lab-a's consumed nvidia.com/gpu: %q", used), nil
	})
	if err != nil {
		t.Fatalf("Kueue never counted lab-a's use: %v", err)
	}
	for i := range 4 {
		c.createGated(t, a.pod(t, fmt.Sprintf("late-%d", i), 1))
	}
	time.Sleep(time.Second) // lab-a's workloads are clearly the older
	for i := range 4 {
		c.createGated(t, b.pod(t, fmt.Sprintf("late-%d", i), 1))
	}
	c.waitAdmitted(t, map[string]int{"lab-a": 4, "lab-b": 0})
	// Kueue has made each late pod's Workload, unadmitted: both
	// namespaces wait in the queue before lab-a's first pods finish.
	c.waitPending(t, map[string]int{"lab-a": 4, "lab-b": 4})
	begin := time.Now()
	for _, name := range first {
		c.finish(t, "lab-a", name)
	}
	c.waitAdmitted(t, map[string]int{"lab-a": 0, "lab-b": 4})
	c.holdsFor(t, 3*time.Second, func(ctx context.Context) (map[string]int, error) { return c.quotaHeld(ctx, "lab-a", "lab-b") }, map[string]int{"lab-a": 0, "lab-b": 4})
	t.Logf("lab-a's 4 pods finished: lab-b's 4 later pods admitted before lab-a's 4 earlier ones, in %s", time.Since(begin).Round(time.Millisecond))
}

// profileWeights: studio's notebook queue (weight 1) takes all 4 of the
// team's H200s; then its train queue (weight 3) asks for 4, and Kueue
// preempts by fair share until train holds 3 and notebook 1.
func (c *kueueCluster) profileWeights(t *testing.T) {
	notebook := c.queueOf(t, c.objs["ClusterQueue"]["studio.notebook"])
	train := c.queueOf(t, c.objs["ClusterQueue"]["studio.train"])
	for i := range 4 {
		c.createGated(t, notebook.pod(t, fmt.Sprintf("nb-%d", i), 1))
	}
	c.waitAdmittedIn(t, "studio", map[string]int{notebook.localQueue(): 4, train.localQueue(): 0})
	begin := time.Now()
	for i := range 4 {
		c.createGated(t, train.pod(t, fmt.Sprintf("train-%d", i), 1))
	}
	want := map[string]int{notebook.localQueue(): 1, train.localQueue(): 3}
	c.waitAdmittedIn(t, "studio", want)
	// The split holds: preemption stops at the weights' shares, it does
	// not pass through them on the way to taking all four.
	c.holdsFor(t, 3*time.Second, func(ctx context.Context) (map[string]int, error) {
		return c.quotaHeldPerQueue(ctx, "studio", notebook.localQueue(), train.localQueue())
	}, want)
	t.Logf("after train asked for 4: train 3, notebook 1 (3:1, the profiles' weights) in %s", time.Since(begin).Round(time.Millisecond))
}

// quotaHeld counts, per namespace, the Workloads that hold quota.
func (c *kueueCluster) quotaHeld(ctx context.Context, nss ...string) (map[string]int, error) {
	got := map[string]int{}
	for _, ns := range nss {
		n, err := c.countWorkloads(ctx, ns, holdsQuota)
		if err != nil {
			return nil, err
		}
		got[ns] = n
	}
	return got, nil
}

// quotaHeldPerQueue counts the namespace's Workloads that hold quota per
// LocalQueue: the queues given, at 0 where none does, and any other
// queue one does.
func (c *kueueCluster) quotaHeldPerQueue(ctx context.Context, ns string, queues ...string) (map[string]int, error) {
	list, err := c.s.dyn.Resource(workloadGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	got := map[string]int{}
	for _, q := range queues {
		got[q] = 0
	}
	for i := range list.Items {
		q, _, _ := unstructured.NestedString(list.Items[i].Object, "spec", "queueName")
		if holdsQuota(&list.Items[i]) {
			got[q]++
		}
	}
	return got, nil
}

// countWorkloads counts the namespace's Workloads that match.
func (c *kueueCluster) countWorkloads(ctx context.Context, ns string, match func(*unstructured.Unstructured) bool) (int, error) {
	list, err := c.s.dyn.Resource(workloadGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		if match(&list.Items[i]) {
			n++
		}
	}
	return n, nil
}

// waitAdmitted waits until each namespace holds the number of admitted
// Workloads that have not finished: those holding quota.
func (c *kueueCluster) waitAdmitted(t *testing.T, want map[string]int) {
	t.Helper()
	c.waitCounts(t, func(ctx context.Context) (map[string]int, error) {
		return c.quotaHeld(ctx, slices.Collect(maps.Keys(want))...)
	}, want, "admitted")
}

// waitPending waits until each namespace holds the number of Workloads
// without quota.
func (c *kueueCluster) waitPending(t *testing.T, want map[string]int) {
	t.Helper()
	c.waitCounts(t, func(ctx context.Context) (map[string]int, error) {
		got := map[string]int{}
		for ns := range want {
			n, err := c.countWorkloads(ctx, ns, isPending)
			if err != nil {
				return nil, err
			}
			got[ns] = n
		}
		return got, nil
	}, want, "pending for quota")
}

// waitAdmittedIn waits until the namespace holds the number of admitted
// Workloads per LocalQueue.
func (c *kueueCluster) waitAdmittedIn(t *testing.T, ns string, want map[string]int) {
	t.Helper()
	c.waitCounts(t, func(ctx context.Context) (map[string]int, error) {
		return c.quotaHeldPerQueue(ctx, ns, slices.Collect(maps.Keys(want))...)
	}, want, "admitted in "+ns)
}

// waitCounts polls count until it gives want.
func (c *kueueCluster) waitCounts(t *testing.T, count func(context.Context) (map[string]int, error), want map[string]int, what string) {
	t.Helper()
	err := poll(t.Context(), 2*admitTimeout, func(ctx context.Context) (bool, string, error) {
		got, err := count(ctx)
		if err != nil {
			return false, err.Error(), nil
		}
		return maps.Equal(got, want), fmt.Sprintf("%s %v", what, got), nil
	})
	if err != nil {
		t.Fatalf("want %s %v: %v", what, want, err)
	}
}

// holdsFor checks that count keeps giving want for d: a state Kueue
// settled in, not one it passed through.
func (c *kueueCluster) holdsFor(t *testing.T, d time.Duration, count func(context.Context) (map[string]int, error), want map[string]int) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
		got, err := count(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("%v did not hold: %v", want, got)
		}
	}
}

// holdsQuota says whether the Workload is admitted and not finished.
func holdsQuota(wl *unstructured.Unstructured) bool {
	finished := condition(wl, "Finished")
	return isAdmitted(wl) && (finished == nil || finished["status"] != "True")
}

// finish marks the pod Succeeded, as its kubelet would when its
// container exits 0: Kueue finishes its Workload and frees its quota.
func (c *kueueCluster) finish(t *testing.T, ns, name string) {
	t.Helper()
	ctx := t.Context()
	pod, err := c.s.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodSucceeded
	if _, err := c.s.client.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("finishing pod %s/%s: %v", ns, name, err)
	}
}
