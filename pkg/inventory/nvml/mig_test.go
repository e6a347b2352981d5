//go:build cgo

package nvml

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/inventory"
)

func TestMIGProfileName(t *testing.T) {
	const (
		a100 = 40960 << 20 // bytes, as NVML reports an A100 40GB
		h100 = 81559 << 20 // an H100 80GB HBM3
	)
	for _, tc := range []struct {
		gi, giSlices, ciSlices uint32
		memMiB, total          uint64
		want                   string
	}{
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE, 1, 1, 4864, a100, "1g.5gb"},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, 1, 1, 4864, a100, "1g.5gb+me"},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2, 1, 1, 9856, a100, "1g.10gb"},
		{nvml.GPU_INSTANCE_PROFILE_2_SLICE, 2, 2, 9856, a100, "2g.10gb"},
		{nvml.GPU_INSTANCE_PROFILE_3_SLICE, 3, 3, 19968, a100, "3g.20gb"},
		{nvml.GPU_INSTANCE_PROFILE_3_SLICE, 3, 1, 19968, a100, "1c.3g.20gb"},
		{nvml.GPU_INSTANCE_PROFILE_4_SLICE, 4, 4, 19968, a100, "4g.20gb"},
		{nvml.GPU_INSTANCE_PROFILE_7_SLICE, 7, 7, 40192, a100, "7g.40gb"},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE, 1, 1, 9984, h100, "1g.10gb"},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV2, 1, 1, 19968, h100, "1g.20gb"},
		{nvml.GPU_INSTANCE_PROFILE_3_SLICE, 3, 3, 40320, h100, "3g.40gb"},
		{nvml.GPU_INSTANCE_PROFILE_7_SLICE, 7, 7, 80896, h100, "7g.80gb"},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_ALL_ME, 1, 1, 9984, h100, "1g.10gb+me.all"},
		{nvml.GPU_INSTANCE_PROFILE_1_SLICE_NO_ME, 1, 1, 9984, h100, "1g.10gb-me"},
		{nvml.GPU_INSTANCE_PROFILE_2_SLICE_GFX, 2, 2, 20096, h100, "2g.20gb+gfx"},
	} {
		assert.Equal(t, tc.want, migProfileName(tc.gi, tc.giSlices, tc.ciSlices, tc.memMiB, tc.total))
	}
}

// createMIGDevices makes a GPU instance of profile gi on d with one
// compute instance of each profile in cis.
func createMIGDevices(t *testing.T, d *dgxa100.Device, gi int, cis ...int) {
	t.Helper()
	info, ret := d.GetGpuInstanceProfileInfo(gi)
	require.Equal(t, nvml.SUCCESS, ret)
	inst, ret := d.CreateGpuInstance(&info)
	require.Equal(t, nvml.SUCCESS, ret)
	for _, ci := range cis {
		ciInfo, ret := inst.GetComputeInstanceProfileInfo(ci, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		require.Equal(t, nvml.SUCCESS, ret)
		_, ret = inst.CreateComputeInstance(&ciInfo)
		require.Equal(t, nvml.SUCCESS, ret)
	}
}

// newMIGServer is a DGX A100 with GPU 0 in seven 1g.5gb devices, GPU 1 in
// 3g.20gb, 2g.10gb, 1g.5gb+me and an empty GPU instance, GPU 2 in a 3g
// GPU instance split into two 1c.3g.20gb devices, and GPU 3 waiting for a
// reset to enable MIG.
func newMIGServer(t *testing.T) *dgxa100.Server {
	s := newDGXA100(t)
	dev := func(i int) *dgxa100.Device { return s.Devices[i].(*dgxa100.Device) }
	for i := range 3 {
		_, ret := dev(i).SetMigMode(nvml.DEVICE_MIG_ENABLE)
		require.Equal(t, nvml.SUCCESS, ret)
	}
	for range 7 {
		createMIGDevices(t, dev(0), nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE)
	}
	createMIGDevices(t, dev(1), nvml.GPU_INSTANCE_PROFILE_3_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE)
	createMIGDevices(t, dev(1), nvml.GPU_INSTANCE_PROFILE_2_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_2_SLICE)
	createMIGDevices(t, dev(1), nvml.GPU_INSTANCE_PROFILE_1_SLICE_REV1, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE)
	createMIGDevices(t, dev(1), nvml.GPU_INSTANCE_PROFILE_1_SLICE)
	createMIGDevices(t, dev(2), nvml.GPU_INSTANCE_PROFILE_3_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE)
	dev(3).GetMigModeFunc = func() (int, int, nvml.Return) {
		return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS
	}
	return s
}

func TestCollectMIG(t *testing.T) {
	s := newMIGServer(t)
	r, err := Collect(s, "dgx-mig")
	require.NoError(t, err)
	assert.Equal(t, &MIG{Current: MIGEnabled, Pending: MIGEnabled, Devices: map[string]int{"1g.5gb": 7}}, r.GPUs[0].MIG)
	assert.Equal(t, &MIG{Current: MIGEnabled, Pending: MIGEnabled, Devices: map[string]int{"3g.20gb": 1, "2g.10gb": 1, "1g.5gb+me": 1}}, r.GPUs[1].MIG)
	assert.Equal(t, &MIG{Current: MIGEnabled, Pending: MIGEnabled, Devices: map[string]int{"1c.3g.20gb": 2}}, r.GPUs[2].MIG)
	assert.Equal(t, &MIG{Current: MIGDisabled, Pending: MIGEnabled}, r.GPUs[3].MIG)
	assert.Equal(t, &MIG{Current: MIGDisabled, Pending: MIGDisabled}, r.GPUs[4].MIG)

	out := writeReport(t, r)
	for _, secret := range secrets(s) {
		assert.NotContains(t, out, secret)
	}

	n := classifyNode(t, r)
	assert.Equal(t, "nvidia-a100-40gb", n.AcceleratorType, n.Notes)
	assert.Equal(t, inventory.MIGMixed, n.Sharing)
	assert.Equal(t, 8, n.Count)
	assert.Equal(t, map[string]int{"1g.5gb": 7, "3g.20gb": 1, "2g.10gb": 1, "1g.5gb+me": 1, "1c.3g.20gb": 2}, n.MIGDevices)
	assert.Equal(t, 5+12, n.Allocatable, "five whole GPUs and twelve MIG devices")
}

func TestCollectNotMIGCapable(t *testing.T) {
	s := newDGXA100(t)
	for _, h := range s.Devices {
		h.(*dgxa100.Device).GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED }
	}
	r, err := Collect(s, "n")
	require.NoError(t, err)
	assert.Nil(t, r.GPUs[0].MIG)
	assert.Equal(t, "false", r.Labels()["nvidia.com/mig.capable"])
}
