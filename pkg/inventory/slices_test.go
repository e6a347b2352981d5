package inventory_test

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/inventory"
)

// draCluster is testdata/dra/cluster.yaml: nodes and the ResourceSlices
// NVIDIA's and AMD's DRA drivers publish of them (the file cites the
// sources of each attribute shape).
const draCluster = "../../testdata/dra/cluster.yaml"

func draInventory(t *testing.T) (*inventory.Snapshot, *inventory.Inventory) {
	t.Helper()
	snap, err := inventory.ReadSnapshot(draCluster)
	require.NoError(t, err)
	require.Empty(t, snap.Problems)
	return snap, snap.Classify(builtin(t), inventory.Options{})
}

// TestDRAClassifiesDevices: each node's type comes from its devices'
// productName or PCI device id; whole GPUs, MIG devices and their GPUs
// are counted from the slices; a node without slices is classified by its
// labels as before.
func TestDRAClassifiesDevices(t *testing.T) {
	_, inv := draInventory(t)
	type want struct {
		typ         string
		vendor      string
		count       int
		allocatable int
		sharing     inventory.Sharing
		mig         map[string]int
		types       map[string]int
		note        string
	}
	wants := map[string]want{
		"dra-a100": {"nvidia-a100-80gb", "nvidia", 2, 2, inventory.Exclusive, nil, nil,
			"type from ResourceSlices: 2× nvidia-a100-80gb (gpu.nvidia.com productName=NVIDIA A100 80GB PCIe)"},
		// GPU 0 published whole and cut in two (#719), GPU 1 in seven;
		// the labels' MIG single is what the node was.
		"dra-mig": {"nvidia-a100-80gb", "nvidia", 2, 9, inventory.MIGMixed, map[string]int{"3g.40gb": 2, "1g.10gb": 7}, nil,
			"gpu-0 is published both whole and as MIG devices (kubernetes-sigs/dra-driver-nvidia-gpu#719): counted as its MIG devices"},
		"dra-two-models": {inventory.TypeMixed, "nvidia", 8, 8, inventory.Exclusive, nil,
			map[string]int{"nvidia-a100-80gb": 4, "nvidia-h100-80gb": 4},
			"types from ResourceSlices: 4× nvidia-a100-80gb (gpu.nvidia.com productName=NVIDIA A100-SXM4-80GB), 4× nvidia-h100-80gb (gpu.nvidia.com productName=NVIDIA H100 80GB HBM3)"},
		"dra-h100-dynmig": {"nvidia-h100-80gb", "nvidia", 1, 1, inventory.Exclusive, nil, nil,
			"dynamic MIG: the driver cuts MIG devices when claims ask for them (2 placements of 1g.10gb, 3g.40gb): counted as whole GPUs"},
		"dra-mi300x": {"amd-mi300x-192gb", "amd", 2, 2, inventory.Exclusive, nil, nil,
			"type from ResourceSlices: 2× amd-mi300x-192gb (gpu.amd.com deviceID=0x74a1)"},
		"gfd-t4": {"nvidia-t4-16gb", "nvidia", 1, 1, inventory.Exclusive, nil, nil, "type from nvidia.com/gpu.product=Tesla-T4"},
	}
	require.Len(t, inv.Nodes, len(wants))
	for _, n := range inv.Nodes {
		w := wants[n.Name]
		assert.Equal(t, w.typ, n.AcceleratorType, n.Name)
		assert.Equal(t, w.vendor, n.Vendor, n.Name)
		assert.Equal(t, w.count, n.Count, n.Name)
		assert.Equal(t, w.allocatable, n.Allocatable, n.Name)
		assert.Equal(t, w.sharing, n.Sharing, n.Name)
		assert.Equal(t, w.mig, n.MIGDevices, n.Name)
		assert.Equal(t, w.types, n.Types, n.Name)
		assert.Contains(t, n.Notes, w.note, n.Name)
	}
	assert.Zero(t, inv.OtherNodes)
}

// TestDRATwoModelsNode: a node with two models is shown device by device,
// and each type's summary counts its devices on it, not "mixed".
func TestDRATwoModelsNode(t *testing.T) {
	_, inv := draInventory(t)
	var lines []string
	for _, s := range inv.Summary() {
		lines = append(lines, s.String())
	}
	assert.Equal(t, []string{
		"AMD MI300X 192GB: 1 node, 2 GPUs, 2 allocatable",
		"NVIDIA A100 80GB: 3 nodes, 8 GPUs, 15 allocatable (9 of the allocatable are MIG slices, not whole GPUs)",
		"NVIDIA H100 80GB: 2 nodes, 5 GPUs, 5 allocatable",
		"NVIDIA T4 16GB: 1 node, 1 GPU, 1 allocatable",
	}, lines)

	var table bytes.Buffer
	require.NoError(t, inv.WriteView(&table, inventory.ViewOptions{}))
	assert.Contains(t, table.String(), "dra-two-models   NVIDIA A100 80GB  nvidia-a100-80gb  4     4            80GB        exclusive")
	assert.Contains(t, table.String(), "dra-two-models   NVIDIA H100 80GB  nvidia-h100-80gb  4     4            80GB        exclusive")
	assert.NotContains(t, table.String(), "attention", "each device's type is known")

	var grouped bytes.Buffer
	require.NoError(t, inv.WriteView(&grouped, inventory.ViewOptions{GroupByType: true}))
	h100 := grouped.String()[strings.Index(grouped.String(), "# NVIDIA H100"):]
	h100 = h100[:strings.Index(h100, "\n\n")]
	assert.Equal(t, []string{"dra-h100-dynmig", "dra-two-models"}, rowNodes(h100))

	sel := inv.Select(inventory.Filter{Types: []string{"nvidia-h100-80gb"}})
	var names []string
	for _, n := range sel.Nodes {
		names = append(names, n.Name)
	}
	assert.Equal(t, []string{"dra-h100-dynmig", "dra-two-models"}, names, "--type selects a node by any of its types")
}

// rowNodes lists the node names of a table's rows.
func rowNodes(table string) []string {
	var out []string
	for _, line := range strings.Split(table, "\n")[2:] {
		out = append(out, strings.Fields(line)[0])
	}
	return out
}

// TestDRAAMDPartitions: AMD's driver before #35 (ROCm/k8s-gpu-dra-driver
// #21's slices, resource.k8s.io/v1beta1 with "basic"): partitions of an
// MI300X in DPX mode, two per GPU, their parent's address and KFD id as
// attributes; the snapshot keeps neither.
func TestDRAAMDPartitions(t *testing.T) {
	partition := func(card, render int, parent, parentID string) string {
		return `- name: gpu-` + strconv.Itoa(card) + `-` + strconv.Itoa(render) + `
      basic:
        attributes:
          cardIndex: {int: ` + strconv.Itoa(card) + `}
          driverSrcVersion: {string: 0F1E2D3C4B5A69788796A5B}
          driverVersion: {version: 6.16.6}
          family: {string: AI}
          numaNode: {int: 1}
          parentDeviceID: {string: "` + parentID + `"}
          parentPciAddr: {string: "` + parent + `"}
          partitionProfile: {string: dpx_nps1}
          productName: {string: AMD_Instinct_MI300X_OAM}
          renderIndex: {int: ` + strconv.Itoa(render) + `}
          resource.kubernetes.io/pcieRoot: {string: pci0003:00}
          type: {string: amdgpu-partition}
        capacity:
          computeUnits: {value: "152"}
          memory: {value: 98296Mi}
          simdUnits: {value: "608"}
    `
	}
	doc := `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: mi300x-dpx}, status: {conditions: [{type: Ready, status: "True"}]}}
- apiVersion: resource.k8s.io/v1beta1
  kind: ResourceSlice
  metadata: {name: mi300x-dpx-gpu.amd.com-fk4fq}
  spec:
    driver: gpu.amd.com
    nodeName: mi300x-dpx
    pool: {name: mi300x-dpx, generation: 1, resourceSliceCount: 1}
    devices:
    ` + partition(32, 160, "0003:00:01.0", "7066866330502361234") + partition(33, 161, "0003:00:01.0", "7066866330502361234") +
		partition(40, 168, "0003:00:02.0", "0003:00:02:0") + partition(41, 169, "0003:00:02.0", "0003:00:02:0")
	snap, err := inventory.DecodeSnapshot([]byte(doc))
	require.NoError(t, err)
	require.Empty(t, snap.Problems)
	require.Len(t, snap.Slices, 1)
	inv := snap.Classify(builtin(t), inventory.Options{})
	require.Len(t, inv.Nodes, 1)
	n := inv.Nodes[0]
	assert.Equal(t, "amd-mi300x-192gb", n.AcceleratorType)
	assert.Equal(t, 2, n.Count, "four DPX partitions are two GPUs")
	assert.Equal(t, 4, n.Allocatable, "a claim gets a partition")
	assert.Equal(t, inventory.Exclusive, n.Sharing, "AMD partitions are not MIG")
	require.Len(t, n.DRA, 1)
	assert.Equal(t, map[string]int{"dpx_nps1": 4}, n.DRA[0].Partitions)
	assert.Contains(t, n.Notes, "type from ResourceSlices: 2× amd-mi300x-192gb (gpu.amd.com productName=AMD_Instinct_MI300X_OAM)")

	var out bytes.Buffer
	require.NoError(t, inv.WriteView(&out, inventory.ViewOptions{}))
	assert.Contains(t, out.String(), "partitioned 4×dpx_nps1")

	out.Reset()
	require.NoError(t, snap.Write(&out))
	for _, secret := range []string{"0003:00", "7066866330502361234", "parentPciAddr", "parentDeviceID", "pcieRoot", `"basic"`} {
		assert.NotContains(t, out.String(), secret)
	}
	assert.Contains(t, out.String(), `"partitionProfile"`)
}

// TestDRAOverLabels: where labels and slices disagree the slices win and
// the note says what the labels said; slices naming no catalog class
// leave the labels' class, or make a node of unknown type with what to
// do; a pin wins over both.
func TestDRAOverLabels(t *testing.T) {
	doc := func(labels, product, capacity string) []byte {
		return []byte(`{"kind": "List", "items": [
		  {"kind": "Node", "metadata": {"name": "n", "labels": ` + labels + `}, "status": {"capacity": ` + capacity + `}},
		  {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n-gpu.nvidia.com-abcde"},
		   "spec": {"driver": "gpu.nvidia.com", "nodeName": "n", "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1},
		    "devices": [
		      {"name": "gpu-0", "attributes": {"type": {"string": "gpu"}, "productName": {"string": "` + product + `"}}, "capacity": {"memory": {"value": "80Gi"}}},
		      {"name": "gpu-1", "attributes": {"type": {"string": "gpu"}, "productName": {"string": "` + product + `"}}, "capacity": {"memory": {"value": "80Gi"}}}]}}]}`)
	}
	gfd40 := `{"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB", "nvidia.com/gpu.count": "2", "nvidia.com/gpu.replicas": "4"}`
	for _, tc := range []struct {
		name, labels, product, capacity string
		pins                            map[string]string
		typ                             string
		allocatable                     int
		notes                           []string
	}{
		{"slices win", gfd40, "NVIDIA H100 80GB HBM3", `{}`, nil, "nvidia-h100-80gb", 2, []string{
			"type from ResourceSlices: 2× nvidia-h100-80gb (gpu.nvidia.com productName=NVIDIA H100 80GB HBM3)",
			"labels say nvidia-a100-40gb; the ResourceSlices win"}},
		{"model and memory", `{}`, "NVIDIA A100 PCIe Gen4", `{}`, nil, "nvidia-a100-80gb", 2, []string{
			"type from ResourceSlices: 2× nvidia-a100-80gb (gpu.nvidia.com productName=NVIDIA A100 PCIe Gen4 by model A100 and 80GB from capacity memory; the value is not in the catalog: add NVIDIA-A100-PCIe-Gen4 to the class's identifiedBy nvidia.com/gpu.product)"}},
		{"unknown product, labels known", gfd40, "NVIDIA Z900", `{}`, nil, "nvidia-a100-40gb", 2, []string{
			"type from the labels: the ResourceSlices name NVIDIA Z900 (productName=NVIDIA Z900 is not in the catalog (no catalog model matches it: add the class under accelerators, or pin the node in cluster.nodes))"}},
		{"unknown product", `{}`, "NVIDIA Z900", `{}`, nil, inventory.TypeUnknown, 2, []string{
			"add NVIDIA-Z900 to a class's identifiedBy nvidia.com/gpu.product, or pin the type in cluster.nodes"}},
		{"pinned", gfd40, "NVIDIA H100 80GB HBM3", `{}`, map[string]string{"n": "nvidia-h200-141gb"}, "nvidia-h200-141gb", 2, []string{
			"ResourceSlices say nvidia-h100-80gb; the pin wins"}},
		{"device plugin too", `{}`, "NVIDIA H100 80GB HBM3", `{"nvidia.com/gpu": "2"}`, nil, "nvidia-h100-80gb", 2, []string{
			"a device plugin (nvidia.com/gpu) and the DRA driver both publish this node's devices: one could be given twice; allocatable is the device plugin's"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap, err := inventory.DecodeSnapshot(doc(tc.labels, tc.product, tc.capacity))
			require.NoError(t, err)
			inv := snap.Classify(builtin(t), inventory.Options{Pins: tc.pins})
			require.Len(t, inv.Nodes, 1)
			n := inv.Nodes[0]
			assert.Equal(t, tc.typ, n.AcceleratorType)
			assert.Equal(t, 2, n.Count)
			assert.Equal(t, tc.allocatable, n.Allocatable)
			assert.Equal(t, inventory.Exclusive, n.Sharing, "the labels' time-slicing is the device plugin's, not DRA's")
			assert.Zero(t, n.Replicas)
			for _, note := range tc.notes {
				assert.Contains(t, n.Notes, note)
			}
			if tc.typ == inventory.TypeUnknown {
				assert.Equal(t, "GPU - type unknown (ResourceSlices say NVIDIA Z900)", n.DisplayName)
				assert.Equal(t, 86, n.MemoryGB, "80Gi as the slice publishes it")
				var view bytes.Buffer
				require.NoError(t, inv.WriteView(&view, inventory.ViewOptions{}))
				assert.Contains(t, view.String(), "n (unknown): add NVIDIA-Z900 to a class's identifiedBy")
			}
		})
	}
}

// TestDRASliceProblems: a slice of a node the snapshot does not list, or
// of no one node, is reported and its devices not counted; a pool short
// of slices and a device published twice are notes on the node.
func TestDRASliceProblems(t *testing.T) {
	slice := func(name, node string, count int, devices ...string) string {
		nodeName := ""
		if node != "" {
			nodeName = `"nodeName": "` + node + `",`
		} else {
			nodeName = `"allNodes": true,`
		}
		var ds []string
		for _, d := range devices {
			ds = append(ds, `{"name": "`+d+`", "attributes": {"type": {"string": "gpu"}, "productName": {"string": "NVIDIA H200"}}}`)
		}
		return `{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "` + name + `"},
		  "spec": {"driver": "gpu.nvidia.com", ` + nodeName + ` "pool": {"name": "p-` + name[:1] + `", "generation": 1, "resourceSliceCount": ` + strconv.Itoa(count) + `},
		  "devices": [` + strings.Join(ds, ",") + `]}}`
	}
	doc := `{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "h200"}},
	  ` + slice("a-1", "h200", 3, "gpu-0", "gpu-1") + `,
	  ` + slice("a-2", "h200", 3, "gpu-1", "gpu-2") + `,
	  ` + slice("b-1", "gone", 1, "gpu-0") + `,
	  ` + slice("c-1", "", 1, "gpu-0") + `]}`
	snap, err := inventory.DecodeSnapshot([]byte(doc))
	require.NoError(t, err)
	inv := snap.Classify(builtin(t), inventory.Options{})
	require.Len(t, inv.Nodes, 1)
	n := inv.Nodes[0]
	assert.Equal(t, "nvidia-h200-141gb", n.AcceleratorType)
	assert.Equal(t, 3, n.Count)
	assert.Contains(t, n.Notes, "gpu.nvidia.com device gpu-1 is published twice in pool p-a: counted once")
	assert.Contains(t, n.Notes, "pool p-a of gpu.nvidia.com has 2 of its 3 ResourceSlices: devices may be missing while the driver updates them")
	var got []string
	for _, p := range inv.Problems {
		got = append(got, p.String()+"; "+p.Effect())
	}
	assert.Equal(t, []string{
		"ResourceSlice b-1: gpu.nvidia.com devices of node gone, which the snapshot does not list; its devices are not counted",
		"ResourceSlice c-1: gpu.nvidia.com devices of no one node (a node selector, all nodes or per device); its devices are not counted",
	}, got)
}

// TestSnapshotDropsIdentifyingValues: a snapshot of nodes with their
// slices keeps no UUID, PCI address, PCIe root, MAC address or other
// driver's slice, and reads back to the same inventory; writing it again
// is byte for byte the same.
func TestSnapshotDropsIdentifyingValues(t *testing.T) {
	snap, inv := draInventory(t)
	var buf bytes.Buffer
	require.NoError(t, snap.Write(&buf))
	out := buf.String()
	for _, re := range []string{`(?i)uuid`, `GPU-[0-9a-f]{8}`, `MIG-[0-9a-f]{8}`, `[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]`,
		`pci[0-9a-f]{4}:`, `(?i)pcieBusID|pciBusID|pcieRoot`, `0c:42:a1`, `10\.200\.`, `dra\.net`} {
		assert.NotRegexp(t, regexp.MustCompile(re), out)
	}
	for _, kept := range []string{`"productName"`, `"profile"`, `"cudaComputeCapability"`, `"deviceID"`, `"memory"`, `"gpu-0-counter-set"`} {
		assert.Contains(t, out, kept)
	}

	back, err := inventory.DecodeSnapshot(buf.Bytes())
	require.NoError(t, err)
	assert.Equal(t, snap.Slices, back.Slices)
	again := back.Classify(builtin(t), inventory.Options{})
	assert.Equal(t, inv.Nodes, again.Nodes, "render and vet from the file see what the cluster showed")

	var twice bytes.Buffer
	require.NoError(t, back.Write(&twice))
	assert.Equal(t, out, twice.String())
}

// TestRedact: attributes named for an identity go whatever their value;
// others go when their value is one.
func TestRedact(t *testing.T) {
	str := func(s string) inventory.Attribute { return inventory.Attribute{String: &s} }
	s := inventory.ResourceSlice{}
	s.Spec.Devices = []inventory.Device{{
		Name: "0000:3b:00.0",
		Attributes: map[string]inventory.Attribute{
			"uuid": str("GPU-x"), "parentUUID": str("x"), "resource.kubernetes.io/pciBusID": str("x"),
			"resource.kubernetes.io/pcieRoot": str("x"), "pciAddr": str("x"), "example.com/serialNumber": str("x"),
			"busLocation": str("0000:3b:00.0"), "boardID": str("1652824052339"), "mac": str("x"),
			"sibling":  {Strings: []string{"a", "GPU-12345678-1234-1234-1234-123456789abc"}},
			"deviceID": str("7066866330502360227"),
			// kept
			"productName": str("NVIDIA H100 80GB HBM3"), "type": str("gpu"), "index": str("3"),
			"driverSrcVersion": str("A27BF33B4586326D747C9FB"), "other/deviceID": str("0x74a1"),
		},
		ConsumesCounters: []inventory.CounterConsumption{{CounterSet: "pf-0000-3b-00-0-counter-set"}, {CounterSet: "gpu-0-counter-set"}},
	}}
	assert.Equal(t, 13, s.Redact(), "eleven attributes, a name, a counter set")
	d := s.Spec.Devices[0]
	var kept []string
	for k := range d.Attributes {
		kept = append(kept, k)
	}
	assert.ElementsMatch(t, []string{"productName", "type", "index", "driverSrcVersion", "other/deviceID"}, kept)
	assert.Equal(t, "device-0", d.Name)
	assert.Equal(t, []inventory.CounterConsumption{{CounterSet: "gpu-0-counter-set"}}, d.ConsumesCounters)
	assert.Zero(t, s.Redact(), "nothing is left to drop")
}

// TestDRAAMDSyntheticPartitions: in synthetic-partition mode AMD's driver
// (ROCm/k8s-gpu-dra-driver's SyntheticPartitionDevice, after #35)
// publishes, per GPU, one device per compute and memory mode it could be
// cut in: SPX as type amdgpu, the others as amdgpu-partition, all with
// computePartition and memoryPartition. They are one GPU, not four.
func TestDRAAMDSyntheticPartitions(t *testing.T) {
	device := func(mode, memory, typ string) string {
		return `{"name": "gpu-0-` + mode + `-` + memory + `", "attributes": {"type": {"string": "` + typ + `"},
		  "computePartition": {"string": "` + mode + `"}, "memoryPartition": {"string": "` + memory + `"}, "gpuIndex": {"int": 0},
		  "productName": {"string": "AMD_Instinct_MI300X_OAM"}, "deviceID": {"string": "0x74a1"}, "pciAddr": {"string": "0000:11:00.0"}},
		  "capacity": {"partitions": {"value": "1"}}}`
	}
	doc := `{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "mi300x"}},
	  {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "mi300x-gpu.amd.com-synth"},
	   "spec": {"driver": "gpu.amd.com", "nodeName": "mi300x", "pool": {"name": "mi300x", "generation": 1, "resourceSliceCount": 1},
	    "devices": [` + device("spx", "nps1", "amdgpu") + `,` + device("dpx", "nps1", "amdgpu-partition") + `,` +
		device("qpx", "nps1", "amdgpu-partition") + `,` + device("cpx", "nps4", "amdgpu-partition") + `]}}]}`
	snap, err := inventory.DecodeSnapshot([]byte(doc))
	require.NoError(t, err)
	inv := snap.Classify(builtin(t), inventory.Options{})
	require.Len(t, inv.Nodes, 1)
	n := inv.Nodes[0]
	assert.Equal(t, "amd-mi300x-192gb", n.AcceleratorType)
	assert.Equal(t, 1, n.Count)
	assert.Equal(t, 1, n.Allocatable)
	assert.Contains(t, n.Notes, "synthetic partitions: the driver partitions a GPU as the claim it is given for asks (3 placements of cpx_nps4, dpx_nps1, qpx_nps1): counted as whole GPUs")
	var out bytes.Buffer
	require.NoError(t, snap.Write(&out))
	assert.NotContains(t, out.String(), "0000:11:00.0")
}

// TestDRATwoUnknownModels: a node with devices of two models the catalog
// does not know is one node of unknown type in the summary, with both
// models' GPUs, and needs attention.
func TestDRATwoUnknownModels(t *testing.T) {
	doc := `{"kind": "List", "items": [{"kind": "Node", "metadata": {"name": "n"}},
	  {"kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": {"driver": "gpu.nvidia.com", "nodeName": "n",
	   "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1}, "devices": [
	    {"name": "gpu-0", "attributes": {"type": {"string": "gpu"}, "productName": {"string": "NVIDIA Z900"}}},
	    {"name": "gpu-1", "attributes": {"type": {"string": "gpu"}, "productName": {"string": "NVIDIA Z700"}}}]}}]}`
	snap, err := inventory.DecodeSnapshot([]byte(doc))
	require.NoError(t, err)
	inv := snap.Classify(builtin(t), inventory.Options{})
	require.Len(t, inv.Nodes, 1)
	assert.Equal(t, inventory.TypeMixed, inv.Nodes[0].AcceleratorType)
	sum := inv.Summary()
	require.Len(t, sum, 1)
	assert.Equal(t, "GPU - type unknown: 1 node, 2 GPUs, 2 allocatable", sum[0].String())
	var view bytes.Buffer
	require.NoError(t, inv.WriteView(&view, inventory.ViewOptions{}))
	assert.Contains(t, view.String(), "1 node needs attention:\n  n (mixed): devices of 2 types")
}
