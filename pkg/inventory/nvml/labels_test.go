package nvml

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
)

func TestSanitize(t *testing.T) {
	for name, want := range map[string]string{
		"NVIDIA A100-SXM4-40GB":     "NVIDIA-A100-SXM4-40GB",
		"NVIDIA H100 80GB HBM3":     "NVIDIA-H100-80GB-HBM3",
		"Tesla T4":                  "Tesla-T4",
		"NVIDIA  L40S ":             "NVIDIA-L40S",
		"NVIDIA RTX A6000 (rev. 2)": "NVIDIA-RTX-A6000-rev.-2",
		"1g.10gb+me":                "1g.10gbme",
	} {
		assert.Equal(t, want, sanitize(name), name)
	}
}

func TestFamilyOfComputeCapability(t *testing.T) {
	for _, tc := range []struct {
		major, minor int
		want         string
	}{
		{7, 0, "volta"}, {7, 5, "turing"}, {8, 0, "ampere"}, {8, 6, "ampere"}, {8, 9, "ada-lovelace"},
		{9, 0, "hopper"}, {10, 0, "blackwell"}, {12, 0, "blackwell"}, {4, 0, ""}, {99, 0, ""},
	} {
		assert.Equal(t, tc.want, familyOfComputeCapability(tc.major, tc.minor), "%d.%d", tc.major, tc.minor)
	}
}

// gpus makes n GPUs of one product.
func gpus(n int, product string, memMiB uint64, cc, deviceID string) []GPU {
	out := make([]GPU, n)
	for i := range out {
		out[i] = GPU{Index: i, Product: product, MemoryMiB: memMiB, MemoryGiB: (memMiB + 512) / 1024,
			ComputeCapability: cc, PCIVendorID: "10de", PCIDeviceID: deviceID}
	}
	return out
}

func TestLabels(t *testing.T) {
	r := &Report{Node: "n1", DriverVersion: "550.54.15", CUDAVersion: "12.4",
		GPUs: gpus(4, "NVIDIA H100 80GB HBM3", 81559, "9.0", "2330")}
	assert.Equal(t, map[string]string{
		"nvidia.com/gpu.product":                  "NVIDIA-H100-80GB-HBM3",
		"nvidia.com/gpu.count":                    "4",
		"nvidia.com/gpu.memory":                   "81559",
		"nvidia.com/gpu.family":                   "hopper",
		"nvidia.com/gpu.compute.major":            "9",
		"nvidia.com/gpu.compute.minor":            "0",
		"nvidia.com/gpu.replicas":                 "1",
		"nvidia.com/gpu.sharing-strategy":         "none",
		"nvidia.com/mig.capable":                  "false",
		"nvidia.com/cuda.driver.major":            "550",
		"nvidia.com/cuda.driver.minor":            "54",
		"nvidia.com/cuda.driver.rev":              "15",
		"nvidia.com/cuda.driver-version.major":    "550",
		"nvidia.com/cuda.driver-version.minor":    "54",
		"nvidia.com/cuda.driver-version.revision": "15",
		"nvidia.com/cuda.driver-version.full":     "550.54.15",
		"nvidia.com/cuda.runtime.major":           "12",
		"nvidia.com/cuda.runtime.minor":           "4",
		"nvidia.com/cuda.runtime-version.major":   "12",
		"nvidia.com/cuda.runtime-version.minor":   "4",
		"nvidia.com/cuda.runtime-version.full":    "12.4",
	}, r.Labels())
	assert.Equal(t, map[string]string{"nvidia.com/gpu": "4"}, r.Capacity())
}

func TestLabelsEdgeCases(t *testing.T) {
	t.Run("no GPUs: no labels, no capacity", func(t *testing.T) {
		r := &Report{Node: "cpu-node", DriverVersion: "550.54.15", CUDAVersion: "12.4"}
		assert.Nil(t, r.Labels())
		assert.Empty(t, r.Capacity())
	})
	t.Run("two-part driver version: empty revision", func(t *testing.T) {
		r := &Report{DriverVersion: "535.104", GPUs: gpus(1, "Tesla T4", 15360, "7.5", "1eb8")}
		l := r.Labels()
		assert.Equal(t, "535", l["nvidia.com/cuda.driver.major"])
		assert.Equal(t, "104", l["nvidia.com/cuda.driver.minor"])
		assert.Equal(t, "", l["nvidia.com/cuda.driver.rev"])
		assert.NotContains(t, l, "nvidia.com/cuda.runtime.major", "no CUDA version, no CUDA labels")
	})
	t.Run("several models: the most common one, first seen on a tie", func(t *testing.T) {
		r := &Report{GPUs: append(gpus(1, "NVIDIA L4", 23034, "8.9", "27b8"), gpus(2, "NVIDIA L40S", 46068, "8.9", "26b9")...)}
		assert.Equal(t, "NVIDIA-L40S", r.Labels()["nvidia.com/gpu.product"])
		assert.Equal(t, "2", r.Labels()["nvidia.com/gpu.count"])
		assert.Equal(t, "ada-lovelace", r.Labels()["nvidia.com/gpu.family"])
		assert.Equal(t, "3", r.Capacity()["nvidia.com/gpu"], "capacity counts every GPU")
		r.GPUs = r.GPUs[:2]
		assert.Equal(t, "NVIDIA-L4", r.Labels()["nvidia.com/gpu.product"])
	})
	t.Run("family from the architecture without a compute capability", func(t *testing.T) {
		g := GPU{Product: "NVIDIA L40S", Architecture: "Ada Lovelace"}
		r := &Report{GPUs: []GPU{g}}
		assert.Equal(t, "ada-lovelace", r.Labels()["nvidia.com/gpu.family"])
		assert.NotContains(t, r.Labels(), "nvidia.com/gpu.compute.major")
	})
}

func TestLabelsMIGMixed(t *testing.T) {
	r := &Report{Node: "n1", GPUs: gpus(3, "NVIDIA A100-SXM4-40GB", 40960, "8.0", "20b0")}
	r.GPUs[0].MIG = &MIG{Current: MIGEnabled, Pending: MIGEnabled, Devices: map[string]int{"1g.5gb": 7}}
	r.GPUs[1].MIG = &MIG{Current: MIGEnabled, Pending: MIGEnabled, Devices: map[string]int{"3g.20gb": 1, "1g.5gb": 2, "1g.5gb+me": 1}}
	r.GPUs[2].MIG = &MIG{Current: MIGDisabled, Pending: MIGEnabled}
	l := r.Labels()
	assert.Equal(t, "true", l["nvidia.com/mig.capable"])
	assert.Equal(t, "mixed", l["nvidia.com/mig.strategy"])
	assert.Equal(t, "3", l["nvidia.com/gpu.count"], "GFD counts every GPU of the product")
	assert.Equal(t, "1", l["nvidia.com/gpu.replicas"], "GPU 2 runs without MIG")
	assert.Equal(t, "9", l["nvidia.com/mig-1g.5gb.count"])
	assert.Equal(t, "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", l["nvidia.com/mig-1g.5gb.product"])
	assert.Equal(t, "1", l["nvidia.com/mig-3g.20gb.count"])
	assert.Equal(t, "NVIDIA-A100-SXM4-40GB-MIG-1g.5gbme", l["nvidia.com/mig-1g.5gb+me.product"])
	assert.Equal(t, map[string]string{
		"nvidia.com/gpu":           "1",
		"nvidia.com/mig-1g.5gb":    "9",
		"nvidia.com/mig-1g.5gb+me": "1",
		"nvidia.com/mig-3g.20gb":   "1",
	}, r.Capacity())

	r.GPUs[2].MIG.Current = MIGEnabled
	assert.Equal(t, "0", r.Labels()["nvidia.com/gpu.replicas"], "every GPU of the product runs MIG")
	assert.NotContains(t, r.Capacity(), "nvidia.com/gpu")
}

// classifyNode writes the report's Node, reads it back as a snapshot and
// classifies it with the built-in catalog, as `accelc inventory show
// --inventory` does.
func classifyNode(t *testing.T, r *Report) inventory.Node {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, r.Write(&buf, FormatNode))
	raw, problems, err := inventory.Decode(buf.Bytes())
	require.NoError(t, err)
	require.Empty(t, problems)
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	inv := inventory.Classify(raw, cat, inventory.Options{})
	require.Len(t, inv.Nodes, 1)
	return inv.Nodes[0]
}

func TestNodeObjectClassifies(t *testing.T) {
	for _, tc := range []struct {
		product  string
		memMiB   uint64
		cc, id   string
		wantType string
	}{
		{"NVIDIA A100-SXM4-40GB", 40960, "8.0", "20b0", "nvidia-a100-40gb"},
		{"NVIDIA A100-SXM4-80GB", 81920, "8.0", "20b2", "nvidia-a100-80gb"},
		{"NVIDIA H100 80GB HBM3", 81559, "9.0", "2330", "nvidia-h100-80gb"},
		{"NVIDIA L40S", 46068, "8.9", "26b9", "nvidia-l40s-48gb"},
		{"Tesla T4", 15360, "7.5", "1eb8", "nvidia-t4-16gb"},
	} {
		t.Run(tc.product, func(t *testing.T) {
			n := classifyNode(t, &Report{Node: "gpu-1", DriverVersion: "550.54.15", CUDAVersion: "12.4",
				GPUs: gpus(2, tc.product, tc.memMiB, tc.cc, tc.id)})
			assert.Equal(t, "gpu-1", n.Name)
			assert.Equal(t, tc.wantType, n.AcceleratorType, n.Notes)
			assert.Equal(t, inventory.Exclusive, n.Sharing)
			assert.Equal(t, 2, n.Count)
			assert.Equal(t, 2, n.Allocatable)
		})
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	err := (&Report{}).Write(&bytes.Buffer{}, "yaml")
	require.EqualError(t, err, `unknown report format "yaml": choose one of report, node`)
}
