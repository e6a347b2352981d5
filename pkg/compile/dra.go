package compile

// Dynamic Resource Allocation: the DeviceClasses accelc writes for each
// type and MIG profile, the drivers and selectors behind them, and sample
// devices for tests.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/pkg/catalog"
)

// draDriver is what a vendor's DRA driver publishes: its name (the
// domain of its attributes), the type attribute of a whole device and of a
// MIG slice, and the label whose values are its productName attribute.
type draDriver struct {
	name, wholeType, migType string
	// productLabel is the node label whose values (in the catalog's
	// identifiedBy) name the product as the driver does; normalize turns
	// either into one form.
	productLabel string
	normalize    string // CEL applied to productName
}

// draDrivers by catalog vendor. NVIDIA's (sigs.k8s.io/dra-driver-nvidia-gpu
// v0.4.0): type "gpu" or "mig", productName NVML's name ("NVIDIA
// A100-SXM4-80GB"), which GPU Feature Discovery writes with dashes for
// spaces; profile the MIG profile. AMD's (ROCm/k8s-gpu-dra-driver): type
// "amdgpu", productName as the ROCm labeller's product-name.
var draDrivers = map[string]draDriver{
	"nvidia": {name: "gpu.nvidia.com", wholeType: "gpu", migType: "mig",
		productLabel: "nvidia.com/gpu.product", normalize: ".lowerAscii().replace(' ', '-')"},
	"amd": {name: "gpu.amd.com", wholeType: "amdgpu",
		productLabel: "amd.com/gpu.product-name", normalize: ".lowerAscii()"},
}

// DRADriver is the DRA driver that publishes the class's devices, "" when
// accelc knows none for its vendor.
func DRADriver(c *catalog.Class) string { return draDrivers[c.Vendor].name }

// DeviceClass is a resource.k8s.io/v1 DeviceClass accelc renders.
type DeviceClass struct {
	Name        string
	Description string
	// Selector is the CEL expression a device must satisfy.
	Selector string
	// Class is the catalog class it selects; nil for an admin's
	// attribute class. MIG is the slice it selects, "" for whole devices.
	Class *catalog.Class
	MIG   string
	// Source is the CUE path the class comes from.
	Source []string
}

// DeviceClassName is the DeviceClass of a catalog class's devices (the
// class id, so that it names the same device in DRA as the type label),
// or of one MIG slice of them.
func DeviceClassName(id, mig string) string {
	if mig == "" {
		return id
	}
	return id + "-mig-" + mig
}

// products are the class's product names as the driver publishes them,
// normalized (lower case; NVIDIA's spaces as dashes), sorted.
func (d draDriver) products(c *catalog.Class) []string {
	seen := map[string]bool{}
	for _, v := range c.IdentifiedBy[d.productLabel] {
		v = strings.ToLower(v)
		// GFD's MIG-single and shared products are not a driver's names.
		if strings.Contains(v, "-mig-") || strings.HasSuffix(v, "-shared") {
			continue
		}
		seen[v] = true
	}
	return slices.Sorted(maps.Keys(seen))
}

// typeSelector is the CEL selector of the class's devices (a MIG slice of
// them when mig is set); ok is false when accelc knows no DRA driver for
// the class, or none that publishes MIG slices.
func typeSelector(c *catalog.Class, mig string) (string, bool) {
	d, ok := draDrivers[c.Vendor]
	if !ok || (mig != "" && d.migType == "") {
		return "", false
	}
	products := d.products(c)
	if len(products) == 0 {
		return "", false
	}
	attr := "device.attributes['" + d.name + "']"
	typ := d.wholeType
	if mig != "" {
		typ = d.migType
	}
	quoted := make([]string, len(products))
	for i, p := range products {
		quoted[i] = "'" + p + "'"
	}
	sel := fmt.Sprintf("device.driver == '%s' && %s.type == '%s'", d.name, attr, typ)
	if mig != "" {
		sel += fmt.Sprintf(" && %s.profile == '%s'", attr, mig)
	}
	return sel + fmt.Sprintf(" && %s.productName%s in [%s]", attr, d.normalize, strings.Join(quoted, ", ")), true
}

// DeviceClasses are the DeviceClasses the cluster renders: one per
// accelerator class a team or profile names whose vendor has a DRA driver
// accelc knows, one per MIG slice a DRA profile hands out, and the
// admins' attribute classes. Nil when the cluster declares no DRA.
func (m *Model) DeviceClasses() []DeviceClass {
	if m.Cluster.DRA == nil {
		return nil
	}
	ids := map[string]bool{}
	for i := range m.Teams {
		for _, id := range m.Teams[i].AcceleratorTypes {
			ids[id] = true
		}
	}
	slicesOf := map[string]map[string]bool{}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		for _, id := range p.AcceleratorTypes {
			ids[id] = true
			if p.DRA != nil && p.MIG != "" {
				if slicesOf[id] == nil {
					slicesOf[id] = map[string]bool{}
				}
				slicesOf[id][p.MIG] = true
			}
		}
	}
	var out []DeviceClass
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		c, ok := m.Catalog.Get(id)
		if !ok {
			continue
		}
		if sel, ok := typeSelector(c, ""); ok {
			out = append(out, DeviceClass{Name: DeviceClassName(id, ""), Description: c.DisplayName, Selector: sel, Class: c, Source: []string{"accelerators", id}})
		}
		for _, mig := range slices.Sorted(maps.Keys(slicesOf[id])) {
			if sel, ok := typeSelector(c, mig); ok {
				out = append(out, DeviceClass{Name: DeviceClassName(id, mig), Description: c.DisplayName + " " + mig + " MIG slice", Selector: sel, Class: c, MIG: mig, Source: []string{"accelerators", id}})
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.Cluster.DRA.Classes)) {
		ac := m.Cluster.DRA.Classes[name]
		out = append(out, DeviceClass{Name: name, Description: ac.Description, Selector: ac.Selector, Source: []string{"cluster", "dra", "classes", name}})
	}
	return out
}

// TeamDeviceClasses are the DeviceClasses a team's claims may name, each
// with the most devices one claim request may ask for: the classes of the
// DRA profiles the team may use (their types', slices' or attribute
// class), each at the largest maximum (else default) count of those
// profiles. Nil without DRA profiles the team may use: it claims nothing.
func (m *Model) TeamDeviceClasses(t *Team) map[string]int {
	if m.Cluster.DRA == nil {
		return nil
	}
	var out map[string]int
	for i := range m.Profiles {
		p := &m.Profiles[i]
		if p.DRA == nil || !p.Enabled || !t.MayUse(p) {
			continue
		}
		most := max(p.GPU.Default, 1)
		if p.GPU.Max != nil {
			most = max(*p.GPU.Max, 1)
		}
		for _, c := range m.ProfileDeviceClasses(p) {
			if out == nil {
				out = map[string]int{}
			}
			out[c] = max(out[c], most)
		}
	}
	return out
}

// ProfileDeviceClasses are the DeviceClasses a DRA profile's claims ask
// for, in the profile's order: its attribute class, its MIG slice's, or
// its types'. Nil for a profile that hands out an extended resource.
func (m *Model) ProfileDeviceClasses(p *Profile) []string {
	switch {
	case p.DRA == nil:
		return nil
	case p.DRA.DeviceClass != "":
		return []string{p.DRA.DeviceClass}
	}
	var out []string
	for _, id := range p.AcceleratorTypes {
		out = append(out, DeviceClassName(id, p.MIG))
	}
	return out
}

// DRADevice is a device as a DRA driver publishes it in a ResourceSlice:
// what a DeviceClass selector is evaluated against.
type DRADevice struct {
	Driver     string                                                    `json:"driver"`
	Attributes map[resourceapi.QualifiedName]resourceapi.DeviceAttribute `json:"attributes"`
	Capacity   map[resourceapi.QualifiedName]resourceapi.DeviceCapacity  `json:"capacity"`
}

// SampleDevice is a device of the class as its vendor's DRA driver
// publishes it (a MIG slice of it when mig is set): the attributes and
// capacity selectors are written against. ok is false when accelc knows
// no DRA driver for the class.
func SampleDevice(c *catalog.Class, mig string) (DRADevice, bool) {
	d, ok := draDrivers[c.Vendor]
	if !ok {
		return DRADevice{}, false
	}
	products := c.IdentifiedBy[d.productLabel]
	if len(products) == 0 {
		return DRADevice{}, false
	}
	product := products[0]
	typ := d.wholeType
	memGB := c.MemoryGB
	attrs := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
		"architecture": {StringValue: &c.Architecture},
	}
	if c.Vendor == "nvidia" {
		// NVML's name: GFD's with spaces.
		product = strings.ReplaceAll(product, "-", " ")
		if v := semver(c.ComputeCapability); v != "" {
			attrs["cudaComputeCapability"] = resourceapi.DeviceAttribute{VersionValue: &v}
		}
		brand := "Nvidia"
		attrs["brand"] = resourceapi.DeviceAttribute{StringValue: &brand}
	}
	if mig != "" {
		typ = d.migType
		attrs["profile"] = resourceapi.DeviceAttribute{StringValue: &mig}
		if gb := migMemoryGB(mig); gb > 0 {
			memGB = gb
		}
	}
	attrs["type"] = resourceapi.DeviceAttribute{StringValue: &typ}
	attrs["productName"] = resourceapi.DeviceAttribute{StringValue: &product}
	return DRADevice{
		Driver:     d.name,
		Attributes: attrs,
		Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{
			"memory": {Value: *resource.NewQuantity(int64(memGB)<<30, resource.BinarySI)},
		},
	}, true
}

// semver is a compute capability ("8.0") as the driver's version
// attribute ("8.0.0").
func semver(cc string) string {
	if cc == "" {
		return ""
	}
	if strings.Count(cc, ".") == 1 {
		return cc + ".0"
	}
	return cc
}

// migMemoryGB is the memory in a MIG profile's name ("3g.40gb": 40).
func migMemoryGB(profile string) int {
	_, mem, ok := strings.Cut(profile, ".")
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSuffix(mem, "+me"), "gb"))
	return n
}

// SampleDevices are a device of each catalog class whose vendor has a
// DRA driver accelc knows, by class id: what vet evaluates the admins'
// attribute classes on.
func SampleDevices(cat *catalog.Catalog) map[string]DRADevice {
	out := map[string]DRADevice{}
	for _, c := range cat.Classes() {
		if dev, ok := SampleDevice(c, ""); ok {
			out[c.ID] = dev
		}
	}
	return out
}

// SelectorOutcome is what Kubernetes' DRA CEL environment made of a
// selector: why it does not compile, or the catalog classes whose devices
// it selects and the first error evaluating it met.
type SelectorOutcome struct {
	Error     string   `json:"error,omitempty"`
	Matches   []string `json:"matches,omitempty"`
	EvalError string   `json:"evalError,omitempty"`
}

// AttributeSelectors are the selectors of the admins' attribute classes
// to check in Kubernetes' DRA CEL environment (package dra, run by
// accelc-policytest, holds it: its start-up stays out of accelc), by
// class name; nil when there are none.
func (m *Model) AttributeSelectors() map[string]string {
	if m.Cluster.DRA == nil || len(m.Cluster.DRA.Classes) == 0 {
		return nil
	}
	out := map[string]string{}
	for name, ac := range m.Cluster.DRA.Classes {
		if _, ok := m.Catalog.Get(name); !ok {
			out[name] = ac.Selector
		}
	}
	return out
}

// named reports whether a team or profile of the cluster names the type.
func (m *Model) named(id string) bool {
	for i := range m.Teams {
		if slices.Contains(m.Teams[i].AcceleratorTypes, id) {
			return true
		}
	}
	for i := range m.Profiles {
		if slices.Contains(m.Profiles[i].AcceleratorTypes, id) {
			return true
		}
	}
	return false
}

// SelectorDiagnostics are the errors, at each attribute class's selector,
// of what the DRA CEL environment made of them: one that does not compile
// (the API server would refuse the DeviceClass), or selects no device of
// any catalog class (it would hand out nothing).
func (m *Model) SelectorDiagnostics(outcomes map[string]SelectorOutcome) []Diagnostic {
	var out []Diagnostic
	at := m.root().Key("cluster").Key("dra").Key("classes")
	for _, name := range slices.Sorted(maps.Keys(outcomes)) {
		o := outcomes[name]
		where := at.Key(name).Key("selector")
		switch {
		case o.Error != "":
			out = append(out, Diagnostic{Path: where, Msg: "the selector does not compile in Kubernetes' DRA CEL environment, so the API server would refuse the DeviceClass: " + o.Error})
		case len(o.Matches) > 0:
			// A team whose profile hands out the class may reach every
			// type it selects: each must be one the team may use.
			for i := range m.Teams {
				t := &m.Teams[i]
				for j := range m.Profiles {
					p := &m.Profiles[j]
					if p.DRA == nil || p.DRA.DeviceClass != name || !p.Enabled || !t.MayUse(p) {
						continue
					}
					var outside []string
					for _, id := range o.Matches {
						if m.named(id) && !slices.Contains(t.AcceleratorTypes, id) {
							outside = append(outside, id)
						}
					}
					if len(outside) > 0 {
						out = append(out, Diagnostic{Path: where, Msg: fmt.Sprintf(
							"team %s may use profile %s, whose class %s also selects %s, which the team may not use: narrow the selector, or entitle the team", t.Name, p.Name, name, strings.Join(outside, ", "))})
					}
				}
			}
		case len(o.Matches) == 0:
			msg := "the selector matches no device of any catalog class (as NVIDIA's gpu.nvidia.com and AMD's gpu.amd.com DRA drivers publish them: type, productName, architecture, cudaComputeCapability, capacity memory), so the class hands out nothing"
			if o.EvalError != "" {
				msg += "; evaluating it failed " + o.EvalError + " (guard an attribute a driver may not publish with `'name' in device.attributes['driver']`)"
			}
			out = append(out, Diagnostic{Path: where, Msg: msg})
		}
	}
	return out
}

// checkDRA checks the admins' attribute classes' names and the DRA
// profiles (the cluster declares DRA; their classes exist; their types
// have a DRA driver accelc knows). The selectors themselves are checked
// in Kubernetes' DRA CEL environment (AttributeSelectors).
func checkDRA(m *Model) []Diagnostic {
	var out []Diagnostic
	classes := map[string]bool{}
	if m.Cluster.DRA != nil {
		at := m.root().Key("cluster").Key("dra").Key("classes")
		for _, name := range slices.Sorted(maps.Keys(m.Cluster.DRA.Classes)) {
			classes[name] = true
			where := at.Key(name)
			if _, ok := m.Catalog.Get(name); ok {
				out = append(out, Diagnostic{Path: where, Msg: fmt.Sprintf(
					"%s is an accelerator type: its DeviceClass is the catalog's; name the attribute class otherwise", name)})
				continue
			}
		}
	}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		if p.DRA == nil {
			continue
		}
		at := p.path.Key("dra")
		switch {
		case m.Cluster.DRA == nil:
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"profile %s hands out devices through Dynamic Resource Allocation, but the cluster declares none: add cluster.dra (and its attribute classes, if any)", p.Name)})
		case p.DRA.DeviceClass != "" && !classes[p.DRA.DeviceClass]:
			msg := fmt.Sprintf("no attribute class %q in cluster.dra.classes", p.DRA.DeviceClass)
			if close := catalog.Closest(p.DRA.DeviceClass, slices.Sorted(maps.Keys(classes)), 3); len(close) > 0 {
				msg += "; did you mean " + strings.Join(close, ", ") + "?"
			}
			out = append(out, Diagnostic{Path: at.Key("deviceClass"), Msg: msg + " (classes: " + orNone(slices.Sorted(maps.Keys(classes))) + ")"})
		case len(p.Pools) > 0 && p.MIG == "":
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"profile %s shares GPUs through pool %s, which the device plugin's time-slicing or MPS hands out as replicas; DRA claims get whole devices or MIG slices: drop dra, or the pool", p.Name, p.Pool)})
		case p.DRA.DeviceClass == "" && p.Generic():
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"profile %s names no accelerator type, so its claims would have no DeviceClass: give it acceleratorTypes, or dra.deviceClass", p.Name)})
		case p.DRA.DeviceClass == "":
			for _, c := range p.Classes {
				if _, ok := typeSelector(c, p.MIG); !ok {
					what := "devices"
					if p.MIG != "" {
						what = p.MIG + " MIG slices"
					}
					out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
						"accelc knows no DRA driver that publishes %s's %s (vendor %s; it knows NVIDIA's gpu.nvidia.com and AMD's gpu.amd.com): hand it out by extended resource, or use dra.deviceClass", c.ID, what, c.Vendor)})
				}
			}
		}
	}
	return out
}
