//go:build cgo

package nvml

import (
	"fmt"
	"math"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// readMIG reads a GPU's MIG mode and, with MIG enabled, its MIG devices.
// It is nil for a GPU that does not support MIG.
func readMIG(h nvml.Device, totalMemory uint64) (*MIG, error) {
	current, pending, ret := h.GetMigMode()
	if ok, err := supported(ret, "MIG mode"); !ok {
		return nil, err
	}
	m := &MIG{Current: migModeName(current), Pending: migModeName(pending)}
	if !m.Enabled() {
		return m, nil
	}
	devices, err := migDevices(h, totalMemory)
	if err != nil {
		return nil, err
	}
	m.Devices = devices
	return m, nil
}

func migModeName(mode int) string {
	if mode == nvml.DEVICE_MIG_ENABLE {
		return MIGEnabled
	}
	return MIGDisabled
}

// migDevices counts a MIG-enabled GPU's compute instances by profile
// name, walking its GPU instances profile by profile as mig-parted does.
// It is nil when the GPU has none.
func migDevices(h nvml.Device, totalMemory uint64) (map[string]int, error) {
	counts := map[string]int{}
	for id := range nvml.GPU_INSTANCE_PROFILE_COUNT {
		gip, ret := h.GetGpuInstanceProfileInfo(id)
		if absent(ret) {
			continue
		}
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("reading MIG GPU instance profile %d: %w", id, ret)
		}
		gis, ret := h.GetGpuInstances(&gip)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("listing the MIG GPU instances of profile %d: %w", id, ret)
		}
		for _, gi := range gis {
			if err := countComputeInstances(gi, gip, totalMemory, counts); err != nil {
				return nil, err
			}
		}
	}
	if len(counts) == 0 {
		return nil, nil
	}
	return counts, nil
}

// countComputeInstances adds a GPU instance's compute instances, the MIG
// devices the device plugin hands out, to counts by profile name.
func countComputeInstances(gi nvml.GpuInstance, gip nvml.GpuInstanceProfileInfo, totalMemory uint64, counts map[string]int) error {
	for id := range nvml.COMPUTE_INSTANCE_PROFILE_COUNT {
		cip, ret := gi.GetComputeInstanceProfileInfo(id, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		if absent(ret) {
			continue
		}
		if ret != nvml.SUCCESS {
			return fmt.Errorf("reading MIG compute instance profile %d: %w", id, ret)
		}
		cis, ret := gi.GetComputeInstances(&cip)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("listing the MIG compute instances of profile %d: %w", id, ret)
		}
		if len(cis) > 0 {
			counts[migProfileName(gip.Id, gip.SliceCount, cip.SliceCount, gip.MemorySizeMB, totalMemory)] += len(cis)
		}
	}
	return nil
}

// migProfileName names a MIG device as NVIDIA's device plugin, GFD and
// mig-parted do (go-nvlib's MigProfileInfo.String): "<g>g.<gb>gb" for a
// compute instance that fills its GPU instance, "<c>c.<g>g.<gb>gb" for a
// smaller one, with the GPU instance profile's attribute: "+me" (media
// extensions), "+me.all", "+gfx", or "-me" (none). gb is the instance's
// share of the GPU's memory rounded up to eighths, times the GPU's memory
// in whole GiB: 4864 MiB of an A100's 40 GiB is 1g.5gb.
func migProfileName(giProfileID, giSlices, ciSlices uint32, memoryMiB, totalMemory uint64) string {
	name := fmt.Sprintf("%dg.%dgb", giSlices, migMemoryGB(memoryMiB, totalMemory))
	if ciSlices != giSlices {
		name = fmt.Sprintf("%dc.%s", ciSlices, name)
	}
	return name + migProfileAttribute(giProfileID)
}

func migMemoryGB(memoryMiB, totalMemory uint64) uint64 {
	const eighths = 8
	if totalMemory == 0 {
		return 0
	}
	share := float64(memoryMiB<<20) / float64(totalMemory)
	share = math.Ceil(share*eighths) / eighths
	totalGiB := (totalMemory + 1<<30 - 1) >> 30
	return uint64(math.Round(share * float64(totalGiB)))
}

func migProfileAttribute(giProfileID uint32) string {
	switch giProfileID {
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, nvml.GPU_INSTANCE_PROFILE_2_SLICE_REV1:
		return "+me"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_ALL_ME:
		return "+me.all"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_2_SLICE_GFX, nvml.GPU_INSTANCE_PROFILE_4_SLICE_GFX:
		return "+gfx"
	case nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME, nvml.GPU_INSTANCE_PROFILE_2_SLICE_NO_ME:
		return "-me"
	}
	return ""
}
