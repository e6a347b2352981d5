// Package livetest makes a small heterogeneous cluster on a test API
// server: nodes as GPU Feature Discovery, AMD's labeller and Karpenter
// leave them, pods that hold GPUs on them, and the ResourceSlices of two
// accelerator DRA drivers and a network one. The live reader's tests and
// accelc serve's watcher's read the same cluster.
package livetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/nodegen"
	"github.com/accelc/accelc/pkg/inventory"
)

type labels = map[string]string

// cluster is a heterogeneous cluster as GPU Feature Discovery, AMD's
// labeller and Karpenter leave it.
var Cluster = []struct {
	name   string
	labels labels
	res    string
	count  string
	cordon bool
}{
	{"h200-01", labels{"nvidia.com/gpu.product": "NVIDIA-H200", "nvidia.com/gpu.count": "8"}, "nvidia.com/gpu", "8", false},
	{"h200-02", labels{"nvidia.com/gpu.product": "NVIDIA-H200", "nvidia.com/gpu.count": "8"}, "nvidia.com/gpu", "8", false},
	{"t4-shared", labels{"nvidia.com/gpu.product": "Tesla-T4-SHARED", "nvidia.com/gpu.count": "1", "nvidia.com/gpu.replicas": "4"}, "nvidia.com/gpu", "4", false},
	{"mi300x-01", labels{"amd.com/gpu.device-id": "74a1"}, "amd.com/gpu", "8", false},
	{"karpenter-a10g", labels{"karpenter.k8s.aws/instance-gpu-name": "a10g", "karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia", "karpenter.k8s.aws/instance-gpu-memory": "24576"}, "nvidia.com/gpu", "4", true},
	{"mystery", labels{}, "nvidia.com/gpu", "2", false},
	{"cpu-01", labels{}, "", "", false},
	// GPUs by DRA only: its ResourceSlices say what they are.
	{"dra-two", labels{}, "", "", false},
}

// makeSlices publishes ResourceSlices as NVIDIA's DRA driver does
// (testdata/dra/cluster.yaml cites the attribute shapes): dra-two has two
// A100 SXM4 80GB and two H100 80GB HBM3; and a network driver's slice of
// cpu-01, whose attributes are addresses.
func MakeSlices(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	gpu := func(i int, product string) resourcev1.Device {
		str := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: &s} }
		ver := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{VersionValue: &s} }
		return resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"type": str("gpu"), "productName": str(product), "brand": str("Nvidia"),
				"uuid":                            str(fmt.Sprintf("GPU-5e6f7081-0000-1111-2222-33334444000%d", i)),
				"resource.kubernetes.io/pciBusID": str(fmt.Sprintf("0000:%02x:00.0", 0x18+i)),
				"resource.kubernetes.io/pcieRoot": str("pci0000:17"),
				"cudaComputeCapability":           ver("9.0.0"), "driverVersion": ver("580.95.5"),
			},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}},
		}
	}
	slice := func(name, node, driver string, devices ...resourcev1.Device) {
		_, err := cs.ResourceV1().ResourceSlices().Create(ctx, &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: resourcev1.ResourceSliceSpec{Driver: driver, NodeName: &node, Devices: devices,
				Pool: resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	slice("dra-two-gpu.nvidia.com-a1b2c", "dra-two", inventory.DriverNVIDIA,
		gpu(0, "NVIDIA A100-SXM4-80GB"), gpu(1, "NVIDIA A100-SXM4-80GB"), gpu(2, "NVIDIA H100 80GB HBM3"), gpu(3, "NVIDIA H100 80GB HBM3"))
	mac := "0c:42:a1:00:00:01"
	slice("cpu-01-dra.net-x9y8z", "cpu-01", "dra.net", resourcev1.Device{Name: "eth1",
		Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"dra.net/mac": {StringValue: &mac}}})
	slice("h200-02-gpu.nvidia.com-q1w2e", "h200-02", inventory.DriverNVIDIA, gpu(0, "NVIDIA H200"), gpu(1, "NVIDIA H200"),
		gpu(2, "NVIDIA H200"), gpu(3, "NVIDIA H200"), gpu(4, "NVIDIA H200"), gpu(5, "NVIDIA H200"), gpu(6, "NVIDIA H200"), gpu(7, "NVIDIA H200"))
}

func MakeCluster(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	for _, n := range Cluster {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: n.labels,
			Annotations: labels{"projectcalico.org/IPv4Address": "10.1.2.3/24"}}}
		node.Spec.Unschedulable = n.cordon
		node.Spec.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}
		created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		require.NoError(t, err)
		capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourcePods: resource.MustParse("110")}
		if n.res != "" {
			capacity[corev1.ResourceName(n.res)] = resource.MustParse(n.count)
		}
		created.Status.Capacity, created.Status.Allocatable = capacity, capacity
		created.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.1.2.3"}}
		created.Status.NodeInfo.SystemUUID = "4C4C4544-0042-3510-8052-B2C04F4E3732"
		created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	// Pods bound to nodes: three on h200-01 (one with an init container
	// asking more than the app), one on the T4 share, one that asks for
	// no GPU.
	pod := func(name, node string, gpus, initGPUs int64) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"}, Spec: corev1.PodSpec{NodeName: node}}
		c := corev1.Container{Name: "app", Image: "registry.example/app:1"}
		if gpus > 0 {
			c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}
		}
		p.Spec.Containers = []corev1.Container{c}
		if initGPUs > 0 {
			p.Spec.InitContainers = []corev1.Container{{Name: "warm", Image: "registry.example/warm:1",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(initGPUs, resource.DecimalSI)}}}}
		}
		_, err := cs.CoreV1().Pods("team-a").Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	pod("train-1", "h200-01", 2, 0)
	pod("train-2", "h200-01", 1, 0)
	pod("train-3", "h200-01", 1, 3)
	pod("notebook", "t4-shared", 1, 0)
	pod("web", "cpu-01", 0, 0)
}

// Fill makes a large cluster on a test API server for the benchmarks:
// nodes generated as GPU Feature Discovery labels them (hack/gennodes),
// each with podsPerNode pods bound to it in namespace load, every other
// one holding a GPU.
func Fill(ctx context.Context, b testing.TB, cs kubernetes.Interface, nodes, podsPerNode int) {
	var list corev1.NodeList
	if err := json.Unmarshal(nodegen.List(nodegen.Generated(nodes)), &list); err != nil {
		b.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "load"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	work := make(chan func() error)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for range 48 {
		wg.Go(func() {
			for f := range work {
				if err := f(); err != nil {
					once.Do(func() { firstErr = err })
				}
			}
		})
	}
	for i := range list.Items {
		n := list.Items[i]
		work <- func() error {
			status := n.Status
			created, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			created.Status = status
			_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
			return err
		}
		for p := range podsPerNode {
			work <- func() error {
				c := corev1.Container{Name: "app", Image: "app"}
				if p%2 == 0 {
					c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
				}
				_, err := cs.CoreV1().Pods("load").Create(ctx, &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", n.Name, p)},
					Spec:       corev1.PodSpec{NodeName: n.Name, Containers: []corev1.Container{c}},
				}, metav1.CreateOptions{})
				return err
			}
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}
