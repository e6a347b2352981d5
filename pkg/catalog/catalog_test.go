package catalog_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/catalog"
)

func TestBuiltinCatalog(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	// The minimum list, by canonical id.
	for _, id := range []string{
		"nvidia-a100-40gb", "nvidia-a100-80gb", "nvidia-a30-24gb", "nvidia-a10-24gb",
		"nvidia-a10g-24gb", "nvidia-h100-80gb", "nvidia-h100-94gb", "nvidia-h200-141gb",
		"nvidia-gh200-96gb", "nvidia-gh200-144gb", "nvidia-b200-180gb", "nvidia-l40s-48gb",
		"nvidia-l40-48gb", "nvidia-l4-24gb", "nvidia-t4-16gb", "nvidia-v100-16gb",
		"nvidia-v100-32gb", "nvidia-rtx-a6000-48gb", "nvidia-k80-12gb", "amd-mi210-64gb",
		"amd-mi250x-128gb", "amd-mi300x-192gb", "intel-gaudi2-96gb", "intel-gaudi3-128gb",
	} {
		c, ok := cat.Get(id)
		if assert.True(t, ok, id) {
			assert.NotEmpty(t, c.PCIDeviceIDs, id)
			assert.NotEmpty(t, c.Architecture, id)
			assert.Regexp(t, `^[a-z]+-[a-z0-9-]+-\d+gb$`, id)
			assert.Contains(t, id, "-"+strconv.Itoa(c.MemoryGB)+"gb", "id names the memory")
			if c.Vendor == "nvidia" {
				assert.NotEmpty(t, c.ComputeCapability, id)
				assert.NotEmpty(t, c.IdentifiedBy[catalog.LabelGFDProduct], id)
			}
		}
	}
}

func TestByLabel(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	for value, want := range map[string]string{
		"NVIDIA-A100-SXM4-80GB": "nvidia-a100-80gb",
		"A100-SXM4-40GB":        "nvidia-a100-40gb",
		"Tesla-T4":              "nvidia-t4-16gb",
		"TESLA-T4":              "nvidia-t4-16gb", // the device-plugin README's casing
		"NVIDIA-A10":            "nvidia-a10-24gb",
		"NVIDIA-A10G":           "nvidia-a10g-24gb",
		"NVIDIA-A100-80GB-PCIE": "nvidia-a100-80gb",
		"NVIDIA H200":           "nvidia-h200-141gb",
	} {
		c, ok := cat.ByLabel(catalog.LabelGFDProduct, value)
		if assert.True(t, ok, value) {
			assert.Equal(t, want, c.ID, value)
		}
	}
	_, ok := cat.ByLabel(catalog.LabelGFDProduct, "NVIDIA-A1")
	assert.False(t, ok, "a prefix of a product names nothing")
}

func TestNewRejectsAmbiguousLabels(t *testing.T) {
	_, err := catalog.New([]catalog.Class{
		{ID: "a", Vendor: "nvidia", Model: "X", IdentifiedBy: map[string][]string{catalog.LabelGFDProduct: {"NVIDIA-X"}}},
		{ID: "b", Vendor: "nvidia", Model: "X", IdentifiedBy: map[string][]string{catalog.LabelGFDProduct: {"X"}}},
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "identifies both a and b")
}

func TestClosest(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	assert.Equal(t, "nvidia-h200-141gb", cat.Closest("nvidia-h200-140gb", 3)[0])
	assert.Contains(t, cat.Closest("nvidia-a100", 3), "nvidia-a100-80gb")
}

// TestPCIIDsOfRealBoards: device ids pci.ids lists for boards of a class
// (pciutils/pciids, 2026.08.22), and the ROCm node labeller's amdgpu.ids
// for AMD's virtual functions, find that class, so NFD's rules label
// those nodes and mig-parted's device filter takes their GPUs. An id
// pci.ids gives no memory for (2336 "H100", 2920 "TS4 / B100", 31a1
// "GB300 MaxQ", 74a9 and 74bd "MI300X HF"), a memory no class has (2337
// 64GB, 2338 and 233d 96GB H100, 2909 "HGX B200 168GB"), or that names
// another product (74a2 MI308X, 2bb2 RTX PRO 6000D) stays off the catalog.
func TestPCIIDsOfRealBoards(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	for _, tc := range []struct{ vendor, device, want string }{
		{"nvidia", "20f1", "nvidia-a100-40gb"},         // GA100 [A100 PCIe 40GB]
		{"nvidia", "1df5", "nvidia-v100-16gb"},         // GV100GL [Tesla V100 SXM2 16GB]
		{"nvidia", "1db2", "nvidia-v100-16gb"},         // GV100GL [Tesla V100 DGXS 16GB]
		{"nvidia", "1db3", "nvidia-v100-16gb"},         // GV100GL [Tesla V100 FHHL 16GB]
		{"nvidia", "1db7", "nvidia-v100-32gb"},         // GV100GL [Tesla V100 DGXS 32GB]
		{"nvidia", "2339", "nvidia-h100-94gb"},         // GH100 [H100 SXM5 94GB]
		{"nvidia", "2901", "nvidia-b200-180gb"},        // GB100 [B200]
		{"nvidia", "29bc", "nvidia-b100-192gb"},        // GB102 [B100]
		{"nvidia", "3182", "nvidia-b300-288gb"},        // GB110 [B300 SXM6 AC]
		{"nvidia", "2941", "nvidia-gb200-186gb"},       // GB100 [HGX GB200]
		{"nvidia", "31c2", "nvidia-gb300-279gb"},       // GB110 [GB300]
		{"nvidia", "31c3", "nvidia-gb300-279gb"},       // GB110 [GB300]
		{"nvidia", "2bb1", "nvidia-rtx-pro-6000-96gb"}, // GB202GL [RTX PRO 6000 Blackwell Workstation Edition]
		{"nvidia", "2bb4", "nvidia-rtx-pro-6000-96gb"}, // GB202GL [RTX PRO 6000 Blackwell Max-Q Workstation Edition]
		{"nvidia", "2bb5", "nvidia-rtx-pro-6000-96gb"}, // GB202GL [RTX PRO 6000 Blackwell Server Edition]
		{"amd", "74a0", "amd-mi300a-128gb"},            // Aqua Vanjaram [Instinct MI300A]
		{"amd", "74b5", "amd-mi300x-192gb"},            // Aqua Vanjaram [Instinct MI300X VF]
		{"amd", "74b9", "amd-mi325x-256gb"},            // Aqua Vanjaram [Instinct MI325X VF]
		{"amd", "75a0", "amd-mi350x-288gb"},            // Aqua Vanjaram [Instinct MI350X]
		{"amd", "75b0", "amd-mi350x-288gb"},            // amdgpu.ids: AMD Instinct MI350X VF
		{"amd", "75a3", "amd-mi355x-288gb"},            // Aqua Vanjaram [Instinct MI355X]
		{"amd", "75b3", "amd-mi355x-288gb"},            // amdgpu.ids: AMD Instinct MI355X VF
		{"intel", "1063", "intel-gaudi3-128gb"},        // Habana: Gaudi3 AI Training Accelerator Add-In Family
		{"intel", "0bd5", "intel-max-1550-128gb"},      // Ponte Vecchio XT (2 Tile) [Data Center GPU Max 1550]
		{"intel", "0bd6", "intel-max-1550-128gb"},      // Ponte Vecchio XT (2 Tile) [Data Center GPU Max 1550]
		{"intel", "0bda", "intel-max-1100-48gb"},       // Ponte Vecchio XT (1 Tile) [Data Center GPU Max 1100]
	} {
		got := cat.ByPCI(tc.vendor, tc.device)
		if assert.Len(t, got, 1, tc.device) {
			assert.Equal(t, tc.want, got[0].ID, tc.device)
		}
	}
	for _, device := range []string{"2336", "2337", "2338", "233d", "2909", "2920", "31a1", "2bb2"} {
		assert.Empty(t, cat.ByPCI("nvidia", device), device)
	}
	for _, device := range []string{"74a2", "74a9", "74bd"} {
		assert.Empty(t, cat.ByPCI("amd", device), device)
	}
	maxGPU, _ := cat.Get("intel-max-1550-128gb")
	assert.Equal(t, "8086", maxGPU.PCIVendor(), "Intel's data-centre GPUs are not Habana's 1da3")
	gaudi, _ := cat.Get("intel-gaudi3-128gb")
	assert.Equal(t, "1da3", gaudi.PCIVendor())
}

// TestEveryClassHasPCIIDOrReason: NFD stamps the type label by PCI id, so
// a class without one is found only by its labels. Each built-in class
// lists ids, or says in noPCIDeviceIDs why not, never both; a class with
// ids has a PCI vendor id to match them with. (Google's TPUs and AWS's
// Neuron devices list none: their vendors' PCI ids are also those of
// every VM's network card, and would make any node an accelerator node.)
func TestEveryClassHasPCIIDOrReason(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	for _, c := range cat.Classes() {
		switch {
		case len(c.PCIDeviceIDs) == 0 && c.NoPCIDeviceIDs == "":
			t.Errorf("%s lists no PCI device id and gives no reason (noPCIDeviceIDs)", c.ID)
		case len(c.PCIDeviceIDs) > 0 && c.NoPCIDeviceIDs != "":
			t.Errorf("%s lists PCI device ids %v and a reason for having none", c.ID, c.PCIDeviceIDs)
		}
		if len(c.PCIDeviceIDs) > 0 {
			assert.Regexp(t, `^[0-9a-f]{4}$`, c.PCIVendor(), "%s: a PCI vendor id", c.ID)
		}
	}
}
