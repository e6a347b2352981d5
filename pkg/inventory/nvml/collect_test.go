//go:build cgo

package nvml

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
)

// a100Name is the name drivers give the DGX A100's GPUs; go-nvml's mock
// calls them "Mock NVIDIA A100-SXM4-40GB".
const a100Name = "NVIDIA A100-SXM4-40GB"

// mockSerial is what the mock GPUs would answer if asked for a serial.
const mockSerial = "1564720012345"

// nvSwitchBusID is the PCI bus id of the NVSwitch every link leads to in
// newDGXA100's topology.
const nvSwitchBusID = "00000000:C4:00.0"

// newDGXA100 is go-nvml's DGX A100 mock with what a real one also
// answers: the driver's product name, PCI bus ids in NVML's format, and
// 12 active NVLinks per GPU into the NVSwitch fabric. Asking for a UUID or
// serial number fails the test: a report must never read them.
func newDGXA100(t *testing.T) *dgxa100.Server {
	t.Helper()
	s := dgxa100.New()
	for _, h := range s.Devices {
		d := h.(*dgxa100.Device)
		d.Name = a100Name
		pci := pciInfo(fmt.Sprintf("0000%s", strings.ToUpper(d.PciBusID)))
		d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) { return pci, nvml.SUCCESS }
		d.GetUUIDFunc = func() (string, nvml.Return) {
			t.Errorf("GPU %d: the report read the UUID", d.Index)
			return d.UUID, nvml.SUCCESS
		}
		d.GetSerialFunc = func() (string, nvml.Return) {
			t.Errorf("GPU %d: the report read the serial number", d.Index)
			return mockSerial, nvml.SUCCESS
		}
		wireNVLinks(d, func(link int) (string, nvml.IntNvLinkDeviceType, bool) {
			return nvSwitchBusID, nvml.NVLINK_DEVICE_TYPE_SWITCH, link < 12
		})
	}
	return s
}

// pciInfo is the PCI information of an A100 at busID.
func pciInfo(busID string) nvml.PciInfo {
	p := nvml.PciInfo{PciDeviceId: 0x20B010DE}
	copy(p.BusId[:], busID)
	return p
}

// wireNVLinks answers the NVLink queries of d from far, which gives a
// link's far end and whether the link is active; links 12 and up do not
// exist, as on an A100.
func wireNVLinks(d *dgxa100.Device, far func(link int) (busID string, kind nvml.IntNvLinkDeviceType, active bool)) {
	d.GetNvLinkStateFunc = func(link int) (nvml.EnableState, nvml.Return) {
		if link >= 12 {
			return 0, nvml.ERROR_INVALID_ARGUMENT
		}
		if _, _, active := far(link); active {
			return nvml.FEATURE_ENABLED, nvml.SUCCESS
		}
		return nvml.FEATURE_DISABLED, nvml.SUCCESS
	}
	d.GetNvLinkRemotePciInfoFunc = func(link int) (nvml.PciInfo, nvml.Return) {
		busID, _, _ := far(link)
		return pciInfo(busID), nvml.SUCCESS
	}
	d.GetNvLinkRemoteDeviceTypeFunc = func(link int) (nvml.IntNvLinkDeviceType, nvml.Return) {
		_, kind, _ := far(link)
		return kind, nvml.SUCCESS
	}
}

// secrets are the strings of s that must never reach a report: UUIDs,
// serials and PCI bus ids in every form.
func secrets(s *dgxa100.Server) []string {
	out := []string{mockSerial, nvSwitchBusID, strings.ToLower(nvSwitchBusID)}
	for _, h := range s.Devices {
		d := h.(*dgxa100.Device)
		bus := busID(pciInfoOf(d))
		out = append(out, d.UUID, strings.TrimPrefix(d.UUID, "GPU-"), d.PciBusID, bus, strings.ToUpper(bus))
	}
	return out
}

func pciInfoOf(d *dgxa100.Device) nvml.PciInfo {
	p, _ := d.GetPciInfo()
	return p
}

func writeReport(t *testing.T, r *Report) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, r.Write(&buf, FormatReport))
	require.True(t, json.Valid(buf.Bytes()))
	return buf.String()
}

func TestCollectDGXA100(t *testing.T) {
	s := newDGXA100(t)
	r, err := Collect(s, "dgx-a100-01")
	require.NoError(t, err)

	assert.Equal(t, Kind, r.Kind)
	assert.Equal(t, APIVersion, r.APIVersion)
	assert.Equal(t, "dgx-a100-01", r.Node)
	assert.Equal(t, "550.54.15", r.DriverVersion)
	assert.Equal(t, "12.4", r.CUDAVersion)
	require.Len(t, r.GPUs, 8)
	for i, g := range r.GPUs {
		assert.Equal(t, GPU{
			Index:             i,
			Product:           a100Name,
			Architecture:      "Ampere",
			ComputeCapability: "8.0",
			MemoryMiB:         40960,
			MemoryGiB:         40,
			PCIVendorID:       "10de",
			PCIDeviceID:       "20b0",
			MIG:               &MIG{Current: MIGDisabled, Pending: MIGDisabled},
			NVLink:            &NVLink{ActiveLinks: 12, SwitchLinks: 12},
		}, g)
	}

	out := writeReport(t, r)
	for _, secret := range secrets(s) {
		assert.NotContains(t, out, secret, "the report leaks a UUID, serial or PCI bus id")
	}
	assert.Contains(t, out, `"kind": "NVMLReport"`)
	assert.Contains(t, out, `"nodeObject": {`)
	assert.Contains(t, out, `"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"`)
}

func TestCollectDGXA100Classifies(t *testing.T) {
	r, err := Collect(newDGXA100(t), "dgx-a100-01")
	require.NoError(t, err)
	n := classifyNode(t, r)
	assert.Equal(t, "nvidia-a100-40gb", n.AcceleratorType, n.Notes)
	assert.Equal(t, "NVIDIA A100 40GB", n.DisplayName)
	assert.Equal(t, inventory.Exclusive, n.Sharing)
	assert.Equal(t, 8, n.Count)
	assert.Equal(t, 8, n.Allocatable)
	assert.Equal(t, 40, n.MemoryGB)
}

// TestCollectNVLinkPeers wires the GPUs in pairs (0-1, 2-3, …) with four
// direct links each, as NVLink bridges do, plus one link to an NVSwitch
// and one to a device that is neither.
func TestCollectNVLinkPeers(t *testing.T) {
	s := newDGXA100(t)
	for _, h := range s.Devices {
		d := h.(*dgxa100.Device)
		peer := s.Devices[d.Index^1].(*dgxa100.Device)
		peerBus := busID(pciInfoOf(peer))
		wireNVLinks(d, func(link int) (string, nvml.IntNvLinkDeviceType, bool) {
			switch {
			case link < 4:
				return peerBus, nvml.NVLINK_DEVICE_TYPE_GPU, true
			case link == 4:
				return nvSwitchBusID, nvml.NVLINK_DEVICE_TYPE_SWITCH, true
			case link == 5:
				return "00000000:99:00.0", nvml.NVLINK_DEVICE_TYPE_IBMNPU, true
			}
			return "", nvml.NVLINK_DEVICE_TYPE_UNKNOWN, false
		})
	}
	r, err := Collect(s, "bridged")
	require.NoError(t, err)
	assert.Equal(t, &NVLink{ActiveLinks: 6, Peers: []Peer{{GPU: 1, Links: 4}}, SwitchLinks: 1, OtherLinks: 1}, r.GPUs[0].NVLink)
	assert.Equal(t, []Peer{{GPU: 6, Links: 4}}, r.GPUs[7].NVLink.Peers)

	out := writeReport(t, r)
	for _, secret := range append(secrets(s), "00000000:99:00.0") {
		assert.NotContains(t, out, secret)
	}
}

func TestCollectNoNVLink(t *testing.T) {
	s := newDGXA100(t)
	for _, h := range s.Devices {
		h.(*dgxa100.Device).GetNvLinkStateFunc = func(int) (nvml.EnableState, nvml.Return) {
			return 0, nvml.ERROR_NOT_SUPPORTED
		}
	}
	r, err := Collect(s, "pcie")
	require.NoError(t, err)
	assert.Nil(t, r.GPUs[0].NVLink)
	assert.NotContains(t, writeReport(t, r), "nvlink")
}

func TestCollectErrors(t *testing.T) {
	t.Run("no driver", func(t *testing.T) {
		s := newDGXA100(t)
		s.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
		_, err := Collect(s, "n")
		require.ErrorIs(t, err, ErrNoDriver)
		assert.EqualError(t, err, "NVML not available: the NVIDIA driver (libnvidia-ml.so.1) is not installed on this machine; run accelc inventory nvml on a GPU node, e.g. as a Job with the NVIDIA container runtime")
	})
	t.Run("kernel driver not loaded", func(t *testing.T) {
		s := newDGXA100(t)
		s.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
		_, err := Collect(s, "n")
		require.ErrorIs(t, err, nvml.ERROR_DRIVER_NOT_LOADED)
		assert.Contains(t, err.Error(), "the NVIDIA kernel driver is not loaded")
	})
	t.Run("a GPU that fails names its index and shuts NVML down", func(t *testing.T) {
		s := newDGXA100(t)
		shutdown := false
		s.ShutdownFunc = func() nvml.Return { shutdown = true; return nvml.SUCCESS }
		s.Devices[3].(*dgxa100.Device).GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST
		}
		_, err := Collect(s, "n")
		require.ErrorIs(t, err, nvml.ERROR_GPU_IS_LOST)
		assert.Regexp(t, `^NVML: GPU 3: reading the memory size: `, err.Error())
		assert.True(t, shutdown)
	})
}

func TestFormatCUDAVersion(t *testing.T) {
	for v, want := range map[int]string{12040: "12.4", 11080: "11.8", 12000: "12.0", 13010: "13.1"} {
		assert.Equal(t, want, formatCUDAVersion(v))
	}
}

// TestReportMergesIntoSnapshot: the report of a node the GPU Operator does
// not label, merged into a snapshot where that node has only capacity,
// turns it from unknown into its real type; the kubelet's counts stand.
func TestReportMergesIntoSnapshot(t *testing.T) {
	r, err := Collect(newDGXA100(t), "dgx-a100-01")
	require.NoError(t, err)
	report := writeReport(t, r)
	fromReport, err := inventory.DecodeSnapshot([]byte(report))
	require.NoError(t, err, "an NVML report reads as a one-node snapshot")
	require.Len(t, fromReport.Nodes, 1)

	snap, err := inventory.DecodeSnapshot([]byte(`{"kind":"NodeList","items":[
	  {"metadata":{"name":"dgx-a100-01"},"status":{"capacity":{"nvidia.com/gpu":"8"},"allocatable":{"nvidia.com/gpu":"7"}}},
	  {"metadata":{"name":"cpu-01"},"status":{"capacity":{"cpu":"16"}}}]}`))
	require.NoError(t, err)
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	before := snap.Classify(cat, inventory.Options{})
	require.Equal(t, inventory.TypeUnknown, before.Nodes[0].AcceleratorType)

	merged, added := snap.Merge(fromReport)
	assert.Equal(t, []string{"dgx-a100-01"}, merged)
	assert.Empty(t, added)
	after := snap.Classify(cat, inventory.Options{})
	require.Len(t, after.Nodes, 1)
	assert.Equal(t, "nvidia-a100-40gb", after.Nodes[0].AcceleratorType)
	assert.Equal(t, 7, after.Nodes[0].Allocatable, "the kubelet's allocatable stands")
	assert.Equal(t, 1, after.OtherNodes)
}
