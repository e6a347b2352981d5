//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
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
	begin := time.Now()
	for _, name := range first {
		c.finish(t, "lab-a", name)
	}
	c.waitAdmitted(t, map[string]int{"lab-a": 0, "lab-b": 4})
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
	c.waitAdmittedIn(t, "studio", map[string]int{notebook.localQueue(): 1, train.localQueue(): 3})
	t.Logf("after train asked for 4: train 3, notebook 1 (3:1, the profiles' weights) in %s", time.Since(begin).Round(time.Millisecond))
}

// waitAdmitted waits until each namespace holds the number of admitted
// Workloads that have not finished: those holding quota.
func (c *kueueCluster) waitAdmitted(t *testing.T, want map[string]int) {
	t.Helper()
	err := poll(t.Context(), 2*admitTimeout, func(ctx context.Context) (bool, string, error) {
		got := map[string]int{}
		for ns := range want {
			list, err := c.s.dyn.Resource(workloadGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			got[ns] = 0
			for i := range list.Items {
				if holdsQuota(&list.Items[i]) {
					got[ns]++
				}
			}
		}
		return maps.Equal(got, want), fmt.Sprintf("admitted %v", got), nil
	})
	if err != nil {
		t.Fatalf("want admitted %v: %v", want, err)
	}
}

// waitAdmittedIn waits until the namespace holds the number of admitted
// Workloads per LocalQueue.
func (c *kueueCluster) waitAdmittedIn(t *testing.T, ns string, want map[string]int) {
	t.Helper()
	err := poll(t.Context(), 2*admitTimeout, func(ctx context.Context) (bool, string, error) {
		list, err := c.s.dyn.Resource(workloadGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		got := map[string]int{}
		for q := range want {
			got[q] = 0
		}
		for i := range list.Items {
			if holdsQuota(&list.Items[i]) {
				q, _, _ := unstructured.NestedString(list.Items[i].Object, "spec", "queueName")
				got[q]++
			}
		}
		return maps.Equal(got, want), fmt.Sprintf("admitted per LocalQueue %v", got), nil
	})
	if err != nil {
		t.Fatalf("want admitted in %s %v: %v", ns, want, err)
	}
}

// holdsQuota says whether the Workload is admitted and not finished.
func holdsQuota(wl *unstructured.Unstructured) bool {
	admitted, finished := condition(wl, "Admitted"), condition(wl, "Finished")
	return admitted != nil && admitted["status"] == "True" && (finished == nil || finished["status"] != "True")
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
