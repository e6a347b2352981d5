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
// (pciutils/pciids, August 2026) find that class, so NFD's rules label
// those nodes and mig-parted's device filter takes their GPUs. An id pci.ids
// gives no memory for (2336 "H100"), or a memory no class has (2337 64GB,
// 2338 and 233d 96GB H100, 29bc B100), stays off the catalog.
func TestPCIIDsOfRealBoards(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	for device, want := range map[string]string{
		"20f1": "nvidia-a100-40gb", // GA100 [A100 PCIe 40GB]
		"1df5": "nvidia-v100-16gb", // GV100GL [Tesla V100 SXM2 16GB]
		"1db2": "nvidia-v100-16gb", // GV100GL [Tesla V100 DGXS 16GB]
		"1db3": "nvidia-v100-16gb", // GV100GL [Tesla V100 FHHL 16GB]
		"1db7": "nvidia-v100-32gb", // GV100GL [Tesla V100 DGXS 32GB]
		"2339": "nvidia-h100-94gb", // GH100 [H100 SXM5 94GB]
	} {
		got := cat.ByPCI("nvidia", device)
		if assert.Len(t, got, 1, device) {
			assert.Equal(t, want, got[0].ID, device)
		}
	}
	for _, device := range []string{"2336", "2337", "2338", "233d"} {
		assert.Empty(t, cat.ByPCI("nvidia", device), device)
	}
}
