package compile

// Extended resources: which the cluster declares not accelerators, which
// resource each class is requested by, and their checks.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/accelc/accelc/pkg/inventory"
)

// NonAccelerator reports whether cluster.nonAcceleratorResources declares
// the extended resource not an accelerator: an exact name, or a prefix
// ending in / or - that it starts with.
func (c *Cluster) NonAccelerator(name string) bool {
	for _, p := range c.NonAcceleratorResources {
		if name == p || (strings.HasSuffix(p, "/") || strings.HasSuffix(p, "-")) && strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// ClassResource is the accelerator class whose resource the extended
// resource is (or starts with, as the policies match it), or "".
func (m *Model) ClassResource(name string) string {
	for _, c := range m.Catalog.Classes() {
		if c.ResourceName != "" && strings.HasPrefix(name, c.ResourceName) {
			return c.ID
		}
	}
	return ""
}

// checkNonAcceleratorResources refuses the entries of
// cluster.nonAcceleratorResources that cannot mean what they say: a name
// or prefix under a GPU vendor's domain, or under a catalog class's
// resource, is an accelerator to the policies whatever the list says; a
// glob is matched
// by no resource. A prefix wider than a vendor's or a class's resource
// (google.com/, beside google.com/tpu) declares the rest of its domain.
func checkNonAcceleratorResources(m *Model) []Diagnostic {
	var out []Diagnostic
	at := m.root().Key("cluster").Key("nonAcceleratorResources")
	for i, p := range m.Cluster.NonAcceleratorResources {
		var msg string
		switch {
		case p == "" || strings.Contains(p, "*"):
			msg = fmt.Sprintf("%q is neither a resource's name nor a prefix: write an exact name (example.com/fuse) or a prefix ending in / or - (example.com/)", p)
		case inventory.VendorResource(p):
			msg = fmt.Sprintf("%s is under a GPU or accelerator vendor's domain, whose every resource accelc's policies hold as an accelerator: declaring it not one changes nothing. Drop it", p)
		default:
			if id := m.ClassResource(p); id != "" {
				msg = fmt.Sprintf("%s is the resource of accelerator class %s, which accelc's policies hold as an accelerator: declaring it not one changes nothing. Drop it", p, id)
			}
		}
		if msg != "" {
			out = append(out, Diagnostic{Path: at.Index(i), Msg: msg})
		}
	}
	return out
}

// checkExcludedAbsentOK refuses an acknowledgement of an excluded
// namespace the cluster lacks that names no exact entry of
// excludedNamespaces.
func checkExcludedAbsentOK(c *Cluster, cluster Path) []Diagnostic {
	var out []Diagnostic
	for i, ns := range c.ExcludedNamespacesAbsentOK {
		if !slices.Contains(c.ExcludedNamespaces, ns) {
			out = append(out, Diagnostic{Path: cluster.Key("excludedNamespacesAbsentOK").Index(i), Msg: fmt.Sprintf(
				"%s is not one of cluster.excludedNamespaces: list here only the excluded names the cluster may lack", ns)})
		}
	}
	return out
}
