package inventory

// A node's type and counts as its ResourceSlices say them, laid over what
// its labels said.

import (
	"fmt"
	"strings"

	"github.com/accelc/accelc/pkg/catalog"
)

// applyDRA lays what a node's ResourceSlices say over what its labels
// said: the device types (the slices win, and a note says what the labels
// said where they differ), the vendor, the GPU count and MIG devices. It
// returns the node's class: nil for devices of several classes (n.Types
// then counts them) or of no catalog class, where the labels' class, if
// any, stands.
func (n *Node) applyDRA(d *draNode, labelClass *catalog.Class) *catalog.Class {
	n.DRA = d.groups
	// A vGPU guest's devices are vGPUs whoever publishes them: a vGPU
	// type's ResourceSlice does not make it a whole GPU.
	wasVGPU := n.Sharing == VGPU
	n.Notes = nil // what the labels said of sharing and counts no longer holds
	n.Vendor = d.vendor
	n.Sharing, n.Replicas, n.MIGDevices, n.Types, n.Model = Exclusive, 0, nil, nil, ""
	if wasVGPU {
		n.Sharing = VGPU
		n.Notes = append(n.Notes, "vGPU guest (its labels name a vGPU type): the ResourceSlices' devices are vGPUs")
	}
	gpus := 0
	var known []*catalog.Class
	var parts []string
	for i := range d.groups {
		g := &d.groups[i]
		gpus += g.GPUs
		for p, c := range g.MIGDevices {
			if n.MIGDevices == nil {
				n.MIGDevices = map[string]int{}
			}
			n.MIGDevices[p] += c
		}
		if g.class != nil {
			known = append(known, g.class)
		}
		what := g.AcceleratorType
		if g.class == nil {
			what = g.Model
		}
		parts = append(parts, fmt.Sprintf("%d× %s (%s %s)", g.GPUs, what, g.Driver, g.why))
	}
	n.Count = gpus
	if len(n.MIGDevices) > 0 {
		// A claim names a MIG device's profile, as a pod names a MIG
		// resource under GFD's mixed strategy.
		n.Sharing = MIGMixed
	}
	var class *catalog.Class
	switch {
	case len(d.groups) > 1:
		n.Types = map[string]int{}
		for _, g := range d.groups {
			n.Types[g.AcceleratorType] += g.GPUs
		}
		n.Notes = append(n.Notes, "types from ResourceSlices: "+strings.Join(parts, ", "))
	case len(known) == 1:
		class = known[0]
		n.Notes = append(n.Notes, "type from ResourceSlices: "+parts[0])
	case labelClass != nil:
		class = labelClass
		n.Notes = append(n.Notes, fmt.Sprintf("type from the labels: the ResourceSlices name %s (%s)", d.groups[0].Model, d.groups[0].why))
	default:
		n.Model = d.groups[0].Model
		n.Notes = append(n.Notes, "ResourceSlices: "+parts[0])
	}
	if labelClass != nil && class != labelClass {
		n.Notes = append(n.Notes, fmt.Sprintf("labels say %s; the ResourceSlices win", labelClass.ID))
	}
	n.Notes = append(n.Notes, d.notes...)
	return class
}

// draAdvice says what to do about devices of no catalog class.
func draAdvice(driver, model string) string {
	if driver == DriverAMD {
		return "add the device's PCI id to a class's pciDeviceIDs, or its productName to the class's identifiedBy amd.com/gpu.product-name, or pin the type in cluster.nodes"
	}
	return fmt.Sprintf("add %s to a class's identifiedBy %s, or pin the type in cluster.nodes", strings.ReplaceAll(model, " ", "-"), catalog.LabelGFDProduct)
}
