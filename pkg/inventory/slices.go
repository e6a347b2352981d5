package inventory

// ResourceSlices as accelc reads them (resource.k8s.io): the fields it
// keeps, which drivers it reads, what is redacted from a snapshot, and
// the order a snapshot keeps them in.

import (
	"cmp"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
)

// This file reads Dynamic Resource Allocation's ResourceSlices
// (resource.k8s.io/v1): what a DRA driver publishes of each device of a
// node, attribute by attribute. That is the most precise source there is:
// a device's own product name or PCI device id, where node labels say
// what a node's devices are as a whole. A node whose slices publish GPUs
// is classified device by device (a node with two models is two groups of
// devices, not "mixed"), and its slices win over its labels for the device
// types.
//
// The attribute shapes are those of the drivers' own sources and reports:
// NVIDIA's (sigs.k8s.io/dra-driver-nvidia-gpu v0.4.0,
// cmd/gpu-kubelet-plugin/deviceinfo.go and mig.go; the attributes its
// tests/bats/test_gpu_basic.bats and test_gpu_mig.bats expect; the slices
// of its issue #719) and AMD's (ROCm/k8s-gpu-dra-driver: the slices of its
// pull request #21, in resource.k8s.io/v1beta1's "basic" form, and the
// attributes of pull request #35).

// The DRA drivers whose devices accelc classifies. A snapshot keeps no
// other driver's slices: a network driver's devices are not accelerators,
// and their attributes are addresses.
const (
	DriverNVIDIA = "gpu.nvidia.com"
	DriverAMD    = "gpu.amd.com"
)

// IsAcceleratorDriver reports whether accelc reads a DRA driver's slices.
func IsAcceleratorDriver(driver string) bool {
	return driver == DriverNVIDIA || driver == DriverAMD
}

// ResourceSliceAPIVersion is the API version accelc reads and writes
// ResourceSlices in.
const ResourceSliceAPIVersion = "resource.k8s.io/v1"

// ResourceSlice is what accelc keeps of a ResourceSlice: its driver, pool
// and node, and of each device its name, attributes, capacity and the
// counter sets it consumes from. Identifying values (UUIDs, PCI addresses,
// serial numbers) are dropped before a snapshot holds it: see Redact.
type ResourceSlice struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec SliceSpec `json:"spec"`
}

// SliceSpec is a ResourceSlice's spec.
type SliceSpec struct {
	Driver string `json:"driver"`
	Pool   Pool   `json:"pool"`
	// NodeName is the node whose devices the slice publishes; a slice of
	// network-attached devices has none (but a node selector, allNodes
	// or per-device nodes), and accelc does not count its devices.
	NodeName               string    `json:"nodeName,omitempty"`
	NodeSelector           *struct{} `json:"nodeSelector,omitempty"`
	AllNodes               bool      `json:"allNodes,omitempty"`
	PerDeviceNodeSelection bool      `json:"perDeviceNodeSelection,omitempty"`
	Devices                []Device  `json:"devices,omitempty"`
}

// Pool is a driver's pool of devices. Its slices of the highest
// generation are current; a pool has ResourceSliceCount of them when
// complete.
type Pool struct {
	Name               string `json:"name"`
	Generation         int64  `json:"generation"`
	ResourceSliceCount int64  `json:"resourceSliceCount"`
}

// Device is one device of a slice.
type Device struct {
	Name       string               `json:"name"`
	Attributes map[string]Attribute `json:"attributes,omitempty"`
	Capacity   map[string]Capacity  `json:"capacity,omitempty"`
	// ConsumesCounters names the counter sets a device draws on: for
	// NVIDIA's MIG devices, a MIG device the driver creates when a claim
	// asks for it (dynamic MIG), which is not one yet.
	ConsumesCounters []CounterConsumption `json:"consumesCounters,omitempty"`
	// Basic is a resource.k8s.io/v1beta1 device's content; reading moves
	// it to the fields above.
	Basic *BasicDevice `json:"basic,omitempty"`
}

// BasicDevice is the "basic" wrapper resource.k8s.io/v1beta1 devices have.
type BasicDevice struct {
	Attributes       map[string]Attribute `json:"attributes,omitempty"`
	Capacity         map[string]Capacity  `json:"capacity,omitempty"`
	ConsumesCounters []CounterConsumption `json:"consumesCounters,omitempty"`
}

// Attribute is a device attribute: one of its values is set.
type Attribute struct {
	Int      *int64   `json:"int,omitempty"`
	Bool     *bool    `json:"bool,omitempty"`
	String   *string  `json:"string,omitempty"`
	Version  *string  `json:"version,omitempty"`
	Ints     []int64  `json:"ints,omitempty"`
	Bools    []bool   `json:"bools,omitempty"`
	Strings  []string `json:"strings,omitempty"`
	Versions []string `json:"versions,omitempty"`
}

// Capacity is a device's capacity of one kind: a quantity.
type Capacity struct {
	Value string `json:"value"`
}

// CounterConsumption names a counter set a device consumes from; what it
// consumes is not kept.
type CounterConsumption struct {
	CounterSet string `json:"counterSet"`
}

// normalize moves a v1beta1 device's content out of "basic".
func (d *Device) normalize() {
	if b := d.Basic; b != nil {
		if d.Attributes == nil {
			d.Attributes = b.Attributes
		}
		if d.Capacity == nil {
			d.Capacity = b.Capacity
		}
		if d.ConsumesCounters == nil {
			d.ConsumesCounters = b.ConsumesCounters
		}
		d.Basic = nil
	}
}

// str is a string attribute's value (or a version's), "" when absent.
func (d *Device) str(name string) string {
	a, ok := d.Attributes[name]
	switch {
	case !ok:
		return ""
	case a.String != nil:
		return strings.TrimSpace(*a.String)
	case a.Version != nil:
		return strings.TrimSpace(*a.Version)
	}
	return ""
}

// memoryBytes is the device's memory capacity in bytes; 0 when it has
// none or publishes 0 (AMD's driver, when it could not read it).
func (d *Device) memoryBytes() int64 {
	c, ok := d.Capacity["memory"]
	if !ok {
		return 0
	}
	q, err := resource.ParseQuantity(c.Value)
	if err != nil || q.Sign() <= 0 {
		return 0
	}
	return q.Value()
}

// Identifying values: a snapshot is committed to Git and must not carry a
// device's serial number or address.
var (
	// identifyingNames are attribute names (without their domain,
	// lower-case) whose value identifies one device or where it sits:
	// NVIDIA's uuid, parentUUID and older pcieBusID; the standard
	// resource.kubernetes.io/pciBusID and pcieRoot; AMD's pciAddr,
	// parentPciAddr, parentDeviceID and iommuGroup.
	identifyingNames = map[string]bool{
		"uuid": true, "parentuuid": true, "pcibusid": true, "pciebusid": true, "pcieroot": true,
		"pciaddr": true, "parentpciaddr": true, "pciaddress": true, "parentdeviceid": true,
		"iommugroup": true, "serial": true, "serialnumber": true, "macaddress": true, "mac": true,
	}
	// identifyingValue matches values that identify a device whatever
	// the attribute is called: a UUID (GPU-…, MIG-… or bare), a PCI
	// address ("0000:3b:00.0", AMD's "0003:00:04:0"), a PCIe root
	// ("pci0000:5a"), a MAC address, or a long decimal id (AMD's KFD
	// unique id).
	identifyingValue = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)` +
			`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}` +
			`|[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}[.:][0-7]` +
			`|[0-9a-f]{4}-[0-9a-f]{2}-[0-9a-f]{2}-[0-7]` +
			`|\bpci[0-9a-f]{4}:[0-9a-f]{2}\b` +
			`|\b([0-9a-f]{2}:){5}[0-9a-f]{2}\b` +
			`|^[0-9]{12,}$`)
	})
	// pciDeviceID is a PCI device id as drivers write it: "74a1", "0x740f".
	pciDeviceID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?i)(0x)?([0-9a-f]{4})$`) })
)

// identifying reports whether an attribute must not reach a snapshot.
func identifying(name string, a Attribute) bool {
	local := strings.ToLower(name[strings.LastIndex(name, "/")+1:])
	if identifyingNames[local] || strings.Contains(local, "uuid") || strings.Contains(local, "serial") {
		return true
	}
	if local == "deviceid" && a.String != nil && !pciDeviceID().MatchString(strings.TrimSpace(*a.String)) {
		// AMD's deviceID was the GPU's KFD id or address before it was
		// the PCI device id (ROCm/k8s-gpu-dra-driver#21, #35).
		return true
	}
	for _, v := range slices.Concat(a.Strings, a.Versions) {
		if looksIdentifying(v) {
			return true
		}
	}
	for _, p := range []*string{a.String, a.Version} {
		if p != nil && looksIdentifying(*p) {
			return true
		}
	}
	return false
}

// looksIdentifying reports whether identifyingValue matches v. Every form
// it matches holds a ':' or a '-', or is twelve digits or more: most
// values (product names, versions, types) need no regular expression.
func looksIdentifying(v string) bool {
	if !strings.ContainsAny(v, ":-") && (len(v) < 12 || strings.Trim(v, "0123456789") != "") {
		return false
	}
	return identifyingValue().MatchString(v)
}

// Redact drops what identifies a device: attributes such as uuid,
// parentUUID, resource.kubernetes.io/pciBusID and pcieRoot, any attribute
// whose value is a UUID, PCI address or serial-like id, and counter sets
// named after one. A device named after one is renamed by its position.
// It reports how many values it dropped.
func (s *ResourceSlice) Redact() int {
	dropped := 0
	for i := range s.Spec.Devices {
		d := &s.Spec.Devices[i]
		d.normalize()
		for name, a := range d.Attributes {
			if identifying(name, a) {
				delete(d.Attributes, name)
				dropped++
			}
		}
		if looksIdentifying(d.Name) {
			d.Name = "device-" + strconv.Itoa(i)
			dropped++
		}
		d.ConsumesCounters = slices.DeleteFunc(d.ConsumesCounters, func(c CounterConsumption) bool {
			if looksIdentifying(c.CounterSet) {
				dropped++
				return true
			}
			return false
		})
		if len(d.ConsumesCounters) == 0 {
			d.ConsumesCounters = nil
		}
	}
	return dropped
}

// keepSlices keeps the slices of accelerator drivers, redacted, in a
// fixed order (node, driver, pool, generation, name). It redacts in place
// what in holds unless clone is set.
func keepSlices(in []ResourceSlice, clone bool) []ResourceSlice {
	var out []ResourceSlice
	for _, s := range in {
		if !IsAcceleratorDriver(s.Spec.Driver) {
			continue
		}
		s.APIVersion, s.Kind = ResourceSliceAPIVersion, "ResourceSlice"
		if clone {
			s.Spec.Devices = slices.Clone(s.Spec.Devices)
			for i := range s.Spec.Devices {
				d := &s.Spec.Devices[i]
				d.Attributes, d.Capacity = maps.Clone(d.Attributes), maps.Clone(d.Capacity)
				d.ConsumesCounters = slices.Clone(d.ConsumesCounters)
			}
		}
		s.Redact()
		out = append(out, s)
	}
	sortSlices(out)
	return out
}

func sortSlices(s []ResourceSlice) {
	slices.SortStableFunc(s, func(a, b ResourceSlice) int {
		return cmp.Or(strings.Compare(a.Spec.NodeName, b.Spec.NodeName), strings.Compare(a.Spec.Driver, b.Spec.Driver),
			strings.Compare(a.Spec.Pool.Name, b.Spec.Pool.Name), cmp.Compare(a.Spec.Pool.Generation, b.Spec.Pool.Generation),
			strings.Compare(a.Metadata.Name, b.Metadata.Name))
	})
}

// AcceleratorSlices keeps, of the slices a cluster lists, those of the
// accelerator drivers accelc reads, redacted (see Redact) and in a fixed
// order: what a snapshot holds. It redacts the slices of all in place.
func AcceleratorSlices(all []ResourceSlice) []ResourceSlice { return keepSlices(all, false) }
