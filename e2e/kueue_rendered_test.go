//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

const (
	// hardwareProfileAnnotation is the annotation Open Data Hub puts on a
	// workload made from a HardwareProfile.
	hardwareProfileAnnotation   = "opendatahub.io/hardware-profile-name"
	hardwareProfileNSAnnotation = "opendatahub.io/hardware-profile-namespace"
	// kueuePriorityLabel names a workload's WorkloadPriorityClass; ODH sets
	// it from the HardwareProfile's kueue.priorityClass.
	kueuePriorityLabel = "kueue.x-k8s.io/priority-class"
	// migProfile is gpu-pools' MIG-slice profile the MIG scenario uses.
	migProfile = "inference-3g"
	// sharedTypesProfile is hetero-prod's profile of two types (H200
	// first, else A100 80GB) of teams under one parent Cohort.
	sharedTypesProfile = "large-memory"
)

// kueueConfig is the Kueue Configuration fragment the tree renders (its
// ConfigMap render.KueueConfigMapName), for the admin to merge, and the
// team namespaces the tree makes.
func kueueConfig(t testing.TB, objs []rendered) (fragment string, namespaces []string) {
	t.Helper()
	for _, r := range objs {
		switch {
		case r.obj.GetKind() == "ConfigMap" && r.obj.GetName() == render.KueueConfigMapName:
			fragment, _, _ = unstructured.NestedString(r.obj.Object, "data", "configuration.yaml")
		case r.obj.GetKind() == "Namespace":
			namespaces = append(namespaces, r.obj.GetName())
		}
	}
	if fragment == "" {
		t.Fatalf("the tree has no ConfigMap %s with configuration.yaml", render.KueueConfigMapName)
	}
	return fragment, namespaces
}

// waitActive waits until Kueue reports the queue (a ClusterQueue or a
// LocalQueue) Active.
func (s *suite) waitActive(ctx context.Context, obj *unstructured.Unstructured) error {
	return poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		got, err := s.get(ctx, obj)
		if err != nil {
			return false, err.Error(), nil
		}
		cond := condition(got, "Active")
		return cond != nil && cond["status"] == "True", "Active: " + jsonString(cond), nil
	})
}

// kueueQueueKinds are the kinds of the rendered queues/ and priorities/
// folders that Kueue reads, in the order they are created: what a
// ClusterQueue names exists before it.
var kueueQueueKinds = []string{"WorkloadPriorityClass", "ResourceFlavor", "Cohort", "ClusterQueue", "LocalQueue"}

// kueueCluster is an example's rendered queues applied to a control plane
// with kube-scheduler and Kueue's manager, and nodes made for its
// ResourceFlavors.
type kueueCluster struct {
	s        *suite
	example  string
	objs     map[string]map[string]*unstructured.Unstructured // kind → name → object (namespaced kinds: namespace/name)
	profiles map[string]*unstructured.Unstructured            // HardwareProfiles by name
}

// TestKueueRendered applies what accelc renders for the Kueue examples (the
// team Namespaces, WorkloadPriorityClasses, ResourceFlavors, Cohorts,
// ClusterQueues and LocalQueues) to a control plane with kube-scheduler and
// Kueue's manager, on one node per ResourceFlavor carrying the flavor's
// node labels and taints, and creates pods as Open Data Hub creates them
// from a Queue HardwareProfile: the profile's name in the
// opendatahub.io/hardware-profile-name annotation, its localQueueName in
// the kueue.x-k8s.io/queue-name label, its priorityClass in
// kueue.x-k8s.io/priority-class, no node selector and no tolerations
// (Gatekeeper, whose mutation would add them, is not running here): the
// rendered ResourceFlavors' tolerations, which Kueue adds on admission, let
// them onto the flavors' tainted nodes. Every size comes from the rendered
// quotas and profiles.
func TestKueueRendered(t *testing.T) {
	root := repoRoot(t)
	accelc := program(t, root, filepath.Join("bin", "accelc"), "build")
	t.Run("hetero-prod", func(t *testing.T) {
		c := startKueueRendered(t, root, accelc, "hetero-prod")
		t.Run("flavor-order-then-quota", c.flavorOrderThenQuota)
		t.Run("flavor-order-under-parent", c.flavorOrderUnderParent)
		t.Run("borrowing-limit", c.borrowingLimit)
	})
	t.Run("hetero-prod-preemption", func(t *testing.T) {
		c := startKueueRendered(t, root, accelc, "hetero-prod")
		t.Run("tier-preemption", c.tierPreemption)
		t.Run("reclaim", c.reclaim)
	})
	t.Run("gpu-pools", func(t *testing.T) {
		c := startKueueRendered(t, root, accelc, "gpu-pools")
		t.Run("job", c.job)
		t.Run("mig-slice", c.migSlice)
	})
	t.Run("mixed-mig", func(t *testing.T) {
		c := startKueueRendered(t, root, accelc, "e2e/testdata/mixed-mig")
		t.Run("slices-per-profile", c.slicesPerProfile)
	})
}

// startKueueRendered renders the example, starts a control plane with
// kube-scheduler and Kueue managing the example's team namespaces, creates
// the namespaces, the queue objects and the nodes, and waits until every
// ClusterQueue and LocalQueue is Active.
func startKueueRendered(t *testing.T, root, accelc, example string) *kueueCluster {
	t.Helper()
	s := &suite{root: root, work: t.TempDir(), accelc: accelc}
	c := startRenderedQueues(t, s, example, kueueQueueKinds)
	s.createNodes(t, c.writeNodes(t), nil)
	s.startKubelet(t)
	return c
}

// startRenderedQueues renders the example and reads its queue objects of
// kinds (created in that order), its HardwareProfiles and its
// AssignMetadata (the scenarios read the team tiers; not created:
// Gatekeeper does not run here); starts a control plane with
// kube-scheduler and Kueue managing the team namespaces with the
// Configuration fragment accelc renders for the admin to merge; creates
// the namespaces and the queue objects, and waits until every
// ClusterQueue and LocalQueue is Active.
func startRenderedQueues(t *testing.T, s *suite, example string, kinds []string) *kueueCluster {
	t.Helper()
	tree := readTree(t, s.render(t, example, "kueue"))
	c := &kueueCluster{s: s, example: example, objs: map[string]map[string]*unstructured.Unstructured{}, profiles: map[string]*unstructured.Unstructured{}}
	for _, r := range tree {
		kind := r.obj.GetKind()
		switch {
		case kind == "HardwareProfile":
			c.profiles[r.obj.GetName()] = r.obj
			continue
		case kind == "AssignMetadata":
		case !slices.Contains(kinds, kind):
			continue
		}
		if c.objs[kind] == nil {
			c.objs[kind] = map[string]*unstructured.Unstructured{}
		}
		key := r.obj.GetName()
		if ns := r.obj.GetNamespace(); ns != "" {
			key = ns + "/" + key
		}
		c.objs[kind][key] = r.obj
	}
	fragment, namespaces := kueueConfig(t, tree)
	if len(c.objs["ClusterQueue"]) == 0 || len(namespaces) == 0 {
		t.Fatalf("%s renders no ClusterQueue or no team Namespace: it does not use Kueue", example)
	}

	begin := time.Now()
	s.cp = controlplane.Start(t, controlplane.WithScheduler())
	// Queues that wait for a ProvisioningRequest need the API to be served.
	kq := s.cp.StartKueue(t, controlplane.KueueOptions{Namespaces: namespaces, Fragment: []byte(fragment), ProvisioningRequests: slices.Contains(kinds, "AdmissionCheck")})
	t.Logf("%s: control plane and Kueue up in %s, managing %v; Kueue's log: %s", example, time.Since(begin).Round(time.Millisecond), namespaces, kq.LogPath())
	s.connect(t)

	ctx := t.Context()
	create := func(obj *unstructured.Unstructured) {
		r, err := s.resource(s.dyn, obj)
		if err == nil {
			_, err = r.Create(ctx, obj.DeepCopy(), metav1.CreateOptions{FieldManager: "accelc-e2e"})
		}
		if err != nil {
			t.Fatalf("%s: creating the rendered %s %s: %v", example, obj.GetKind(), obj.GetName(), err)
		}
	}
	for _, r := range tree {
		if r.obj.GetKind() == "Namespace" {
			create(r.obj)
		}
	}
	var counts []string
	for _, kind := range kinds {
		for _, key := range slices.Sorted(maps.Keys(c.objs[kind])) {
			create(c.objs[kind][key])
		}
		counts = append(counts, fmt.Sprintf("%d %ss", len(c.objs[kind]), kind))
	}
	t.Logf("%s: created %s", example, strings.Join(counts, ", "))
	for _, kind := range []string{"ClusterQueue", "LocalQueue"} {
		for _, key := range slices.Sorted(maps.Keys(c.objs[kind])) {
			if err := s.waitActive(ctx, c.objs[kind][key]); err != nil {
				t.Fatalf("%s: the rendered %s %s never became Active: %v", example, kind, key, err)
			}
		}
	}
	t.Logf("%s: every ClusterQueue and LocalQueue Active", example)
	return c
}

// writeNodes writes a node snapshot with one node per ResourceFlavor that
// selects nodes: the flavor's node labels and taints, the taints every GPU
// node of the example's inventory carries, and of each resource the flavor
// holds quota of, the sum of every Cohort's nominal quota, so that Kueue,
// not room on the nodes, decides what runs.
func (c *kueueCluster) writeNodes(t *testing.T) string {
	t.Helper()
	gpuTaints := c.inventoryGPUTaints(t)
	var items []any
	for _, name := range slices.Sorted(maps.Keys(c.objs["ResourceFlavor"])) {
		rf := c.objs["ResourceFlavor"][name]
		labels, _, _ := unstructured.NestedStringMap(rf.Object, "spec", "nodeLabels")
		if len(labels) == 0 {
			continue
		}
		node := flavorNode(name)
		labels["kubernetes.io/hostname"] = node
		labels["kubernetes.io/os"] = "linux"
		labels["kubernetes.io/arch"] = "amd64"
		capacity := map[string]string{"cpu": "4096", "memory": "64Ti", "pods": "1000"}
		sums := map[string]resource.Quantity{}
		for _, cohort := range c.objs["Cohort"] {
			for _, res := range flavorResources(cohort, name) {
				q := sums[res.name]
				q.Add(res.nominal)
				sums[res.name] = q
			}
		}
		for res, q := range sums {
			capacity[res] = q.String()
		}
		taints, _, _ := unstructured.NestedSlice(rf.Object, "spec", "nodeTaints")
		taints = append(taints, gpuTaints...)
		items = append(items, map[string]any{
			"apiVersion": "v1",
			"kind":       "Node",
			"metadata":   map[string]any{"name": node, "labels": labels},
			"spec":       map[string]any{"taints": taints},
			"status": map[string]any{
				"capacity":   capacity,
				"conditions": []map[string]string{{"type": "Ready", "status": "True"}},
			},
		})
		t.Logf("%s: node %s for ResourceFlavor %s: labels %v, taints %s, capacity %v", c.example, node, name, labels, jsonString(taints), capacity)
	}
	data, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(c.s.work, filepath.Base(c.example)+"-nodes.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// inventoryGPUTaints are the taints every node of the example's inventory
// that has GPUs carries (the cloud's nvidia.com/gpu taint): the flavors'
// nodes carry them too, and pods reach them only with the tolerations the
// rendered flavors give them.
func (c *kueueCluster) inventoryGPUTaints(t *testing.T) []any {
	t.Helper()
	file := filepath.Join(c.s.root, clusterDir(c.example), "inventory.json")
	snap, err := inventory.ReadSnapshot(file)
	if err != nil {
		t.Fatalf("reading %s: %v", file, err)
	}
	var common []inventory.Taint
	first := true
	for _, n := range snap.Nodes {
		if n.Status.Capacity[string(gpu)] == "" {
			continue
		}
		if first {
			common, first = slices.Clone(n.Spec.Taints), false
			continue
		}
		common = slices.DeleteFunc(common, func(tn inventory.Taint) bool { return !slices.Contains(n.Spec.Taints, tn) })
	}
	var out []any
	for _, tn := range common {
		m := map[string]any{"key": tn.Key, "effect": tn.Effect}
		if tn.Value != "" {
			m["value"] = tn.Value
		}
		out = append(out, m)
	}
	return out
}

func flavorNode(flavor string) string { return "node-" + flavor }

// quotaResource is one resource of a flavor in a Cohort's or
// ClusterQueue's resourceGroups.
type quotaResource struct {
	name           string
	nominal        resource.Quantity
	borrowingLimit *resource.Quantity
	lendingLimit   *resource.Quantity
}

// flavorResources are the resources the object's resourceGroups hold of
// the flavor.
func flavorResources(obj *unstructured.Unstructured, flavor string) []quotaResource {
	groups, _, _ := unstructured.NestedSlice(obj.Object, "spec", "resourceGroups")
	var out []quotaResource
	for _, g := range groups {
		flavors, _, _ := unstructured.NestedSlice(g.(map[string]any), "flavors")
		for _, f := range flavors {
			fm := f.(map[string]any)
			if fm["name"] != flavor {
				continue
			}
			resources, _, _ := unstructured.NestedSlice(fm, "resources")
			for _, r := range resources {
				rm := r.(map[string]any)
				qr := quotaResource{name: fmt.Sprint(rm["name"]), nominal: resource.MustParse(fmt.Sprint(rm["nominalQuota"]))}
				if v, ok := rm["borrowingLimit"]; ok {
					q := resource.MustParse(fmt.Sprint(v))
					qr.borrowingLimit = &q
				}
				if v, ok := rm["lendingLimit"]; ok {
					q := resource.MustParse(fmt.Sprint(v))
					qr.lendingLimit = &q
				}
				out = append(out, qr)
			}
		}
	}
	return out
}

// quota is the object's quota of the resource on the flavor; ok is false
// when it holds none.
func quota(obj *unstructured.Unstructured, flavor, res string) (quotaResource, bool) {
	for _, r := range flavorResources(obj, flavor) {
		if r.name == res {
			return r, true
		}
	}
	return quotaResource{}, false
}

// queueProfile is a ClusterQueue of the rendered tree with what a pod of
// its profile needs.
type queueProfile struct {
	cq        *unstructured.Unstructured
	cohort    *unstructured.Unstructured
	profile   *unstructured.Unstructured // the HardwareProfile
	namespace string                     // the first of the team's namespaces
	resource  string                     // the accelerator resource its pods request
	flavors   []string                   // its accelerator flavors, in order
	max       int64                      // the profile's most devices per pod
	tier      string                     // the team's tier: the class accelc's mutation labels its pods with
}

// queueOf reads the ClusterQueue's profile, Cohort, namespace and
// accelerator flavors.
func (c *kueueCluster) queueOf(t *testing.T, cq *unstructured.Unstructured) queueProfile {
	t.Helper()
	q := queueProfile{cq: cq}
	name := cq.GetAnnotations()["accelc.io/profile"]
	if q.profile = c.profiles[name]; q.profile == nil {
		t.Fatalf("ClusterQueue %s names profile %q, which has no HardwareProfile", cq.GetName(), name)
	}
	cohort, _, _ := unstructured.NestedString(cq.Object, "spec", "cohortName")
	if q.cohort = c.objs["Cohort"][cohort]; q.cohort == nil {
		t.Fatalf("ClusterQueue %s is in Cohort %q, which is not rendered", cq.GetName(), cohort)
	}
	exprs, _, _ := unstructured.NestedSlice(cq.Object, "spec", "namespaceSelector", "matchExpressions")
	for _, e := range exprs {
		if vals, _, _ := unstructured.NestedStringSlice(e.(map[string]any), "values"); len(vals) > 0 {
			q.namespace = vals[0]
			break
		}
	}
	q.tier = c.tiers()[q.namespace]
	ids, _, _ := unstructured.NestedSlice(q.profile.Object, "spec", "identifiers")
	for _, id := range ids {
		m := id.(map[string]any)
		if m["resourceType"] == "Accelerator" {
			q.resource = fmt.Sprint(m["identifier"])
			max := resource.MustParse(fmt.Sprint(m["maxCount"]))
			q.max = max.Value()
		}
	}
	groups, _, _ := unstructured.NestedSlice(cq.Object, "spec", "resourceGroups")
	for _, g := range groups {
		covered, _, _ := unstructured.NestedStringSlice(g.(map[string]any), "coveredResources")
		if !slices.Contains(covered, q.resource) {
			continue
		}
		flavors, _, _ := unstructured.NestedSlice(g.(map[string]any), "flavors")
		for _, f := range flavors {
			q.flavors = append(q.flavors, fmt.Sprint(f.(map[string]any)["name"]))
		}
	}
	if q.namespace == "" || q.resource == "" || q.max == 0 || len(q.flavors) == 0 {
		t.Fatalf("ClusterQueue %s (profile %s): namespace %q, accelerator %q (at most %d), flavors %v: cannot make a pod of it", cq.GetName(), name, q.namespace, q.resource, q.max, q.flavors)
	}
	return q
}

func (q queueProfile) localQueue() string {
	lq, _, _ := unstructured.NestedString(q.profile.Object, "spec", "scheduling", "kueue", "localQueueName")
	return lq
}

// kueue is the queue helper for the ClusterQueue's pods in its namespace.
func (c *kueueCluster) kueue(q queueProfile) *kueueQueue {
	return &kueueQueue{s: c.s, ns: q.namespace, queue: q.localQueue(), cq: q.cq.GetName()}
}

// pod is a pause pod as Open Data Hub makes one from the HardwareProfile
// (annotation, queue and priority labels, the profile's default CPU and
// memory, count devices, no node selector, no tolerations). A profile that
// names no WorkloadPriorityClass leaves the label to accelc's mutation,
// which gives it the team's tier; Gatekeeper does not run here, so the pod
// carries the tier already.
func (q queueProfile) pod(t *testing.T, name string, count int64) *corev1.Pod {
	t.Helper()
	hwp := q.profile
	labels := map[string]string{kueueQueueLabel: q.localQueue()}
	if pc, _, _ := unstructured.NestedString(hwp.Object, "spec", "scheduling", "kueue", "priorityClass"); pc != "" {
		labels[kueuePriorityLabel] = pc
	} else if q.tier != "" {
		labels[kueuePriorityLabel] = q.tier
	}
	requests := corev1.ResourceList{corev1.ResourceName(q.resource): *resource.NewQuantity(count, resource.DecimalSI)}
	ids, _, _ := unstructured.NestedSlice(hwp.Object, "spec", "identifiers")
	for _, id := range ids {
		m := id.(map[string]any)
		if rt := m["resourceType"]; rt == "CPU" || rt == "Memory" {
			requests[corev1.ResourceName(fmt.Sprint(m["identifier"]))] = resource.MustParse(fmt.Sprint(m["defaultCount"]))
		}
	}
	limits := corev1.ResourceList{corev1.ResourceName(q.resource): requests[corev1.ResourceName(q.resource)]}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: q.namespace,
			Labels:    labels,
			Annotations: map[string]string{
				hardwareProfileAnnotation:   hwp.GetName(),
				hardwareProfileNSAnnotation: hwp.GetNamespace(),
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:      "main",
				Image:     "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: requests, Limits: limits},
			}},
		},
	}
}

// createGated creates the pod and checks that Kueue's webhook gated it.
func (c *kueueCluster) createGated(t *testing.T, pod *corev1.Pod) time.Time {
	t.Helper()
	begin := time.Now()
	created, err := c.s.client.CoreV1().Pods(pod.Namespace).Create(t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	if !gated(created) {
		t.Fatalf("pod %s/%s was created without the %s scheduling gate: Kueue's pod webhook did not take it (gates %v)", pod.Namespace, pod.Name, kueueGate, created.Spec.SchedulingGates)
	}
	return begin
}

// waitRunsOn waits until Kueue admits the pod's Workload with the flavor
// for the accelerator, lifts its gate and injects the flavor's node labels,
// and kube-scheduler binds it to the flavor's node.
func (c *kueueCluster) waitRunsOn(t *testing.T, q queueProfile, name, flavor string, since time.Time) {
	t.Helper()
	ctx := t.Context()
	kq := c.kueue(q)
	pod, got, err := kq.admitted(ctx, name)
	if err != nil {
		t.Fatalf("pod %s/%s not admitted: %v\n%s%s", q.namespace, name, err, kq.dump(ctx), c.cohortStatus(ctx, q))
	}
	admitted := time.Since(since)
	if got != flavor {
		t.Fatalf("pod %s/%s admitted with flavor %s, want %s (ClusterQueue %s's order %v)\n%s%s", q.namespace, name, got, flavor, q.cq.GetName(), q.flavors, kq.dump(ctx), c.cohortStatus(ctx, q))
	}
	want, _, _ := unstructured.NestedStringMap(c.objs["ResourceFlavor"][flavor].Object, "spec", "nodeLabels")
	for k, v := range want {
		if pod.Spec.NodeSelector[k] != v {
			t.Fatalf("pod %s/%s admitted with %s, but its nodeSelector %v lacks the flavor's %s=%s", q.namespace, name, flavor, pod.Spec.NodeSelector, k, v)
		}
	}
	node, err := c.s.waitBound(ctx, pod)
	if err != nil {
		t.Fatalf("%v\n%s", err, kq.dump(ctx))
	}
	if node.Name != flavorNode(flavor) {
		t.Fatalf("pod %s/%s admitted with flavor %s was bound to %s, not %s", q.namespace, name, flavor, node.Name, flavorNode(flavor))
	}
	t.Logf("pod %s/%s (%s %s): admitted with flavor %s after %s, nodeSelector %v, bound to %s after %s",
		q.namespace, name, pod.Spec.Containers[0].Resources.Limits.Name(corev1.ResourceName(q.resource), resource.DecimalSI), q.resource,
		flavor, admitted.Round(time.Millisecond), pod.Spec.NodeSelector, node.Name, time.Since(since).Round(time.Millisecond))
}

// cohortStatus is the status of the ClusterQueue's Cohort and of its
// parent's other Cohorts, for failure messages.
func (c *kueueCluster) cohortStatus(ctx context.Context, q queueProfile) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(c.objs["Cohort"])) {
		got, err := c.s.get(ctx, c.objs["Cohort"][name])
		if err != nil {
			fmt.Fprintf(&b, "getting Cohort %s: %v\n", name, err)
			continue
		}
		fmt.Fprintf(&b, "Cohort %s status: %s\n", name, jsonString(got.Object["status"]))
	}
	return b.String()
}

// flavorOrderThenQuota: a profile with several accelerator flavors, of a
// team whose Cohort has no parent (its budget is its own quota): pods of
// the profile's largest size land on the first flavor while the team's
// quota of it has room, then on the next; past every flavor's quota a pod
// stays gated, and runs on the first flavor once one of the first pods
// finishes.
func (c *kueueCluster) flavorOrderThenQuota(t *testing.T) {
	var q queueProfile
	for _, name := range slices.Sorted(maps.Keys(c.objs["ClusterQueue"])) {
		cand := c.queueOf(t, c.objs["ClusterQueue"][name])
		if parent, _, _ := unstructured.NestedString(cand.cohort.Object, "spec", "parentName"); parent == "" && len(cand.flavors) > 1 {
			q = cand
			break
		}
	}
	if q.cq == nil {
		t.Fatalf("%s renders no ClusterQueue with several flavors in a Cohort without a parent", c.example)
	}
	first := c.fillInOrder(t, q)
	late := q.profile.GetName() + "-late"
	c.createGated(t, q.pod(t, late, q.max))
	c.kueue(q).staysGated(t, late)
	c.kueue(q).succeed(t, first)
	c.waitRunsOn(t, q, late, q.flavors[0], time.Now())
}

// fillInOrder creates pods of the profile's largest size until the
// team's quota of each of the ClusterQueue's flavors is used, checking
// that each lands on the first flavor with room; it returns the first
// pod's name.
func (c *kueueCluster) fillInOrder(t *testing.T, q queueProfile) string {
	t.Helper()
	t.Logf("ClusterQueue %s: profile %s, flavors %v, Cohort %s, pods in %s naming LocalQueue %s, %d %s each",
		q.cq.GetName(), q.profile.GetName(), q.flavors, q.cohort.GetName(), q.namespace, q.localQueue(), q.max, q.resource)
	var n int
	var first string
	for _, f := range q.flavors {
		quota, ok := quota(q.cohort, f, q.resource)
		if !ok || quota.nominal.Value() < q.max {
			t.Fatalf("Cohort %s holds %v of %s on %s, less than one pod's %d", q.cohort.GetName(), quota.nominal.String(), q.resource, f, q.max)
		}
		pods := quota.nominal.Value() / q.max
		t.Logf("flavor %s: the team's quota is %s, room for %d pods", f, quota.nominal.String(), pods)
		for range pods {
			n++
			name := fmt.Sprintf("%s-%d", q.profile.GetName(), n)
			since := c.createGated(t, q.pod(t, name, q.max))
			c.waitRunsOn(t, q, name, f, since)
			if first == "" {
				first = name
			}
		}
	}
	return first
}

// slicesPerProfile: a team's quota of a MIG config that cuts each GPU into
// two profiles under the mixed strategy, given per profile: each profile's
// pods fill their own slice's quota, on the flavors in the profile's
// order (a config of its slice alone, then the mixed one), and a pod past
// it stays gated; the other profile's quota of the mixed config is not
// touched by them.
func (c *kueueCluster) slicesPerProfile(t *testing.T) {
	var queues []queueProfile
	for _, name := range slices.Sorted(maps.Keys(c.objs["ClusterQueue"])) {
		queues = append(queues, c.queueOf(t, c.objs["ClusterQueue"][name]))
	}
	shared := map[string]int{}
	for _, q := range queues {
		for _, f := range q.flavors {
			shared[f]++
		}
	}
	if !slices.ContainsFunc(queues, func(q queueProfile) bool {
		return slices.ContainsFunc(q.flavors, func(f string) bool { return shared[f] > 1 })
	}) {
		t.Fatalf("%s renders no flavor that two profiles' ClusterQueues share", c.example)
	}
	for _, q := range queues {
		c.fillInOrder(t, q)
		late := q.profile.GetName() + "-late"
		c.createGated(t, q.pod(t, late, q.max))
		c.kueue(q).staysGated(t, late)
	}
}

// borrowingLimit: a team whose Cohort has a parent and a borrowingLimit
// on a flavor fills its own quota of it, borrows from the other Cohorts
// under the parent up to the limit (or what they lend, if less), and a pod
// past that stays gated. (The earlier scenarios leave the other teams
// using less of the flavor than they lend beyond the limit.)
func (c *kueueCluster) borrowingLimit(t *testing.T) {
	var q queueProfile
	var own quotaResource
	for _, name := range slices.Sorted(maps.Keys(c.objs["ClusterQueue"])) {
		cand := c.queueOf(t, c.objs["ClusterQueue"][name])
		if parent, _, _ := unstructured.NestedString(cand.cohort.Object, "spec", "parentName"); parent == "" || len(cand.flavors) != 1 {
			continue
		}
		if r, ok := quota(cand.cohort, cand.flavors[0], cand.resource); ok && r.borrowingLimit != nil {
			q, own = cand, r
			break
		}
	}
	if q.cq == nil {
		t.Fatalf("%s renders no one-flavor ClusterQueue whose Cohort has a parent and a borrowingLimit", c.example)
	}
	flavor := q.flavors[0]
	parent, _, _ := unstructured.NestedString(q.cohort.Object, "spec", "parentName")
	borrow, lenders := c.borrowable(q.cohort, flavor, q.resource)
	if borrow < q.max {
		t.Fatalf("Cohort %s may borrow %d of %s on %s (%v), less than one pod's %d", q.cohort.GetName(), borrow, q.resource, flavor, lenders, q.max)
	}
	ownPods := own.nominal.Value() / q.max
	total := (own.nominal.Value() + borrow) / q.max
	t.Logf("ClusterQueue %s (profile %s) in Cohort %s under %s: its own %s %s on %s, borrowingLimit %s, %v: room for %d pods of %d, %d of them borrowed",
		q.cq.GetName(), q.profile.GetName(), q.cohort.GetName(), parent, own.nominal.String(), q.resource, flavor, own.borrowingLimit.String(), lenders, total, q.max, total-ownPods)
	kq := c.kueue(q)
	c.fill(t, q, flavor, total, ownPods, "the team's own quota of "+flavor+" is used: the next pods borrow")
	late := q.profile.GetName() + "-past-limit"
	c.createGated(t, q.pod(t, late, q.max))
	kq.staysGated(t, late)
	got, err := c.s.get(t.Context(), q.cq)
	if err != nil {
		t.Fatal(err)
	}
	usage, _, _ := unstructured.NestedSlice(got.Object, "status", "flavorsUsage")
	t.Logf("ClusterQueue %s usage: %s", q.cq.GetName(), jsonString(usage))
}

// migSlice: gpu-pools' MIG-slice profile: pods of the profile's largest
// size, with no tolerations of their own, are admitted to the slice's
// tainted flavor against the team's quota of the slice's MIG config, take
// the flavor's tolerations from Kueue and are bound to its node; a pod past
// the quota stays gated.
func (c *kueueCluster) migSlice(t *testing.T) {
	q := c.profileQueue(t, migProfile)
	kq := c.kueue(q)
	flavor := q.flavors[0]
	quota, ok := quota(q.cohort, flavor, q.resource)
	if !ok || quota.nominal.Value() < q.max {
		t.Fatalf("Cohort %s holds %v of %s on %s, less than one pod's %d", q.cohort.GetName(), quota.nominal.String(), q.resource, flavor, q.max)
	}
	pods := quota.nominal.Value() / q.max
	t.Logf("ClusterQueue %s: profile %s, flavors %v, Cohort %s with %s %s on %s: room for %d pods of %d, in %s",
		q.cq.GetName(), migProfile, q.flavors, q.cohort.GetName(), quota.nominal.String(), q.resource, flavor, pods, q.max, q.namespace)

	c.fill(t, q, flavor, pods, pods, "")
	late := migProfile + "-past-quota"
	c.createGated(t, q.pod(t, late, q.max))
	kq.staysGated(t, late)
}

// profileQueue is the rendered ClusterQueue of the profile (its first,
// by name, when several teams may use it).
func (c *kueueCluster) profileQueue(t *testing.T, profile string) queueProfile {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(c.objs["ClusterQueue"])) {
		if cq := c.objs["ClusterQueue"][name]; cq.GetAnnotations()["accelc.io/profile"] == profile {
			return c.queueOf(t, cq)
		}
	}
	t.Fatalf("%s renders no ClusterQueue for profile %s", c.example, profile)
	return queueProfile{}
}

// fill creates n pods of the profile's largest size, named
// <profile>-1…n, and checks that each is admitted to the flavor and bound
// to its node; after the own-th it logs note (the rest borrow).
func (c *kueueCluster) fill(t *testing.T, q queueProfile, flavor string, n, own int64, note string) {
	t.Helper()
	for i := range n {
		name := fmt.Sprintf("%s-%d", q.profile.GetName(), i+1)
		since := c.createGated(t, q.pod(t, name, q.max))
		c.waitRunsOn(t, q, name, flavor, since)
		if i+1 == own && note != "" && own < n {
			t.Log(note)
		}
	}
}

// borrowable is how much of the resource on the flavor the Cohort may
// borrow from the other Cohorts under its parent while they use none of
// it: what they lend (their nominal quota, or their lendingLimit), capped
// by the Cohort's borrowingLimit; lenders says who lends what.
func (c *kueueCluster) borrowable(cohort *unstructured.Unstructured, flavor, res string) (int64, []string) {
	parent, _, _ := unstructured.NestedString(cohort.Object, "spec", "parentName")
	if parent == "" {
		return 0, nil
	}
	var lent int64
	var lenders []string
	for _, name := range slices.Sorted(maps.Keys(c.objs["Cohort"])) {
		other := c.objs["Cohort"][name]
		if p, _, _ := unstructured.NestedString(other.Object, "spec", "parentName"); p != parent || name == cohort.GetName() {
			continue
		}
		if r, ok := quota(other, flavor, res); ok {
			l := r.nominal
			if r.lendingLimit != nil {
				l = *r.lendingLimit
			}
			lent += l.Value()
			lenders = append(lenders, fmt.Sprintf("%s lends %s", name, l.String()))
		}
	}
	if own, ok := quota(cohort, flavor, res); ok && own.borrowingLimit != nil && own.borrowingLimit.Value() < lent {
		return own.borrowingLimit.Value(), lenders
	}
	return lent, lenders
}

// flavorOrderUnderParent: the two-type profile of a team whose Cohort has
// a parent. Every admission of the team's ClusterQueue borrows (its own
// quota is 0) and whenCanBorrow is MayStopSearch, so the first flavor
// takes pods while the team's quota of it, and then what the other teams
// under the parent lend of it, has room; the next pod lands on the second
// flavor.
func (c *kueueCluster) flavorOrderUnderParent(t *testing.T) {
	q := c.profileQueue(t, sharedTypesProfile)
	if len(q.flavors) < 2 {
		t.Fatalf("%s renders no ClusterQueue of profile %s with two flavors or more", c.example, sharedTypesProfile)
	}
	parent, _, _ := unstructured.NestedString(q.cohort.Object, "spec", "parentName")
	if parent == "" {
		t.Fatalf("ClusterQueue %s: its Cohort %s has no parent", q.cq.GetName(), q.cohort.GetName())
	}
	first := q.flavors[0]
	own, ok := quota(q.cohort, first, q.resource)
	if !ok {
		t.Fatalf("Cohort %s holds no %s on %s", q.cohort.GetName(), q.resource, first)
	}
	borrow, lenders := c.borrowable(q.cohort, first, q.resource)
	ownPods := own.nominal.Value() / q.max
	pods := (own.nominal.Value() + borrow) / q.max
	t.Logf("ClusterQueue %s: profile %s, flavors %v, Cohort %s under %s with %s %s on %s, %v: room for %d pods of %d there (%d of them the team's own), in %s",
		q.cq.GetName(), q.profile.GetName(), q.flavors, q.cohort.GetName(), parent, own.nominal.String(), q.resource, first, lenders, pods, q.max, ownPods, q.namespace)
	c.fill(t, q, first, pods, ownPods, "the team's own quota of "+first+" is used: the next pods on it borrow from the parent's other Cohorts")
	name := q.profile.GetName() + "-next"
	since := c.createGated(t, q.pod(t, name, q.max))
	c.waitRunsOn(t, q, name, q.flavors[1], since)
}
