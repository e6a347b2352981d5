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

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/accelc/accelc/internal/controlplane"
)

// draDriver is NVIDIA's DRA driver's name (sigs.k8s.io/dra-driver-nvidia-gpu).
const draDriver = "gpu.nvidia.com"

// draGPU is a GPU as NVIDIA's DRA driver publishes it in a ResourceSlice
// (attribute names and types from the driver's GpuInfo.Attributes at
// v0.4.0, its tests/bats/test_gpu_basic.bats, and the slice in
// kubernetes-sigs/dra-driver-nvidia-gpu#719): productName is NVML's name.
func draGPU(name, product, architecture, cc string, memory string) resourcev1.Device {
	str := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: ptr.To(s)} }
	ver := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{VersionValue: ptr.To(s)} }
	return resourcev1.Device{
		Name: name,
		Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"type":                  str("gpu"),
			"productName":           str(product),
			"brand":                 str("Nvidia"),
			"architecture":          str(architecture),
			"cudaComputeCapability": ver(cc),
			"driverVersion":         ver("580.95.5"),
			"cudaDriverVersion":     ver("13.0.0"),
		},
		Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse(memory)}},
	}
}

func h100(name string) resourcev1.Device {
	return draGPU(name, "NVIDIA H100 80GB HBM3", "Hopper", "9.0.0", "80Gi")
}

func a100(name string) resourcev1.Device {
	return draGPU(name, "NVIDIA A100-SXM4-80GB", "Ampere", "8.0.0", "80Gi")
}

// TestDRA applies what accelc renders for a cluster whose profiles hand out
// GPUs through Dynamic Resource Allocation (its DeviceClasses and
// ResourceClaimTemplates, through the API server's own validation, which
// compiles their CEL) to a control plane with kube-scheduler, publishes
// ResourceSlices as NVIDIA's DRA driver does for an H100 node, an A100
// node and a node with one GPU of each, and shows kube-scheduler
// allocating each pod's claim from the rendered classes: the profile's
// first class while a node has room for its count, then the next; and on
// the two-model node the device of the claim's class.
func TestDRA(t *testing.T) {
	root := repoRoot(t)
	s := &suite{root: root, work: t.TempDir(), accelc: program(t, root, filepath.Join("bin", "accelc"), "build")}
	out := s.render(t, "e2e/testdata/dra", "dra")
	s.cp = controlplane.Start(t, controlplane.WithScheduler())
	s.connect(t)
	ctx := t.Context()

	created := s.createRendered(t, readTree(t, out), "Namespace", "DeviceClass", "ResourceClaimTemplate", "ResourceQuota")
	t.Logf("created through the API server's validation: %s", jsonString(created))
	// kube-controller-manager's resourcequota controller, which does not
	// run here, gives a new quota its status; from then on the API
	// server's quota admission counts each claim it admits.
	q, err := s.client.CoreV1().ResourceQuotas("ml").Get(ctx, "accelc-dra-devices", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Status.Hard, q.Status.Used = q.Spec.Hard, corev1.ResourceList{}
	for name := range q.Spec.Hard {
		q.Status.Used[name] = resource.MustParse("0")
	}
	if _, err := s.client.CoreV1().ResourceQuotas("ml").UpdateStatus(ctx, q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	nodes := map[string][]resourcev1.Device{
		"node-h100":  {h100("gpu-0"), h100("gpu-1")},
		"node-a100":  {a100("gpu-0"), a100("gpu-1")},
		"node-mixed": {h100("gpu-0"), a100("gpu-1")},
	}
	var items []any
	for _, name := range []string{"node-a100", "node-h100", "node-mixed"} {
		items = append(items, map[string]any{
			"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": name, "labels": map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}},
			"status":   map[string]any{"capacity": map[string]string{"cpu": "64", "memory": "512Gi", "pods": "110"}, "conditions": []map[string]string{{"type": "Ready", "status": "True"}}},
		})
	}
	file := filepath.Join(s.work, "dra-nodes.json")
	data, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s.createNodes(t, file, nil)
	for node, devices := range nodes {
		slice := &resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{Name: node + "-" + strings.ReplaceAll(draDriver, ".", "-")},
			Spec: resourcev1.ResourceSliceSpec{
				Driver:   draDriver,
				Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
				NodeName: ptr.To(node),
				Devices:  devices,
			},
		}
		if _, err := s.client.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
			t.Fatalf("publishing %s's ResourceSlice: %v", node, err)
		}
	}
	t.Logf("ResourceSlices of %s: node-h100 2× H100, node-a100 2× A100, node-mixed 1× H100 + 1× A100", draDriver)

	// accelc reads the slices live: the two-model node device by device.
	stdout, stderr, err := run(ctx, s.root, s.accelc, "inventory", "show", "--live", "--kubeconfig", s.cp.Kubeconfig(), "--type", "nvidia-a100-80gb,nvidia-h100-80gb")
	if err != nil {
		t.Fatalf("accelc inventory show --live: %v\n%s", err, stderr)
	}
	var mixed []string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "node-mixed ") {
			mixed = append(mixed, line)
		}
	}
	if len(mixed) != 2 || !strings.Contains(mixed[0]+mixed[1], "nvidia-h100-80gb") || !strings.Contains(mixed[0]+mixed[1], "nvidia-a100-80gb") {
		t.Fatalf("accelc inventory show --live does not show node-mixed's two types from its slices, a row each:\n%s", stdout)
	}
	t.Logf("accelc inventory show --live:\n%s", stdout)

	for _, step := range []struct {
		pod, profile, node, class string
		devices                   []string
	}{
		// Two H100s fit on node-h100 only (node-mixed has one).
		{pod: "large-1", profile: "large", node: "node-h100", class: "nvidia-h100-80gb", devices: []string{"gpu-0", "gpu-1"}},
		// No node has two H100s left: the next class, two A100s.
		{pod: "large-2", profile: "large", node: "node-a100", class: "nvidia-a100-80gb", devices: []string{"gpu-0", "gpu-1"}},
		// The only A100 left is on the two-model node: its A100, not its H100.
		{pod: "a100-1", profile: "a100", node: "node-mixed", class: "nvidia-a100-80gb", devices: []string{"gpu-1"}},
	} {
		claim := s.draPod(t, "ml", step.pod, step.profile)
		node, got := s.waitAllocated(t, "ml", step.pod, claim)
		if node != step.node {
			t.Fatalf("pod %s bound to %s, want %s", step.pod, node, step.node)
		}
		var names []string
		for _, r := range got {
			if r.Pool != step.node || !strings.HasSuffix(r.Request, step.class) && r.Request != "accelerator" {
				t.Fatalf("pod %s: claim %s allocated %s/%s for request %s, want %s devices on %s", step.pod, claim, r.Pool, r.Device, r.Request, step.class, step.node)
			}
			names = append(names, r.Device)
		}
		slices.Sort(names)
		if !slices.Equal(names, step.devices) {
			t.Fatalf("pod %s: claim %s allocated %v on %s, want %v", step.pod, claim, names, node, step.devices)
		}
		t.Logf("pod %s (profile %s): claim %s allocated %v of %s on %s (requests %s), pod bound to %s", step.pod, step.profile, claim, names, step.class, node, requests(got), node)
	}

	// The team's quota, per DeviceClass: the two "large" claims charged 4
	// H100s and 4 A100s, the "a100" claim 1 more A100: a sixth A100 is
	// over the team's 5, and the API server refuses the claim.
	if q, err = s.client.CoreV1().ResourceQuotas("ml").Get(ctx, "accelc-dra-devices", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("ResourceQuota ml/accelc-dra-devices: used %s of %s (each large claim is charged both classes it lists)", quantities(q.Status.Used), quantities(q.Status.Hard))
	tmpl, err := s.client.ResourceV1().ResourceClaimTemplates("ml").Get(ctx, "a100", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	over := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "a100-2-gpus", Namespace: "ml"}, Spec: tmpl.Spec.Spec}
	_, err = s.client.ResourceV1().ResourceClaims("ml").Create(ctx, over, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("a claim over the team's A100 quota: want the quota to refuse it, got %v", err)
	}
	t.Logf("a claim for a sixth A100 is refused: %v", err)
}

func quantities(rl corev1.ResourceList) string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(rl)) {
		q := rl[name]
		out = append(out, string(name)+"="+q.String())
	}
	return strings.Join(out, ", ")
}

func requests(rs []resourcev1.DeviceRequestAllocationResult) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Request)
	}
	return strings.Join(out, ",")
}

// draPod creates a pause pod of the profile that claims its devices with
// the profile's ResourceClaimTemplate, and stands in for
// kube-controller-manager's resourceclaim controller (which does not run
// here): it creates the pod's ResourceClaim from the template, owned by
// the pod, and records it in the pod's status, as the controller does.
func (s *suite) draPod(t *testing.T, ns, name, profile string) string {
	t.Helper()
	ctx := t.Context()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Annotations: map[string]string{hardwareProfileAnnotation: profile}},
		Spec: corev1.PodSpec{
			ResourceClaims: []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimTemplateName: ptr.To(profile)}},
			Containers: []corev1.Container{{
				Name: "main", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpus"}}},
			}},
		},
	}
	created, err := s.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating pod %s/%s: %v", ns, name, err)
	}
	tmpl, err := s.client.ResourceV1().ResourceClaimTemplates(ns).Get(ctx, profile, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the rendered ResourceClaimTemplate %s/%s: %v", ns, profile, err)
	}
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: name + "-gpus", Namespace: ns, Labels: tmpl.Spec.Labels,
			Annotations:     map[string]string{"resource.kubernetes.io/pod-claim-name": "gpus"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: name, UID: created.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}},
		},
		Spec: tmpl.Spec.Spec,
	}
	if _, err := s.client.ResourceV1().ResourceClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s's ResourceClaim from template %s: %v", name, profile, err)
	}
	patch := fmt.Sprintf(`{"status":{"resourceClaimStatuses":[{"name":"gpus","resourceClaimName":%q}]}}`, claim.Name)
	if _, err := s.client.CoreV1().Pods(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("recording pod %s's claim: %v", name, err)
	}
	return claim.Name
}

// waitAllocated waits until kube-scheduler has allocated the claim and
// bound the pod, and returns the node and the allocated devices.
func (s *suite) waitAllocated(t *testing.T, ns, pod, claim string) (string, []resourcev1.DeviceRequestAllocationResult) {
	t.Helper()
	var node string
	var results []resourcev1.DeviceRequestAllocationResult
	err := poll(t.Context(), scheduleTimeout, func(ctx context.Context) (bool, string, error) {
		p, err := s.client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		c, err := s.client.ResourceV1().ResourceClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if c.Status.Allocation != nil {
			results = c.Status.Allocation.Devices.Results
		}
		node = p.Spec.NodeName
		return node != "" && len(results) > 0, fmt.Sprintf("pod %s: node %q, %s; claim allocation %v", pod, node, scheduledCondition(p), results), nil
	})
	if err != nil {
		t.Fatalf("pod %s/%s: %v", ns, pod, err)
	}
	return node, results
}
