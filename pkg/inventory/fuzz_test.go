package inventory_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
)

// FuzzDecode feeds arbitrary bytes to the snapshot decoder and classifier:
// no input may panic, and a decoded node always classifies. A decoded
// ResourceSlice holds nothing Redact would drop, and a snapshot written
// reads back to what it wrote.
func FuzzDecode(f *testing.F) {
	for _, path := range []string{"../../testdata/nodes/real-nodes-sample.json", "../../testdata/dra/cluster.yaml"} {
		seed, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(seed)
	}
	f.Add([]byte(`{"kind":"NodeList","items":[{"metadata":{"name":"a","labels":{"nvidia.com/gpu.product":"Tesla-T4-SHARED"}}}]}`))
	f.Add([]byte("kind: List\nitems:\n- metadata: {name: x}\n  status: {capacity: {nvidia.com/gpu: 8}}\n"))
	f.Add([]byte(`{"kind":"Node","metadata":{"name":"n"}}`))
	f.Add([]byte(`{"kind":"List","items":[null, 3, {"metadata":{"name":7}}]}`))
	// AMD's v1beta1 slices (ROCm/k8s-gpu-dra-driver#21): partitions in
	// "basic", a KFD id and an address as attributes.
	f.Add([]byte(`{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n"}},{"apiVersion":"resource.k8s.io/v1beta1","kind":"ResourceSlice",` +
		`"metadata":{"name":"s"},"spec":{"driver":"gpu.amd.com","nodeName":"n","pool":{"name":"n","generation":1,"resourceSliceCount":1},` +
		`"devices":[{"name":"gpu-32-160","basic":{"attributes":{"type":{"string":"amdgpu-partition"},"partitionProfile":{"string":"cpx_nps4"},` +
		`"parentDeviceID":{"string":"7066866330502360227"},"parentPciAddr":{"string":"0003:00:01.0"},"productName":{"string":"AMD_Instinct_MI300X_OAM"}},` +
		`"capacity":{"memory":{"value":"24Gi"}}}}]}}]}`))
	// NVIDIA's MIG devices with no GPU in their names, a whole GPU with
	// a bad quantity, a device twice.
	f.Add([]byte(`{"kind":"List","items":[{"kind":"Node","metadata":{"name":"n"}},{"kind":"ResourceSlice","metadata":{"name":"s"},` +
		`"spec":{"driver":"gpu.nvidia.com","nodeName":"n","pool":{"name":"n","generation":3,"resourceSliceCount":2},"devices":[` +
		`{"name":"mig-a","attributes":{"type":{"string":"mig"},"profile":{"string":"1g.10gb"},"productName":{"string":"NVIDIA H100 80GB HBM3"}}},` +
		`{"name":"gpu-0","attributes":{"type":{"string":"gpu"},"productName":{"string":"NVIDIA H100"},"uuid":{"string":"GPU-1"}},"capacity":{"memory":{"value":"x"}}},` +
		`{"name":"gpu-0","attributes":{"type":{"string":"gpu"}}}]}}]}`))
	cat, err := catalog.Builtin()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		raw, problems, err := inventory.Decode(data)
		if err != nil {
			if len(raw) > 0 || len(problems) > 0 {
				t.Fatal("an unreadable document returns no nodes")
			}
			return
		}
		inv := inventory.Classify(raw, cat, inventory.Options{})
		for _, n := range inv.Nodes {
			if n.AcceleratorType == "" || n.Status == "" || n.Sharing == "" {
				t.Fatalf("incomplete node %+v", n)
			}
		}
		_ = inv.Summary()

		snap, err := inventory.DecodeSnapshot(data)
		if err != nil {
			t.Fatal(err)
		}
		for i := range snap.Slices {
			if n := snap.Slices[i].Redact(); n > 0 {
				t.Fatalf("a decoded slice holds %d identifying values: %+v", n, snap.Slices[i])
			}
		}
		inv = snap.Classify(cat, inventory.Options{})
		for _, n := range inv.Nodes {
			if n.AcceleratorType == "" || n.Count < 0 || n.Allocatable < 0 {
				t.Fatalf("incomplete node %+v", n)
			}
		}
		var buf, again bytes.Buffer
		if err := snap.Write(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := inventory.DecodeSnapshot(buf.Bytes())
		if err != nil {
			t.Fatalf("a written snapshot does not read back: %v\n%s", err, buf.Bytes())
		}
		if err := back.Write(&again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), again.Bytes()) {
			t.Fatalf("a snapshot read back writes otherwise:\n%s\n%s", buf.Bytes(), again.Bytes())
		}
	})
}

// FuzzGFDProduct checks the product parser: it never panics, and a
// catalog product keeps its class whatever sharing or MIG suffix GFD
// appends.
func FuzzGFDProduct(f *testing.F) {
	cat, err := catalog.Builtin()
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range cat.Classes() {
		for _, v := range c.IdentifiedBy[catalog.LabelGFDProduct] {
			f.Add(v, "")
			f.Add(v, "-SHARED")
			f.Add(v, "-MIG-1g.10gb")
			f.Add(v, "-MIG-1g.5gb-SHARED")
			f.Add(v, "-MIG-INVALID")
		}
	}
	f.Fuzz(func(t *testing.T, product, suffix string) {
		p := inventory.ParseGFDProduct(product + suffix)
		if len(p.Base) > len(product+suffix) {
			t.Fatalf("base %q longer than %q", p.Base, product+suffix)
		}
		base, ok := cat.ByLabel(catalog.LabelGFDProduct, product)
		if !ok || strings.Contains(strings.ToUpper(product), "-MIG-") || strings.HasSuffix(strings.ToUpper(product), "-SHARED") {
			return
		}
		switch suffix {
		case "-SHARED", "-MIG-1g.10gb", "-MIG-1g.5gb-SHARED", "-MIG-INVALID":
			got, ok := cat.ByLabel(catalog.LabelGFDProduct, p.Base)
			if !ok || got.ID != base.ID {
				t.Fatalf("%q%s: class changed from %s", product, suffix, base.ID)
			}
		}
	})
}

// FuzzLabels classifies a node whose labels and capacity come from the
// fuzzer, seeded with the real label sets of every scheme: no label set may
// panic, and every accelerator node says why it got its type.
func FuzzLabels(f *testing.F) {
	seeds := [][4]string{
		{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb", "nvidia.com/gpu.memory", "81920"},
		{"nvidia.com/mig-1g.10gb.count", "7", "nvidia.com/mig-1g.10gb.product", "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"},
		{"amd.com/gpu.device-id.74a1", "4", "amd.com/gpu.device-id.740f", "4"},
		{"beta.amd.com/gpu.product-name.AMD_Instinct_MI300X_OAM", "8", "beta.amd.com/gpu.family.AI", "8"},
		{"karpenter.k8s.aws/instance-gpu-name", "nvidia-a100", "karpenter.k8s.aws/instance-gpu-memory", "40960"},
		{"feature.node.kubernetes.io/pci-0302_10de_20b5.present", "true", "cloud.google.com/gke-accelerator", "nvidia-tesla-t4"},
		{"node.kubernetes.io/instance-type", "p5.48xlarge", "nvidia.com/gpu.sharing-strategy", "mps"},
		{"aliyun.accelerator/nvidia_name", "Tesla-V100-SXM2-16GB", "aliyun.accelerator/nvidia_mem", "16160MiB"},
		{"k8s.amazonaws.com/accelerator", "nvidia-tesla-t4", "karpenter.k8s.aws/instance-gpu-count", "4"},
		{"nvidia.com/gpu.product", "GRID-A100-10C", "nvidia.com/vgpu.present", "true"},
		{"nvidia.com/mig.config", "all-1g.5gb", "nvidia.com/gpu.engines.jpeg", "0"},
		{"nvidia.com/mig-1g.10gb.memory", "9984", "nvidia.com/mig.strategy", "mixed"},
		{"akash.network/capabilities.gpu.vendor.nvidia.model.a4000", "true", "gpu.nvidia.com/class", "A100_NVLINK_80GB"},
		{"gpu.intel.com/device-id.0380-0bd5.present", "true", "gpu.intel.com/device.count", "2"},
		{"accelerator", "nvidia-tesla-k80", "amd.com/gpu.device-id", "74b5"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3], "nvidia.com/gpu", "8")
		f.Add(s[0], s[1], s[2], s[3], "amd.com/gpu", "1Ki")
	}
	cat, err := catalog.Builtin()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, res, qty string) {
		var raw inventory.RawNode
		raw.Metadata.Name = "fuzz"
		raw.Metadata.Labels = map[string]string{k1: v1, k2: v2}
		raw.Status.Capacity = map[string]string{res: qty}
		inv := inventory.Classify([]inventory.RawNode{raw}, cat, inventory.Options{})
		for _, n := range inv.Nodes {
			if n.AcceleratorType == "" || len(n.Notes) == 0 {
				t.Fatalf("node without a type or a reason: %+v", n)
			}
			if n.Count < 0 || n.Allocatable < 0 {
				t.Fatalf("negative counts: %+v", n)
			}
		}
	})
}
