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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/accelc/accelc/internal/controlplane"
)

const (
	// kueueQueueLabel names a pod's LocalQueue; kueueGate is the scheduling
	// gate Kueue's pod webhook puts on a pod until its Workload is admitted.
	kueueQueueLabel = "kueue.x-k8s.io/queue-name"
	kueueGate       = "kueue.x-k8s.io/admission"
	// gpu is the resource the flavors hold quota of.
	gpu = corev1.ResourceName("nvidia.com/gpu")
	// productLabel is GPU Feature Discovery's product label, which the
	// flavors select nodes by.
	productLabel = "nvidia.com/gpu.product"

	// admitTimeout bounds Kueue's admission of a workload.
	admitTimeout = 60 * time.Second
	// gatedFor is how long a pod past the quota must stay gated to count
	// as held back rather than not yet looked at.
	gatedFor = 5 * time.Second
)

var (
	workloadGVR       = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}
	clusterQueueGVR   = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "clusterqueues"}
	localQueueGVR     = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "localqueues"}
	resourceFlavorGVR = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "resourceflavors"}
)

// kueueFlavor is one accelerator type: a ResourceFlavor selecting its
// nodes by product label, its quota in the ClusterQueue, and its nodes.
type kueueFlavor struct {
	name    string
	product string
	quota   int
	nodes   []string
	perNode int // nvidia.com/gpu on each node
}

// TestKueue runs Kueue's controller manager against the control plane, with
// kube-scheduler binding what Kueue admits. It does not go through accelc's
// rendering: its queues are written here, so that it shows the controller
// and the harness alone. A ClusterQueue holds two flavors in order, each
// with a nominal quota of two GPUs and nodes with room for four: pods naming
// the LocalQueue land on the first flavor's nodes until its quota is used,
// then on the second's; a pod past both quotas stays gated until another
// finishes, then runs. In a namespace Kueue does not manage the same pod is
// left alone.
func TestKueue(t *testing.T) {
	root := repoRoot(t)
	s := &suite{root: root, work: t.TempDir()}
	begin := time.Now()
	s.cp = controlplane.Start(t, controlplane.WithScheduler())
	const ns = "team-kueue"
	kq := s.cp.StartKueue(t, controlplane.KueueOptions{Namespaces: []string{ns}})
	t.Logf("control plane and Kueue up in %s; Kueue's log: %s", time.Since(begin).Round(time.Millisecond), kq.LogPath())
	s.connect(t)

	flavors := []kueueFlavor{
		{name: "a100-80gb", product: "NVIDIA-A100-SXM4-80GB", quota: 2, nodes: []string{"a100-0", "a100-1"}, perNode: 2},
		{name: "h100-80gb", product: "NVIDIA-H100-80GB-HBM3", quota: 2, nodes: []string{"h100-0", "h100-1"}, perNode: 2},
	}
	// A node of a type no flavor names, with room: no admitted pod may
	// land there.
	const stray = "l4-0"
	s.createNodes(t, kueueNodes(t, s.work, flavors, stray), nil)
	s.ensureNamespaces(t, ns)
	const cq, lq = "gpus", "team-gpus"
	s.applyKueueQueues(t, kq, flavors, cq, ns, lq)

	q := &kueueQueue{s: s, ns: ns, queue: lq, cq: cq}
	var firstPod string
	if !t.Run("flavors-in-order", func(t *testing.T) {
		// Every pod asks for one GPU: the first flavor's quota takes the
		// first two, the second flavor's the next two.
		var n int
		for _, f := range flavors {
			for range f.quota {
				n++
				name := fmt.Sprintf("train-%d", n)
				q.create(t, name)
				q.waitRunsOn(t, name, f)
				if firstPod == "" {
					firstPod = name
				}
			}
		}
	}) {
		t.FailNow()
	}
	t.Run("quota-pending-then-running", func(t *testing.T) {
		const late = "train-late"
		q.create(t, late)
		q.staysGated(t, late)
		// The first pod finishes, as a kubelet would report it; its
		// Workload finishes and gives its GPU back to the first flavor.
		q.succeed(t, firstPod)
		q.waitRunsOn(t, late, flavors[0])
	})
	t.Run("unmanaged-namespace", func(t *testing.T) {
		// Pods are managed only in the team namespace: elsewhere the same
		// pod is not gated, and kube-scheduler alone places it.
		const other = "team-unmanaged"
		s.ensureNamespaces(t, other)
		u := &kueueQueue{s: s, ns: other, queue: lq, cq: cq}
		// Kueue's pod webhook reads the namespace from its informer's
		// cache, which may not have the new namespace yet: it refuses the
		// pod until it does.
		var pod *corev1.Pod
		err := poll(t.Context(), 20*time.Second, func(ctx context.Context) (bool, string, error) {
			var err error
			pod, err = s.client.CoreV1().Pods(other).Create(ctx, u.pod("train-unmanaged"), metav1.CreateOptions{})
			if err != nil && strings.Contains(err.Error(), fmt.Sprintf("Namespace %q not found", other)) {
				return false, err.Error(), nil
			}
			return true, "", err
		})
		if err != nil {
			t.Fatalf("creating pod %s/train-unmanaged: %v", other, err)
		}
		if gated(pod) || pod.Labels["kueue.x-k8s.io/managed"] != "" {
			t.Fatalf("pod %s/%s in a namespace Kueue does not manage was taken by Kueue: gates %v, labels %v", other, pod.Name, pod.Spec.SchedulingGates, pod.Labels)
		}
		node, err := s.waitBound(t.Context(), pod)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("pod %s/%s: not gated, bound to %s by kube-scheduler alone", other, pod.Name, node.Name)
	})
}

// kueueNodes writes a node snapshot (as `kubectl get nodes -o json` gives
// one) of the flavors' nodes and the stray node, for createNodes.
func kueueNodes(t *testing.T, dir string, flavors []kueueFlavor, stray string) string {
	t.Helper()
	node := func(name, product string, gpus int) map[string]any {
		return map[string]any{
			"apiVersion": "v1",
			"kind":       "Node",
			"metadata": map[string]any{"name": name, "labels": map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				productLabel:             product,
				"nvidia.com/gpu.present": "true",
			}},
			"status": map[string]any{
				"capacity":   map[string]string{string(gpu): fmt.Sprint(gpus), "cpu": "64", "memory": "512Gi", "pods": "110"},
				"conditions": []map[string]string{{"type": "Ready", "status": "True"}},
			},
		}
	}
	var items []any
	for _, f := range flavors {
		for _, n := range f.nodes {
			items = append(items, node(n, f.product, f.perNode))
		}
	}
	items = append(items, node(stray, "NVIDIA-L4", 8))
	data, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "kueue-nodes.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// applyKueueQueues creates the flavors, a ClusterQueue holding them in
// order, and a LocalQueue in ns pointing at it, and waits until both queues
// are Active; it reads the ClusterQueue back at v1beta1, through Kueue's
// conversion webhook.
func (s *suite) applyKueueQueues(t *testing.T, kq *controlplane.Kueue, flavors []kueueFlavor, cq, ns, lq string) {
	t.Helper()
	ctx := t.Context()
	var cqFlavors []any
	for _, f := range flavors {
		rf := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kueue.x-k8s.io/v1beta2",
			"kind":       "ResourceFlavor",
			"metadata":   map[string]any{"name": f.name},
			"spec":       map[string]any{"nodeLabels": map[string]any{productLabel: f.product}},
		}}
		if _, err := s.dyn.Resource(resourceFlavorGVR).Create(ctx, rf, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating ResourceFlavor %s: %v", f.name, err)
		}
		cqFlavors = append(cqFlavors, map[string]any{
			"name":      f.name,
			"resources": []any{map[string]any{"name": string(gpu), "nominalQuota": fmt.Sprint(f.quota)}},
		})
	}
	cqObj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2",
		"kind":       "ClusterQueue",
		"metadata":   map[string]any{"name": cq},
		"spec": map[string]any{
			"namespaceSelector": map[string]any{},
			"resourceGroups":    []any{map[string]any{"coveredResources": []any{string(gpu)}, "flavors": cqFlavors}},
		},
	}}
	if _, err := s.dyn.Resource(clusterQueueGVR).Create(ctx, cqObj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ClusterQueue %s: %v", cq, err)
	}
	lqObj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kueue.x-k8s.io/v1beta2",
		"kind":       "LocalQueue",
		"metadata":   map[string]any{"name": lq, "namespace": ns},
		"spec":       map[string]any{"clusterQueue": cq},
	}}
	if _, err := s.dyn.Resource(localQueueGVR).Namespace(ns).Create(ctx, lqObj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating LocalQueue %s/%s: %v", ns, lq, err)
	}
	for _, c := range []struct {
		what string
		r    dynamic.ResourceInterface
		name string
	}{
		{"ClusterQueue " + cq, s.dyn.Resource(clusterQueueGVR), cq},
		{"LocalQueue " + ns + "/" + lq, s.dyn.Resource(localQueueGVR).Namespace(ns), lq},
	} {
		err := poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
			obj, err := c.r.Get(ctx, c.name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			cond := condition(obj, "Active")
			return cond != nil && cond["status"] == "True", "Active: " + jsonString(cond), nil
		})
		if err != nil {
			t.Fatalf("%s never Active: %v", c.what, err)
		}
	}
	t.Logf("ResourceFlavors %v in ClusterQueue %s, LocalQueue %s/%s: Active", flavorNames(flavors), cq, ns, lq)
	// Stored as v1beta2; read as v1beta1, the API server converts it
	// through Kueue's conversion webhook.
	crd, err := s.dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).
		Get(ctx, clusterQueueGVR.Resource+"."+clusterQueueGVR.Group, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if url, _, _ := unstructured.NestedString(crd.Object, "spec", "conversion", "webhook", "clientConfig", "url"); url != kq.WebhookURL()+"/convert" {
		t.Fatalf("the ClusterQueue CRD's conversion webhook is %q, want %q", url, kq.WebhookURL()+"/convert")
	}
	old := clusterQueueGVR
	old.Version = "v1beta1"
	got, err := s.dyn.Resource(old).Get(ctx, cq, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading ClusterQueue %s as v1beta1 (through Kueue's conversion webhook): %v", cq, err)
	}
	if got.GetAPIVersion() != "kueue.x-k8s.io/v1beta1" {
		t.Fatalf("ClusterQueue %s read as v1beta1 came back as %s", cq, got.GetAPIVersion())
	}
	t.Logf("ClusterQueue %s read as v1beta1 through Kueue's conversion webhook", cq)
}

func flavorNames(flavors []kueueFlavor) []string {
	var out []string
	for _, f := range flavors {
		out = append(out, f.name)
	}
	return out
}

// condition is the status condition of the type, nil when there is none.
func condition(obj *unstructured.Unstructured, typ string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

// kueueQueue creates pods in one LocalQueue and follows their Workloads.
type kueueQueue struct {
	s     *suite
	ns    string
	queue string
	cq    string
}

// create creates q.pod(name) and checks that Kueue's webhook gated it.
func (q *kueueQueue) create(t *testing.T, name string) {
	t.Helper()
	created, err := q.s.client.CoreV1().Pods(q.ns).Create(t.Context(), q.pod(name), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s/%s: %v", q.ns, name, err)
	}
	if !gated(created) {
		t.Fatalf("pod %s/%s was created without the %s scheduling gate: Kueue's pod webhook did not take it (gates %v)", q.ns, name, kueueGate, created.Spec.SchedulingGates)
	}
}

// pod is a pause pod naming the queue and asking for one GPU.
func (q *kueueQueue) pod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: q.ns, Labels: map[string]string{kueueQueueLabel: q.queue}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "train",
				Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{gpu: resource.MustParse("1")},
				},
			}},
		},
	}
}

// admitted waits until Kueue has admitted the pod's Workload and lifted
// its scheduling gate, and returns the pod and the flavor it was admitted
// with.
func (q *kueueQueue) admitted(ctx context.Context, name string) (*corev1.Pod, string, error) {
	var pod *corev1.Pod
	var flavor string
	err := poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		var err error
		if pod, err = q.s.client.CoreV1().Pods(q.ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return false, err.Error(), nil
		}
		wl, err := q.workload(ctx, pod)
		if err != nil {
			return false, err.Error(), nil
		}
		if wl == nil {
			return false, "no Workload yet", nil
		}
		flavor = admittedFlavor(wl)
		return flavor != "" && !gated(pod), fmt.Sprintf("Workload %s: %s; pod gates %v", wl.GetName(), workloadState(wl), pod.Spec.SchedulingGates), nil
	})
	return pod, flavor, err
}

func gated(p *corev1.Pod) bool {
	return slices.ContainsFunc(p.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueueGate })
}

// workload is the pod's Workload (the one it owns), nil while there is
// none.
func (q *kueueQueue) workload(ctx context.Context, pod *corev1.Pod) (*unstructured.Unstructured, error) {
	list, err := q.s.dyn.Resource(workloadGVR).Namespace(q.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		for _, ref := range list.Items[i].GetOwnerReferences() {
			if ref.UID == pod.UID {
				return &list.Items[i], nil
			}
		}
	}
	return nil, nil
}

// admittedFlavor is the flavor the Workload was admitted with for its
// accelerator (whatever resource other than CPU and memory it requests:
// nvidia.com/gpu, a MIG slice's), "" while it is not admitted.
func admittedFlavor(wl *unstructured.Unstructured) string {
	if wl == nil {
		return ""
	}
	if c := condition(wl, "Admitted"); c == nil || c["status"] != "True" {
		return ""
	}
	psas, _, _ := unstructured.NestedSlice(wl.Object, "status", "admission", "podSetAssignments")
	for _, psa := range psas {
		flavors, _, _ := unstructured.NestedStringMap(psa.(map[string]any), "flavors")
		for _, res := range slices.Sorted(maps.Keys(flavors)) {
			if res != string(corev1.ResourceCPU) && res != string(corev1.ResourceMemory) {
				return flavors[res]
			}
		}
	}
	return ""
}

// waitRunsOn waits until Kueue admits the pod's Workload with flavor f, the
// pod's gate is lifted, and kube-scheduler binds it to one of f's nodes.
func (q *kueueQueue) waitRunsOn(t *testing.T, name string, f kueueFlavor) {
	t.Helper()
	ctx := t.Context()
	pod, flavor, err := q.admitted(ctx, name)
	if err != nil {
		t.Fatalf("pod %s/%s not admitted: %v\n%s", q.ns, name, err, q.dump(ctx))
	}
	if flavor != f.name {
		t.Fatalf("pod %s/%s admitted with flavor %s, want %s\n%s", q.ns, name, flavor, f.name, q.dump(ctx))
	}
	if got := pod.Spec.NodeSelector[productLabel]; got != f.product {
		t.Fatalf("pod %s/%s admitted with %s, but its nodeSelector has %s=%q, want %q", q.ns, name, f.name, productLabel, got, f.product)
	}
	node, err := q.s.waitBound(ctx, pod)
	if err != nil {
		t.Fatalf("%v\n%s", err, q.dump(ctx))
	}
	if !slices.Contains(f.nodes, node.Name) {
		t.Fatalf("pod %s/%s admitted with flavor %s was bound to %s, not one of %v", q.ns, name, f.name, node.Name, f.nodes)
	}
	t.Logf("pod %s: admitted with flavor %s, gate lifted, nodeSelector %s=%s, bound to %s", name, f.name, productLabel, f.product, node.Name)
}

// staysGated checks that the pod's Workload is pending for want of quota and
// the pod keeps its gate and no node for gatedFor.
func (q *kueueQueue) staysGated(t *testing.T, name string) {
	t.Helper()
	ctx := t.Context()
	var pending time.Time
	var last string
	err := poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		pod, err := q.s.client.CoreV1().Pods(q.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		wl, err := q.workload(ctx, pod)
		if err != nil || wl == nil {
			return false, fmt.Sprintf("no Workload yet (%v)", err), nil
		}
		if f := admittedFlavor(wl); f != "" || !gated(pod) || pod.Spec.NodeName != "" {
			return false, "", fmt.Errorf("pod %s/%s is past the quota but was let through: flavor %q, gates %v, node %q\n%s", q.ns, name, f, pod.Spec.SchedulingGates, pod.Spec.NodeName, q.dump(ctx))
		}
		last = fmt.Sprintf("Workload %s: %s", wl.GetName(), workloadState(wl))
		c := condition(wl, "QuotaReserved")
		if c == nil || c["status"] != "False" || c["reason"] != "Pending" {
			return false, last, nil
		}
		if pending.IsZero() {
			pending = time.Now()
		}
		return time.Since(pending) >= gatedFor, last, nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s: %v", q.ns, name, err)
	}
	t.Logf("pod %s: gated (%s) for %s; %s", name, kueueGate, gatedFor, last)
}

// succeed marks the pod Succeeded through the status subresource, as its
// kubelet would when its containers exit 0.
func (q *kueueQueue) succeed(t *testing.T, name string) {
	t.Helper()
	patch := []byte(`{"status":{"phase":"Succeeded"}}`)
	if _, err := q.s.client.CoreV1().Pods(q.ns).Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("marking pod %s/%s Succeeded: %v", q.ns, name, err)
	}
	t.Logf("pod %s: Succeeded", name)
}

// workloadState sums up a Workload's conditions and admission for
// messages.
func workloadState(wl *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(wl.Object, "status", "conditions")
	var parts []string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		parts = append(parts, fmt.Sprintf("%v=%v (%v: %v)", m["type"], m["status"], m["reason"], m["message"]))
	}
	if len(parts) == 0 {
		parts = append(parts, "no conditions")
	}
	if f := admittedFlavor(wl); f != "" {
		parts = append(parts, "flavor "+f)
	}
	return strings.Join(parts, "; ")
}

// dump is the status of every Workload in the namespace and of the
// ClusterQueue, for failure messages.
func (q *kueueQueue) dump(ctx context.Context) string {
	var b strings.Builder
	list, err := q.s.dyn.Resource(workloadGVR).Namespace(q.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		fmt.Fprintf(&b, "listing Workloads: %v\n", err)
	} else {
		for _, wl := range list.Items {
			owner := ""
			if refs := wl.GetOwnerReferences(); len(refs) > 0 {
				owner = refs[0].Kind + "/" + refs[0].Name
			}
			fmt.Fprintf(&b, "Workload %s (of %s) status: %s\n", wl.GetName(), owner, jsonString(wl.Object["status"]))
		}
	}
	if cq, err := q.s.dyn.Resource(clusterQueueGVR).Get(ctx, q.cq, metav1.GetOptions{}); err != nil {
		fmt.Fprintf(&b, "getting ClusterQueue %s: %v\n", q.cq, err)
	} else {
		fmt.Fprintf(&b, "ClusterQueue %s status: %s\n", q.cq, jsonString(cq.Object["status"]))
	}
	return b.String()
}
