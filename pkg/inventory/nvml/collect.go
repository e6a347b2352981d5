//go:build cgo

package nvml

import (
	"fmt"
	"math"
	"strconv"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Collect initializes lib, reads the report of the named node from it and
// shuts lib down again. Local passes this machine's NVML library; tests
// pass go-nvml's mocks (pkg/nvml/mock/dgxa100).
//
// A missing driver is ErrNoDriver; other errors name the GPU by index and
// what was being read, and wrap NVML's nvml.Return.
func Collect(lib nvml.Interface, node string) (*Report, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, initError(ret)
	}
	defer func() { _ = lib.Shutdown() }()
	return collect(lib, node)
}

// initError explains why NVML could not start, and what to do.
func initError(ret nvml.Return) error {
	switch ret {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		return ErrNoDriver
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return fmt.Errorf("NVML not available: libnvidia-ml.so.1 is installed but the NVIDIA kernel driver is not loaded on this machine (%w)", ret)
	case nvml.ERROR_NO_PERMISSION:
		return fmt.Errorf("NVML not available: no permission to open the GPUs; run with access to /dev/nvidia* (e.g. through the NVIDIA container runtime) (%w)", ret)
	}
	return fmt.Errorf("NVML not available: initializing NVML failed: %w", ret)
}

// device is one GPU handle with its NVML index and PCI information.
type device struct {
	index  int
	handle nvml.Device
	pci    nvml.PciInfo
}

func collect(lib nvml.Interface, node string) (*Report, error) {
	r := &Report{APIVersion: APIVersion, Kind: Kind, Node: node}
	var err error
	if r.DriverVersion, err = driverVersion(lib); err != nil {
		return nil, err
	}
	if r.CUDAVersion, err = cudaVersion(lib); err != nil {
		return nil, err
	}
	devices, err := openDevices(lib)
	if err != nil {
		return nil, err
	}
	byBusID := indexByBusID(devices)
	r.GPUs = make([]GPU, 0, len(devices))
	for _, d := range devices {
		g, err := readGPU(d, byBusID)
		if err != nil {
			return nil, fmt.Errorf("NVML: GPU %d: %w", d.index, err)
		}
		r.GPUs = append(r.GPUs, g)
	}
	return r, nil
}

func driverVersion(lib nvml.Interface) (string, error) {
	v, ret := lib.SystemGetDriverVersion()
	if ret != nvml.SUCCESS {
		return "", fmt.Errorf("NVML: reading the driver version: %w", ret)
	}
	return v, nil
}

// cudaVersion reads the CUDA version the driver supports, which NVML
// gives as 1000*major + 10*minor (12040 is 12.4).
func cudaVersion(lib nvml.Interface) (string, error) {
	v, ret := lib.SystemGetCudaDriverVersion()
	if ret != nvml.SUCCESS {
		return "", fmt.Errorf("NVML: reading the CUDA driver version: %w", ret)
	}
	return formatCUDAVersion(v), nil
}

func formatCUDAVersion(v int) string {
	return strconv.Itoa(v/1000) + "." + strconv.Itoa(v%1000/10)
}

func openDevices(lib nvml.Interface) ([]device, error) {
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML: counting the GPUs: %w", ret)
	}
	devices := make([]device, n)
	for i := range devices {
		h, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML: GPU %d: opening it: %w", i, ret)
		}
		pci, ret := h.GetPciInfo()
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("NVML: GPU %d: reading its PCI information: %w", i, ret)
		}
		devices[i] = device{index: i, handle: h, pci: pci}
	}
	return devices, nil
}

func readGPU(d device, byBusID map[string]int) (GPU, error) {
	g := GPU{
		Index:       d.index,
		PCIVendorID: fmt.Sprintf("%04x", d.pci.PciDeviceId&0xffff),
		PCIDeviceID: fmt.Sprintf("%04x", d.pci.PciDeviceId>>16),
	}
	var ret nvml.Return
	if g.Product, ret = d.handle.GetName(); ret != nvml.SUCCESS {
		return GPU{}, fmt.Errorf("reading the product name: %w", ret)
	}
	mem, ret := d.handle.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return GPU{}, fmt.Errorf("reading the memory size: %w", ret)
	}
	g.MemoryMiB = mem.Total / (1 << 20)
	g.MemoryGiB = uint64(math.Round(float64(g.MemoryMiB) / 1024))
	var err error
	if g.Architecture, err = architecture(d.handle); err != nil {
		return GPU{}, err
	}
	if g.ComputeCapability, err = computeCapability(d.handle); err != nil {
		return GPU{}, err
	}
	if g.MIG, err = readMIG(d.handle, mem.Total); err != nil {
		return GPU{}, err
	}
	if g.NVLink, err = readNVLink(d, byBusID); err != nil {
		return GPU{}, err
	}
	return g, nil
}

// architectureNames are the catalog's names of NVML's architectures.
var architectureNames = map[nvml.DeviceArchitecture]string{
	nvml.DEVICE_ARCH_KEPLER:    "Kepler",
	nvml.DEVICE_ARCH_MAXWELL:   "Maxwell",
	nvml.DEVICE_ARCH_PASCAL:    "Pascal",
	nvml.DEVICE_ARCH_VOLTA:     "Volta",
	nvml.DEVICE_ARCH_TURING:    "Turing",
	nvml.DEVICE_ARCH_AMPERE:    "Ampere",
	nvml.DEVICE_ARCH_ADA:       "Ada Lovelace",
	nvml.DEVICE_ARCH_HOPPER:    "Hopper",
	nvml.DEVICE_ARCH_BLACKWELL: "Blackwell",
}

// architecture names the GPU's architecture; it is empty for one this
// version of go-nvml does not know, or a driver that does not say.
func architecture(h nvml.Device) (string, error) {
	arch, ret := h.GetArchitecture()
	if ok, err := supported(ret, "architecture"); !ok {
		return "", err
	}
	return architectureNames[arch], nil
}

func computeCapability(h nvml.Device) (string, error) {
	major, minor, ret := h.GetCudaComputeCapability()
	if ok, err := supported(ret, "compute capability"); !ok {
		return "", err
	}
	return strconv.Itoa(major) + "." + strconv.Itoa(minor), nil
}

// supported sorts an NVML answer: true on success, false without an
// error when the GPU or driver lacks the feature, and an error naming what
// was read otherwise.
func supported(ret nvml.Return, what string) (bool, error) {
	switch ret {
	case nvml.SUCCESS:
		return true, nil
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_FUNCTION_NOT_FOUND:
		return false, nil
	}
	return false, fmt.Errorf("reading the %s: %w", what, ret)
}

// absent reports whether ret says that what was asked for does not exist
// on this GPU or driver: a link or profile id past the end, or a feature
// the GPU lacks.
func absent(ret nvml.Return) bool {
	switch ret {
	case nvml.ERROR_NOT_SUPPORTED, nvml.ERROR_INVALID_ARGUMENT, nvml.ERROR_FUNCTION_NOT_FOUND, nvml.ERROR_NOT_FOUND:
		return true
	}
	return false
}
