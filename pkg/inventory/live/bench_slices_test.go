package live_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/inventory/live"
)

// BenchmarkReadSlices reads and classifies 1,000 nodes whose GPUs only
// their ResourceSlices publish: eight H100 per node as NVIDIA's DRA driver
// publishes them (every attribute of test_gpu_basic.bats, uuids and PCI
// addresses included), 1,000 slices and 8,000 devices, on a real API
// server, pods left out. Beside the read with slices (best-s, wire-MB,
// client-cpu-s): the same read before the slices were created
// (no-slices-s, no-slices-MB). go test ./pkg/inventory/live -run '^$'
// -bench ReadSlices -benchtime 5x
func BenchmarkReadSlices(b *testing.B) {
	const nodes, gpus = 1000, 8
	ctx := b.Context()
	cp := controlplane.Start(b)
	cfg := cp.RESTConfig()
	cfg.QPS, cfg.Burst = 5000, 5000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	opts := live.Options{Kubeconfig: cp.Kubeconfig(), SkipPods: true}
	proxied, wire := countingProxy(b, cp.Kubeconfig())
	parallel(b, nodes, func(i int) error {
		_, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("dra-%04d", i)}}, metav1.CreateOptions{})
		return err
	})
	before, beforeMB := bestRead(ctx, b, opts, proxied, wire)

	begin := time.Now()
	parallel(b, nodes, func(i int) error {
		node := fmt.Sprintf("dra-%04d", i)
		_, err := cs.ResourceV1().ResourceSlices().Create(ctx, h100Slice(node, i, gpus), metav1.CreateOptions{})
		return err
	})
	b.Logf("created %d nodes' slices in %s", nodes, time.Since(begin).Round(time.Second))

	cat, err := catalog.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	wire.Store(0)
	if _, err := live.Read(ctx, live.Options{Kubeconfig: proxied, SkipPods: true}); err != nil {
		b.Fatal(err)
	}
	wireMB := float64(wire.Load()) / 1e6
	self, _ := cpuTimes(cp.Dir())
	best := time.Duration(0)
	for b.Loop() {
		start := time.Now()
		snap, err := live.Read(ctx, opts)
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
		if err != nil {
			b.Fatal(err)
		}
		inv := snap.Classify(cat, inventory.Options{})
		if len(snap.Slices) != nodes || len(inv.Nodes) != nodes || inv.Nodes[0].AcceleratorType != "nvidia-h100-80gb" || inv.Nodes[0].Count != gpus {
			b.Fatalf("read %d slices, %d accelerator nodes: %+v", len(snap.Slices), len(inv.Nodes), inv.Nodes[0])
		}
	}
	self2, _ := cpuTimes(cp.Dir())
	b.ReportMetric(best.Seconds(), "best-s")
	b.ReportMetric(wireMB, "wire-MB")
	b.ReportMetric((self2-self).Seconds()/float64(b.N), "client-cpu-s/op")
	b.ReportMetric(before.Seconds(), "no-slices-s")
	b.ReportMetric(beforeMB, "no-slices-MB")
}

// h100Slice is one node's slice of n H100 GPUs, as NVIDIA's DRA driver
// publishes them.
func h100Slice(node string, i, n int) *resourcev1.ResourceSlice {
	str := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: &s} }
	ver := func(s string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{VersionValue: &s} }
	s := &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-gpu.nvidia.com"},
		Spec: resourcev1.ResourceSliceSpec{Driver: inventory.DriverNVIDIA, NodeName: &node,
			Pool: resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}}}
	for g := range n {
		s.Spec.Devices = append(s.Spec.Devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", g),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"type": str("gpu"), "productName": str("NVIDIA H100 80GB HBM3"), "brand": str("Nvidia"), "architecture": str("Hopper"),
				"uuid":                            str(fmt.Sprintf("GPU-%08x-0000-1111-2222-3333444455%02d", i, g)),
				"resource.kubernetes.io/pciBusID": str(fmt.Sprintf("0000:%02x:00.0", 0x18+g)),
				"resource.kubernetes.io/pcieRoot": str("pci0000:17"), "addressingMode": str("HMM"),
				"cudaComputeCapability": ver("9.0.0"), "driverVersion": ver("580.95.5"), "cudaDriverVersion": ver("13.0.0"),
			},
			Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}},
		})
	}
	return s
}

// bestRead is the fastest of five reads and the bytes of one through the
// counting proxy.
func bestRead(ctx context.Context, b *testing.B, opts live.Options, proxied string, wire interface {
	Store(int64)
	Load() int64
}) (time.Duration, float64) {
	wire.Store(0)
	if _, err := live.Read(ctx, live.Options{Kubeconfig: proxied, SkipPods: true}); err != nil {
		b.Fatal(err)
	}
	mb := float64(wire.Load()) / 1e6
	best := time.Duration(0)
	for range 5 {
		start := time.Now()
		if _, err := live.Read(ctx, opts); err != nil {
			b.Fatal(err)
		}
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
	}
	return best, mb
}

// parallel runs f(0) … f(n-1) on 32 workers; the first error fails b.
func parallel(b *testing.B, n int, f func(int) error) {
	work := make(chan int)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for range 32 {
		wg.Go(func() {
			for i := range work {
				if err := f(i); err != nil {
					once.Do(func() { firstErr = err })
				}
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}
