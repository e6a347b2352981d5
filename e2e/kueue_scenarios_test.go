//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What Kueue records when it preempts a workload: the Workload's Preempted
// condition reason, by kind of preemption (Kueue v0.19's
// kueue.InClusterQueueReason and kueue.InCohortReclamationReason).
const (
	preemptedInClusterQueue = "InClusterQueue"
	preemptedToReclaim      = "InCohortReclamation"
)

// kubelet stands in for the kubelets of the nodes the pods are bound to
// (there are none): when a bound pod is deleted — Kueue deletes the pods of
// a Workload it evicts — its containers are gone at once, and a kubelet
// then deletes the pod with a grace period of 0, which frees its node for
// kube-scheduler. Pods not bound to a node the API server deletes itself.
type kubelet struct {
	mu      sync.Mutex
	removed []string // namespace/name of each pod it finished deleting
}

// startKubelet runs the stand-in until the test ends.
func (s *suite) startKubelet(t *testing.T) *kubelet {
	k := &kubelet{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() {
		cancel()
		<-done
	})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			w, err := s.client.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{})
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
			for ev := range w.ResultChan() {
				pod, ok := ev.Object.(*corev1.Pod)
				if !ok || pod.DeletionTimestamp == nil || pod.Spec.NodeName == "" {
					continue
				}
				zero := int64(0)
				uid := pod.UID
				err := s.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
				if err == nil {
					k.mu.Lock()
					k.removed = append(k.removed, pod.Namespace+"/"+pod.Name)
					k.mu.Unlock()
				}
			}
			w.Stop()
		}
	}()
	return k
}

// tiers reads the team tiers from the rendered AssignMetadata mutations
// that give a team's pods their WorkloadPriorityClass label (the label
// accelc's mutation adds to a pod of a profile that names no class of its
// own): namespace → class.
func (c *kueueCluster) tiers() map[string]string {
	out := map[string]string{}
	for _, am := range c.objs["AssignMetadata"] {
		loc, _, _ := unstructured.NestedString(am.Object, "spec", "location")
		if loc != `metadata.labels."`+kueuePriorityLabel+`"` {
			continue
		}
		class, _, _ := unstructured.NestedString(am.Object, "spec", "parameters", "assign", "value")
		namespaces, _, _ := unstructured.NestedStringSlice(am.Object, "spec", "match", "namespaces")
		for _, ns := range namespaces {
			out[ns] = class
		}
	}
	return out
}

// priority is the value of the rendered WorkloadPriorityClass.
func (c *kueueCluster) priority(t *testing.T, class string) int64 {
	t.Helper()
	wpc := c.objs["WorkloadPriorityClass"][class]
	if wpc == nil {
		t.Fatalf("no WorkloadPriorityClass %q is rendered", class)
	}
	v, err := strconv.ParseInt(fmt.Sprint(wpc.Object["value"]), 10, 64)
	if err != nil {
		t.Fatalf("WorkloadPriorityClass %s: value %v: %v", class, wpc.Object["value"], err)
	}
	return v
}

// lowerClass is the highest rendered WorkloadPriorityClass below class,
// "" when class is the lowest.
func (c *kueueCluster) lowerClass(t *testing.T, class string) string {
	t.Helper()
	best, bestValue := "", int64(0)
	limit := c.priority(t, class)
	for _, name := range slices.Sorted(maps.Keys(c.objs["WorkloadPriorityClass"])) {
		if v := c.priority(t, name); v < limit && (best == "" || v > bestValue) {
			best, bestValue = name, v
		}
	}
	return best
}

// tierPod is q.pod labelled with the WorkloadPriorityClass class.
func (q queueProfile) tierPod(t *testing.T, name string, class string) *corev1.Pod {
	pod := q.pod(t, name, q.max)
	pod.Labels[kueuePriorityLabel] = class
	return pod
}

// room is how many pods of the profile's largest size the ClusterQueue can
// run on the flavor with the cluster empty: the team's quota of it and
// what the other teams under its parent lend.
func (c *kueueCluster) room(t *testing.T, q queueProfile, flavor string) (int64, string) {
	t.Helper()
	own, ok := quota(q.cohort, flavor, q.resource)
	if !ok {
		t.Fatalf("Cohort %s holds no %s on %s", q.cohort.GetName(), q.resource, flavor)
	}
	borrow, lenders := c.borrowable(q.cohort, flavor, q.resource)
	return (own.nominal.Value() + borrow) / q.max, fmt.Sprintf("the team's %s %s on %s, borrowable %d (%v)", own.nominal.String(), q.resource, flavor, borrow, lenders)
}

// tierPreemption: a ClusterQueue of one flavor whose team's tier is above
// another class, and whose preemption (from the team's CUE) lets a
// workload preempt lower-priority ones in its queue. Pods of the lower
// class fill all the team may use of the flavor; a pod at the team's tier
// (the class accelc's mutation gives the team's pods) preempts one of them
// — Kueue evicts its Workload and deletes the pod — and runs on the flavor;
// a further pod of the lower class preempts nothing and stays gated.
func (c *kueueCluster) tierPreemption(t *testing.T) {
	var q queueProfile
	var tier, low string
	for _, name := range slices.Sorted(maps.Keys(c.objs["ClusterQueue"])) {
		cq := c.objs["ClusterQueue"][name]
		if p, _, _ := unstructured.NestedString(cq.Object, "spec", "preemption", "withinClusterQueue"); p != "LowerPriority" {
			continue
		}
		cand := c.queueOf(t, cq)
		if len(cand.flavors) != 1 || cand.tier == "" {
			continue
		}
		if l := c.lowerClass(t, cand.tier); l != "" {
			q, tier, low = cand, cand.tier, l
			break
		}
	}
	if q.cq == nil {
		t.Fatalf("%s renders no one-flavor ClusterQueue with withinClusterQueue: LowerPriority whose team's tier has a class below it", c.example)
	}
	flavor := q.flavors[0]
	pods, how := c.room(t, q, flavor)
	t.Logf("ClusterQueue %s (profile %s), preemption %s; team tier %s (%d), lower class %s (%d); %s: room for %d pods of %d, in %s",
		q.cq.GetName(), q.profile.GetName(), jsonString(q.cq.Object["spec"].(map[string]any)["preemption"]), tier, c.priority(t, tier), low, c.priority(t, low), how, pods, q.max, q.namespace)
	kq := c.kueue(q)
	var lows []string
	for i := range pods {
		name := fmt.Sprintf("%s-%s-%d", q.profile.GetName(), low, i+1)
		since := c.createGated(t, q.tierPod(t, name, low))
		c.waitRunsOn(t, q, name, flavor, since)
		lows = append(lows, name)
	}
	high := fmt.Sprintf("%s-%s", q.profile.GetName(), tier)
	since := c.createGated(t, q.tierPod(t, high, tier))
	c.waitRunsOn(t, q, high, flavor, since)
	victims := c.preempted(t, q.namespace, lows, preemptedInClusterQueue)
	t.Logf("pod %s at %s preempted %v (%s) and runs on %s", high, tier, victims, preemptedInClusterQueue, flavor)

	late := fmt.Sprintf("%s-%s-late", q.profile.GetName(), low)
	c.createGated(t, q.tierPod(t, late, low))
	kq.staysGated(t, late)
	c.stillRunning(t, q.namespace, append(slices.DeleteFunc(slices.Clone(lows), func(n string) bool { return slices.Contains(victims, n) }), high))
}

// reclaim: after tierPreemption, the ClusterQueue's team also uses what the
// other teams under its parent lend of the flavor. A pod of another team
// under the parent, with room in its own team's quota of the flavor, takes
// it back (reclaimWithinCohort: Any): Kueue evicts a workload of the
// first team that borrows it, and the pod runs on the flavor.
func (c *kueueCluster) reclaim(t *testing.T) {
	var borrower, lender queueProfile
	for _, name := range slices.Sorted(maps.Keys(c.objs["ClusterQueue"])) {
		cand := c.queueOf(t, c.objs["ClusterQueue"][name])
		if len(cand.flavors) != 1 {
			continue
		}
		parent, _, _ := unstructured.NestedString(cand.cohort.Object, "spec", "parentName")
		if parent == "" {
			continue
		}
		if borrower.cq == nil {
			if c.running(t, cand.namespace) > 0 {
				borrower = cand
			}
			continue
		}
		p, _, _ := unstructured.NestedString(borrower.cohort.Object, "spec", "parentName")
		if lender.cq == nil && p == parent && cand.cohort.GetName() != borrower.cohort.GetName() && cand.flavors[0] == borrower.flavors[0] {
			if r, _, _ := unstructured.NestedString(cand.cq.Object, "spec", "preemption", "reclaimWithinCohort"); r != "Never" {
				lender = cand
			}
		}
	}
	if borrower.cq == nil || lender.cq == nil {
		t.Fatalf("%s: no ClusterQueue under a parent Cohort runs pods, or none of another team under the same parent shares its flavor", c.example)
	}
	flavor := borrower.flavors[0]
	before := c.runningPods(t, borrower.namespace)
	t.Logf("%s runs %v on %s, borrowing from %s; ClusterQueue %s (profile %s) of %s reclaims, in %s",
		borrower.cq.GetName(), before, flavor, lender.cohort.GetName(), lender.cq.GetName(), lender.profile.GetName(), lender.cohort.GetName(), lender.namespace)
	name := lender.profile.GetName() + "-reclaims"
	since := c.createGated(t, lender.pod(t, name, lender.max))
	c.waitRunsOn(t, lender, name, flavor, since)
	victims := c.preempted(t, borrower.namespace, before, preemptedToReclaim)
	t.Logf("pod %s/%s took back %s's lent quota: %v evicted (%s)", lender.namespace, name, lender.cohort.GetName(), victims, preemptedToReclaim)
}

// preempted waits until Kueue has recorded that it preempted the Workload
// of one or more of the pods (in a Preempted event on the Workload), with
// the reason, and the pods are gone; it returns their names.
func (c *kueueCluster) preempted(t *testing.T, ns string, pods []string, reason string) []string {
	t.Helper()
	ctx := t.Context()
	var victims []string
	err := poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		victims = victims[:0]
		events, err := c.s.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=Preempted"})
		if err != nil {
			return false, err.Error(), nil
		}
		var seen []string
		for _, ev := range events.Items {
			seen = append(seen, ev.InvolvedObject.Kind+"/"+ev.InvolvedObject.Name+": "+ev.Message)
			if ev.InvolvedObject.Kind != "Workload" {
				continue
			}
			for _, p := range pods {
				if strings.HasPrefix(ev.InvolvedObject.Name, "pod-"+p+"-") && !slices.Contains(victims, p) {
					victims = append(victims, p)
				}
			}
		}
		if len(victims) == 0 {
			return false, fmt.Sprintf("no Workload of %v preempted; events %v", pods, seen), nil
		}
		for _, v := range victims {
			if _, err := c.s.client.CoreV1().Pods(ns).Get(ctx, v, metav1.GetOptions{}); err == nil {
				return false, "preempted pod " + v + " still exists", nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatalf("in %s: %v", ns, err)
	}
	sort.Strings(victims)
	// Which kind of preemption: the reason is in the Workload's Preempted
	// condition, which Kueue may have removed with the Workload; the event
	// message names it.
	events, err := c.s.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=Preempted"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events.Items {
		for _, v := range victims {
			if strings.HasPrefix(ev.InvolvedObject.Name, "pod-"+v+"-") {
				t.Logf("Workload %s: %s", ev.InvolvedObject.Name, ev.Message)
				if !strings.Contains(ev.Message, "due to "+reasonText[reason]+";") {
					t.Errorf("Workload %s was preempted with %q, want a preemption %s (%q)", ev.InvolvedObject.Name, ev.Message, reason, reasonText[reason])
				}
			}
		}
	}
	return victims
}

// reasonText is how Kueue v0.19's preemption events word each reason
// (preemption.humanReadablePreemptionReasons).
var reasonText = map[string]string{
	preemptedInClusterQueue: "prioritization in the ClusterQueue",
	preemptedToReclaim:      "reclamation within the cohort",
}

// runningPods are the names of the namespace's pods bound to a node and not
// being deleted.
func (c *kueueCluster) runningPods(t *testing.T, ns string) []string {
	t.Helper()
	list, err := c.s.client.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range list.Items {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}

func (c *kueueCluster) running(t *testing.T, ns string) int { return len(c.runningPods(t, ns)) }

// stillRunning checks that the pods are still bound and their Workloads
// admitted.
func (c *kueueCluster) stillRunning(t *testing.T, ns string, pods []string) {
	t.Helper()
	got := c.runningPods(t, ns)
	for _, p := range pods {
		if !slices.Contains(got, p) {
			t.Errorf("pod %s/%s should still run: running pods %v", ns, p, got)
		}
	}
}

// job: a batch/v1 Job of a profile, labelled with the profile's LocalQueue
// as Open Data Hub labels the workloads it makes: Kueue's Job integration
// (on in the rendered Configuration fragment Kueue runs with) suspends it
// on creation, admits its Workload to the first flavor of the profile's
// ClusterQueue, and resumes it with the flavor's node labels and
// tolerations in its pod template. (No Job controller runs here, so no
// pods follow: a pod of the Job would be left to the Job's admission, not
// gated itself.) A pod with the same queue label outside the team
// namespaces is not gated.
func (c *kueueCluster) job(t *testing.T) {
	var q queueProfile
	for _, name := range slices.Sorted(maps.Keys(c.objs["ClusterQueue"])) {
		cq := c.objs["ClusterQueue"][name]
		if cq.GetAnnotations()["accelc.io/profile"] != migProfile {
			q = c.queueOf(t, cq)
			break
		}
	}
	if q.cq == nil {
		t.Fatalf("%s renders no ClusterQueue for the Job", c.example)
	}
	ctx := t.Context()
	pod := q.pod(t, "job", q.max)
	pod.Spec.RestartPolicy = corev1.RestartPolicyNever
	one := int32(1)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: q.profile.GetName() + "-job", Namespace: q.namespace, Labels: pod.Labels, Annotations: pod.Annotations},
		Spec: batchv1.JobSpec{
			Parallelism: &one, Completions: &one,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: pod.Labels, Annotations: pod.Annotations}, Spec: pod.Spec},
		},
	}
	created, err := c.s.client.BatchV1().Jobs(q.namespace).Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Job %s/%s: %v", q.namespace, job.Name, err)
	}
	if created.Spec.Suspend == nil || !*created.Spec.Suspend {
		t.Fatalf("Job %s/%s was created running: Kueue's Job webhook did not suspend it", q.namespace, job.Name)
	}
	flavor := q.flavors[0]
	want, _, _ := unstructured.NestedStringMap(c.objs["ResourceFlavor"][flavor].Object, "spec", "nodeLabels")
	wantTols, _, _ := unstructured.NestedSlice(c.objs["ResourceFlavor"][flavor].Object, "spec", "tolerations")
	var got *batchv1.Job
	var wl *unstructured.Unstructured
	err = poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		if got, err = c.s.client.BatchV1().Jobs(q.namespace).Get(ctx, job.Name, metav1.GetOptions{}); err != nil {
			return false, err.Error(), nil
		}
		list, err := c.s.dyn.Resource(workloadGVR).Namespace(q.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		wl = nil
		for i := range list.Items {
			for _, ref := range list.Items[i].GetOwnerReferences() {
				if ref.UID == created.UID {
					wl = &list.Items[i]
				}
			}
		}
		if wl == nil {
			return false, "no Workload for the Job yet", nil
		}
		suspended := got.Spec.Suspend != nil && *got.Spec.Suspend
		return admittedFlavor(wl) != "" && !suspended, fmt.Sprintf("Workload %s: %s; Job suspended %v", wl.GetName(), workloadState(wl), suspended), nil
	})
	if err != nil {
		t.Fatalf("Job %s/%s not admitted and resumed: %v", q.namespace, job.Name, err)
	}
	if f := admittedFlavor(wl); f != flavor {
		t.Fatalf("Job %s/%s admitted with flavor %s, want the ClusterQueue's first, %s (%v)", q.namespace, job.Name, f, flavor, q.flavors)
	}
	sel := got.Spec.Template.Spec.NodeSelector
	for k, v := range want {
		if sel[k] != v {
			t.Fatalf("Job %s/%s resumed with nodeSelector %v, lacking the flavor's %s=%s", q.namespace, job.Name, sel, k, v)
		}
	}
	if len(got.Spec.Template.Spec.Tolerations) < len(wantTols) {
		t.Fatalf("Job %s/%s resumed with tolerations %v, not the flavor's %s", q.namespace, job.Name, got.Spec.Template.Spec.Tolerations, jsonString(wantTols))
	}
	t.Logf("Job %s/%s (%d %s): suspended by Kueue's webhook, Workload %s admitted with flavor %s in ClusterQueue %s, resumed with nodeSelector %v and tolerations %v",
		q.namespace, job.Name, q.max, q.resource, wl.GetName(), flavor, q.cq.GetName(), sel, got.Spec.Template.Spec.Tolerations)

	// Outside the team namespaces Kueue leaves pods alone, queue label or
	// not: kube-system's and the GPU Operator's pods are never gated.
	outside := q.pod(t, "outside-team-namespaces", q.max)
	outside.Namespace = metav1.NamespaceDefault
	made, err := c.s.client.CoreV1().Pods(outside.Namespace).Create(ctx, outside, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s/%s: %v", outside.Namespace, outside.Name, err)
	}
	if gated(made) {
		t.Fatalf("pod %s/%s, outside the namespaces of the rendered Configuration fragment, was gated by Kueue", outside.Namespace, outside.Name)
	}
	t.Logf("pod %s/%s with label %s=%s: not gated (outside managedJobsNamespaceSelector)", outside.Namespace, outside.Name, kueueQueueLabel, outside.Labels[kueueQueueLabel])
}
