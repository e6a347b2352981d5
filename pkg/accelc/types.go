package accelc

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/accelc/accelc/pkg/catalog"
)

// TypeInfo is one built-in accelerator class as `accelc types` lists it:
// what it is and how accelc recognises a node that has it.
type TypeInfo struct {
	ID          string `json:"id"`
	DisplayName string `json:"displayName"`
	Vendor      string `json:"vendor"`
	Model       string `json:"model"`
	// Family is the architecture (Hopper, CDNA 3, Trillium…).
	Family   string `json:"family"`
	MemoryGB int    `json:"memoryGB"`
	// Resource is the extended resource its device plugin offers.
	Resource string `json:"resource"`
	// Labels are the node labels, and their values, that name the class.
	Labels []TypeLabel `json:"labels"`
	// Resources are the extended resources whose name alone names the
	// class (catalog.ByResource).
	Resources []string `json:"resources,omitempty"`
	// PCI is the vendor:device ids Node Feature Discovery reports, which
	// the rendered NodeFeatureRule matches ("10de:1e30 subsystem
	// 10de:129e" for a board told by its subsystem); NoPCI says why there
	// are no ids of the device alone.
	PCI   []string `json:"pci,omitempty"`
	NoPCI string   `json:"noPCI,omitempty"`
}

// TypeLabel is one label key and the values of it that name a class.
type TypeLabel struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// Types lists the built-in accelerator classes, by id, of the vendors
// given (all when none).
func Types(vendors ...string) ([]TypeInfo, error) {
	cat, err := catalog.Builtin()
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, c := range cat.Classes() {
		known[c.Vendor] = true
	}
	for _, v := range vendors {
		if !known[v] {
			return nil, usage(fmt.Errorf("--vendor %s: choose among %s", v, strings.Join(slices.Sorted(maps.Keys(known)), ", ")))
		}
	}
	var out []TypeInfo
	for _, c := range cat.Classes() {
		if len(vendors) > 0 && !slices.Contains(vendors, c.Vendor) {
			continue
		}
		t := TypeInfo{
			ID: c.ID, DisplayName: c.DisplayName, Vendor: c.Vendor, Model: c.Model,
			Family: c.Architecture, MemoryGB: c.MemoryGB, Resource: c.ResourceName, NoPCI: c.NoPCIDeviceIDs,
		}
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range c.IdentifiedBy {
				if !yield(k) {
					return
				}
			}
		}) {
			t.Labels = append(t.Labels, TypeLabel{Key: k, Values: slices.Clone(c.IdentifiedBy[k])})
		}
		t.Resources = namingResources(cat, c)
		for _, id := range c.PCIDeviceIDs {
			t.PCI = append(t.PCI, c.PCIVendor()+":"+strings.ToLower(id))
		}
		for _, b := range c.PCISubsystems {
			// A board of a device id another model shares: its subsystem.
			t.PCI = append(t.PCI, c.PCIVendor()+":"+b.Device+" subsystem "+b.SubsystemVendor+":"+b.SubsystemDevice)
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// namingResources are the resources whose name alone names the class:
// its resourceNames, and its resourceName when no other class has it.
func namingResources(cat *catalog.Catalog, c *catalog.Class) []string {
	var out []string
	for _, r := range append([]string{c.ResourceName}, c.ResourceNames...) {
		if got, ok := cat.ByResource(r); ok && got.ID == c.ID && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}
