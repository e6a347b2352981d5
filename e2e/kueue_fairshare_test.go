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

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/compile"
)

// fairTopology is issue 35's cluster: three H200 nodes of 4 GPUs (one in
// NVLink domain cl-a.1, two in cl-b.1), lent by team reserve to research
// (fair-share weight 2) and serving (1) in cohort gpu-pool.
const fairTopology = "e2e/testdata/fair-topology"

// TestKueueFairShareTopology applies what accelc renders for fair-topology
// (its Topology, ResourceFlavors, Cohorts, ClusterQueues, LocalQueues) to
// a control plane with Kueue's manager run with the rendered Configuration
// fragment (fair sharing on), on the cluster's own inventory nodes.
func TestKueueFairShareTopology(t *testing.T) {
	root := repoRoot(t)
	accelc := program(t, root, filepath.Join("bin", "accelc"), "build")
	c := startFairTopology(t, root, accelc)
	t.Run("required-nvlink-domain", c.requiredDomain)
	t.Run("preferred-nvlink-domain", c.preferredDomain)
	t.Run("fair-share-ratio", c.fairShareRatio)
}

func startFairTopology(t *testing.T, root, accelc string) *kueueCluster {
	t.Helper()
	s := &suite{root: root, work: t.TempDir(), accelc: accelc}
	c := startRenderedQueues(t, s, fairTopology, append([]string{"Topology"}, kueueQueueKinds...))
	s.createNodes(t, filepath.Join(root, clusterDir(fairTopology), "inventory.json"), nil)
	s.startKubelet(t)
	return c
}

// admittedIn counts the namespace's admitted Workloads.
func (c *kueueCluster) admittedIn(ctx context.Context, ns string) (int, error) {
	list, err := c.s.dyn.Resource(workloadGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range list.Items {
		if cond := condition(&list.Items[i], "Admitted"); cond != nil && cond["status"] == "True" {
			n++
		}
	}
	return n, nil
}

// requiredDomain: a Job of two 4-GPU pods of h200-nvlink (the template
// carries Kueue's required-topology annotation on nvidia.com/gpu.clique,
// as accelc's Job mutation sets it) is admitted with both pods in one
// NVLink domain: cl-b.1, the only one with 8 GPUs, though cl-a.1's node
// has room for one of them. Kueue's topology assignment names the nodes.
func (c *kueueCluster) requiredDomain(t *testing.T) {
	ctx := t.Context()
	q := c.queueOf(t, c.objs["ClusterQueue"]["research.h200-nvlink"])
	c.topologyJob(t, q, "nvlink", 2, compile.RequiredTopologyAnnotation)
	// The control plane runs no Job controller: what Kueue decides is
	// the Workload's topology assignment, the nodes it binds the pods to.
	var nodes []string
	err := poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		var err error
		nodes, err = c.assignedNodes(ctx, q.namespace)
		if err != nil {
			return false, err.Error(), nil
		}
		return len(nodes) == 2, fmt.Sprintf("assigned nodes: %v", nodes), nil
	})
	if err != nil {
		t.Fatalf("the Job's Workload was not admitted onto two nodes: %v\n%s", err, c.kueue(q).dump(ctx))
	}
	domains := c.domainsOf(t, nodes)
	if len(domains) != 1 || !domains["cl-b.1"] {
		t.Fatalf("Kueue assigned the Job's pods %v, in NVLink domains %v: want both in cl-b.1", nodes, slices.Sorted(maps.Keys(domains)))
	}
	t.Logf("Job nvlink's two 4-GPU pods admitted onto %v, both in NVLink domain cl-b.1 (cl-a.1's node had room for one)", nodes)
	c.deleteJob(t, q.namespace, "nvlink")
}

// topologyJob is a Job of n 4-GPU pods of q's profile whose template asks
// Kueue for a topology level, as accelc's Job mutation writes it
// (annotation: Kueue's required or preferred pod-set annotation).
func (c *kueueCluster) topologyJob(t *testing.T, q queueProfile, name string, n int32, annotation string) {
	t.Helper()
	pod := q.pod(t, "x", 4)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: q.namespace, Labels: pod.Labels, Annotations: pod.Annotations},
		Spec: batchv1.JobSpec{
			Parallelism: &n, Completions: &n,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{annotation: "nvidia.com/gpu.clique"}},
				Spec:       pod.Spec,
			},
		},
	}
	job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	if _, err := c.s.client.BatchV1().Jobs(q.namespace).Create(t.Context(), job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Job %s: %v", name, err)
	}
}

// assignedNodes lists the nodes of the topology assignments of the
// namespace's admitted Workloads.
func (c *kueueCluster) assignedNodes(ctx context.Context, ns string) ([]string, error) {
	list, err := c.s.dyn.Resource(workloadGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var nodes []string
	for _, wl := range list.Items {
		psas, _, _ := unstructured.NestedSlice(wl.Object, "status", "admission", "podSetAssignments")
		for _, psa := range psas {
			tslices, _, _ := unstructured.NestedSlice(psa.(map[string]any), "topologyAssignment", "slices")
			for _, sl := range tslices {
				values, _, _ := unstructured.NestedSlice(sl.(map[string]any), "valuesPerLevel")
				for _, v := range values {
					prefix, _, _ := unstructured.NestedString(v.(map[string]any), "individual", "prefix")
					roots, _, _ := unstructured.NestedStringSlice(v.(map[string]any), "individual", "roots")
					for _, r := range roots {
						nodes = append(nodes, prefix+r)
					}
				}
			}
		}
	}
	return nodes, nil
}

// domainsOf is the set of NVLink domains the nodes are in.
func (c *kueueCluster) domainsOf(t *testing.T, nodes []string) map[string]bool {
	t.Helper()
	domains := map[string]bool{}
	for _, name := range nodes {
		n, err := c.s.client.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		domains[n.Labels["nvidia.com/gpu.clique"]] = true
	}
	return domains
}

// deleteJob deletes the Job and, for no garbage collector runs here, its
// Workload by hand, and waits for the namespace to hold no admitted
// Workload: the quota is free for the next scenario.
func (c *kueueCluster) deleteJob(t *testing.T, ns, name string) {
	t.Helper()
	ctx := t.Context()
	background := metav1.DeletePropagationBackground
	if err := c.s.client.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatal(err)
	}
	if err := c.s.dyn.Resource(workloadGVR).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		n, err := c.admittedIn(ctx, ns)
		return err == nil && n == 0, fmt.Sprintf("admitted: %d", n), nil
	}); err != nil {
		t.Fatalf("Job %s's Workload outlived it: %v", name, err)
	}
}

// preferredDomain: a Job of three 4-GPU pods needs 12 H200s, more than
// any NVLink domain holds (cl-a.1 has 4, cl-b.1 has 8). Under h200-nvlink
// (required) Kueue leaves it pending; under h200-near (preferred) it
// admits it across both domains, its pods as close as they fit.
func (c *kueueCluster) preferredDomain(t *testing.T) {
	ctx := t.Context()
	required := c.queueOf(t, c.objs["ClusterQueue"]["research.h200-nvlink"])
	c.topologyJob(t, required, "wide-required", 3, compile.RequiredTopologyAnnotation)
	// Pending: the Workload exists and says why it has no quota, and
	// stays unadmitted while Kueue retries.
	var why string
	err := poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		list, err := c.s.dyn.Resource(workloadGVR).Namespace(required.namespace).List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != 1 {
			return false, fmt.Sprintf("workloads: %d %v", len(list.Items), err), nil
		}
		cond := condition(&list.Items[0], "QuotaReserved")
		if cond == nil || cond["status"] != "False" {
			return false, fmt.Sprintf("QuotaReserved: %v", cond), nil
		}
		why, _ = cond["message"].(string)
		return true, "", nil
	})
	if err != nil {
		t.Fatalf("the required-topology Job's Workload is not pending: %v\n%s", err, c.kueue(required).dump(ctx))
	}
	time.Sleep(2 * time.Second)
	if n, err := c.admittedIn(ctx, required.namespace); err != nil || n != 0 {
		t.Fatalf("a 12-GPU Job of a required-nvlink profile was admitted (%d, %v): no NVLink domain holds 12 H200s", n, err)
	}
	t.Logf("Job wide-required (3 × 4 GPUs, required nvlink) stays pending: %s", why)
	c.deleteJob(t, required.namespace, "wide-required")

	// Where the pods fit in one domain, preferred keeps them there: two
	// 4-GPU pods in cl-b.1, the one domain that holds 8.
	near := c.queueOf(t, c.objs["ClusterQueue"]["research.h200-near"])
	c.topologyJob(t, near, "close-near", 2, compile.PreferredTopologyAnnotation)
	var nodes []string
	err = poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		var err error
		nodes, err = c.assignedNodes(ctx, near.namespace)
		if err != nil {
			return false, err.Error(), nil
		}
		return len(nodes) == 2, fmt.Sprintf("assigned nodes: %v", nodes), nil
	})
	if err != nil {
		t.Fatalf("the preferred-topology Job of two pods was not admitted: %v\n%s", err, c.kueue(near).dump(ctx))
	}
	if domains := c.domainsOf(t, nodes); len(domains) != 1 || !domains["cl-b.1"] {
		t.Fatalf("Kueue assigned the preferred Job's two pods %v, in domains %v: want both in cl-b.1, where they fit", nodes, slices.Sorted(maps.Keys(domains)))
	}
	t.Logf("Job close-near (2 × 4 GPUs, preferred nvlink) admitted onto %v, in one domain, cl-b.1", nodes)
	c.deleteJob(t, near.namespace, "close-near")

	c.topologyJob(t, near, "wide-near", 3, compile.PreferredTopologyAnnotation)
	err = poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		var err error
		nodes, err = c.assignedNodes(ctx, near.namespace)
		if err != nil {
			return false, err.Error(), nil
		}
		return len(nodes) == 3, fmt.Sprintf("assigned nodes: %v", nodes), nil
	})
	if err != nil {
		t.Fatalf("the preferred-topology Job's Workload was not admitted onto three nodes: %v\n%s", err, c.kueue(near).dump(ctx))
	}
	domains := c.domainsOf(t, nodes)
	if len(domains) != 2 {
		t.Fatalf("Kueue assigned the Job's pods %v, in NVLink domains %v: want both domains (12 GPUs fit in none alone)", nodes, slices.Sorted(maps.Keys(domains)))
	}
	t.Logf("Job wide-near (3 × 4 GPUs, preferred nvlink) admitted onto %v, across domains %v", nodes, slices.Sorted(maps.Keys(domains)))
	c.deleteJob(t, near.namespace, "wide-near")
}

// fairShareRatio: research (weight 2) borrows all 12 of the reserve's idle
// H200s; then serving (weight 1) asks for 12 too, and Kueue preempts by
// fair share until each holds its weight's part: research 8, serving 4.
func (c *kueueCluster) fairShareRatio(t *testing.T) {
	ctx := t.Context()
	research := c.queueOf(t, c.objs["ClusterQueue"]["research.h200"])
	serving := c.queueOf(t, c.objs["ClusterQueue"]["serving.h200"])
	for i := range 12 {
		c.createGated(t, research.pod(t, fmt.Sprintf("r-%02d", i), 1))
	}
	wait := func(want map[string]int) {
		t.Helper()
		err := poll(ctx, 2*admitTimeout, func(ctx context.Context) (bool, string, error) {
			got := map[string]int{}
			for ns := range want {
				n, err := c.admittedIn(ctx, ns)
				if err != nil {
					return false, err.Error(), nil
				}
				got[ns] = n
			}
			return maps.Equal(got, want), fmt.Sprintf("admitted %v", got), nil
		})
		if err != nil {
			t.Fatalf("want admitted %v: %v\n%s%s", want, err, c.kueue(serving).dump(ctx), c.cohortStatus(ctx, serving))
		}
	}
	begin := time.Now()
	wait(map[string]int{"research": 12, "serving": 0})
	t.Logf("research borrowed all 12 idle H200s in %s", time.Since(begin).Round(time.Millisecond))
	begin = time.Now()
	for i := range 12 {
		c.createGated(t, serving.pod(t, fmt.Sprintf("s-%02d", i), 1))
	}
	wait(map[string]int{"research": 8, "serving": 4})
	// The split holds: preemption stopped at the weights' shares, it did
	// not pass through them.
	c.holdsFor(t, 3*time.Second, func(ctx context.Context) (map[string]int, error) { return c.quotaHeld(ctx, "research", "serving") }, map[string]int{"research": 8, "serving": 4})
	t.Logf("after serving asked for 12: research 8, serving 4 (2:1, the weights) in %s", time.Since(begin).Round(time.Millisecond))
}
