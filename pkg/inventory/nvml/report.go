package nvml

// The report NVML gives of a node's GPUs: models, memory, MIG, NVLink.

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Report kind and API version, as the report document carries them.
const (
	Kind       = "NVMLReport"
	APIVersion = "accelc.io/v1alpha1"
)

// Report is what NVML says about one node's GPUs. It holds no serial
// numbers, UUIDs or PCI bus ids (see the package documentation).
type Report struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Node is the Kubernetes node name the report is for.
	Node string `json:"node"`
	// DriverVersion is the NVIDIA driver's version ("550.54.15").
	DriverVersion string `json:"driverVersion"`
	// CUDAVersion is the newest CUDA version the driver supports, as
	// major.minor ("12.4").
	CUDAVersion string `json:"cudaVersion"`
	// GPUs are in NVML index order.
	GPUs []GPU `json:"gpus"`
}

// GPU is one physical GPU.
type GPU struct {
	// Index is NVML's index of the GPU, the one nvidia-smi shows.
	Index int `json:"index"`
	// Product is the name NVML reports ("NVIDIA A100-SXM4-40GB").
	Product string `json:"product"`
	// Architecture is the GPU architecture ("Ampere"), empty when NVML does
	// not name it.
	Architecture string `json:"architecture,omitempty"`
	// ComputeCapability is the CUDA compute capability ("8.0"), empty when
	// unknown.
	ComputeCapability string `json:"computeCapability,omitempty"`
	// MemoryMiB is the total memory, as GFD's nvidia.com/gpu.memory label
	// gives it; MemoryGiB is the same rounded to whole GiB.
	MemoryMiB uint64 `json:"memoryMiB"`
	MemoryGiB uint64 `json:"memoryGiB"`
	// PCIVendorID and PCIDeviceID are lower-case 4-digit hex ("10de",
	// "20b0"), as NFD's pci.device feature and the catalog write them.
	PCIVendorID string `json:"pciVendorID"`
	PCIDeviceID string `json:"pciDeviceID"`
	// MIG is nil on GPUs that do not support MIG.
	MIG *MIG `json:"mig,omitempty"`
	// NVLink is nil on GPUs without NVLink.
	NVLink *NVLink `json:"nvlink,omitempty"`
}

// MIG mode values.
const (
	MIGEnabled  = "enabled"
	MIGDisabled = "disabled"
)

// MIG is a MIG-capable GPU's mode and layout.
type MIG struct {
	// Current is the mode in force, MIGEnabled or MIGDisabled.
	Current string `json:"current"`
	// Pending is the mode after the next GPU reset; it differs from
	// Current while a mode change waits for one.
	Pending string `json:"pending"`
	// Devices counts the MIG devices (compute instances) by profile name,
	// as the device plugin names them ("1g.5gb", "1c.3g.20gb",
	// "1g.10gb+me").
	Devices map[string]int `json:"devices,omitempty"`
}

// Enabled reports whether MIG is in force on the GPU.
func (m *MIG) Enabled() bool { return m != nil && m.Current == MIGEnabled }

// NVLink is where a GPU's NVLinks lead.
type NVLink struct {
	// ActiveLinks counts the links that are up.
	ActiveLinks int `json:"activeLinks"`
	// Peers are the local GPUs at the far end of direct links, by index.
	Peers []Peer `json:"peers,omitempty"`
	// SwitchLinks counts links to an NVSwitch, through which the GPU
	// reaches every GPU on the switch fabric.
	SwitchLinks int `json:"switchLinks,omitempty"`
	// OtherLinks counts active links that lead neither to another local
	// GPU nor to an NVSwitch (a CPU, a loopback, a GPU NVML does not list).
	OtherLinks int `json:"otherLinks,omitempty"`
}

// Peer is a local GPU that a GPU has direct NVLinks to.
type Peer struct {
	GPU   int `json:"gpu"`
	Links int `json:"links"`
}

// Format is a way to write a report.
type Format string

// Output formats.
const (
	// FormatReport is the report with its Node object under "nodeObject".
	FormatReport Format = "report"
	// FormatNode is the Node object alone, a snapshot that
	// `accelc inventory show --inventory` and `render --inventory` read.
	FormatNode Format = "node"
)

// Formats lists the output formats, for flag help and validation.
var Formats = []string{string(FormatReport), string(FormatNode)}

// document is the report as FormatReport writes it.
type document struct {
	*Report
	NodeObject *Node `json:"nodeObject"`
}

// Write writes the report as indented JSON in format f.
func (r *Report) Write(w io.Writer, f Format) error {
	var v any
	switch f {
	case FormatReport:
		v = document{Report: r, NodeObject: r.NodeObject()}
	case FormatNode:
		v = r.NodeObject()
	default:
		return fmt.Errorf("unknown report format %q: choose one of %s", f, strings.Join(Formats, ", "))
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
