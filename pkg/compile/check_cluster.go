package compile

// Checking the cluster's own settings against the inventory: resources
// nodes advertise that the cluster does not declare, and exclusions that
// name nothing.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/accelc/accelc/pkg/inventory"
)

// checkNodeResources refuses an extended resource some node advertises
// that accelc does not know to be an accelerator (a catalog class's
// resource, or under a GPU vendor's domain) and that
// cluster.nonAcceleratorResources does not declare harmless. The policies
// hold it as an accelerator all the same (render passes every such
// resource to them), but whether it is one is the admins' to say: one
// error per resource, naming the nodes that advertise it.
func (m *Model) checkNodeResources(inv *inventory.Inventory) []Diagnostic {
	var out []Diagnostic
	at := m.root().Key("cluster").Key("nonAcceleratorResources")
	for _, name := range slices.Sorted(maps.Keys(inv.Resources)) {
		if inventory.VendorResource(name) || m.ClassResource(name) != "" || m.Cluster.NonAccelerator(name) {
			continue
		}
		domain := name[:strings.Index(name, "/")+1]
		out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
			"%s %s, which accelc does not know: no accelerator class has it as its resource, and it is under no GPU vendor's domain. accelc's policies hold it as an accelerator (only a profile's pods may ask for it). If it is one, add a class with resourceName: %q to the catalog (accelerators in CUE); if it is not, declare it in cluster.nonAcceleratorResources (%q, or %q for its whole domain)",
			advertisedBy(inv.Resources[name]), name, name, name, domain)})
	}
	return out
}

// advertisedBy names the nodes that advertise a resource: "node a
// advertises", "nodes a, b, c, d, e and 3 more advertise".
func advertisedBy(nodes []string) string {
	if len(nodes) == 1 {
		return "node " + nodes[0] + " advertises"
	}
	shown := nodes
	if len(shown) > 5 {
		shown = append(shown[:5:5], fmt.Sprintf("%d more", len(nodes)-5))
	}
	return fmt.Sprintf("nodes %s and %s advertise", strings.Join(shown[:len(shown)-1], ", "), shown[len(shown)-1])
}

// checkExclusionsExist refuses, where the inventory lists the cluster's
// namespaces, an exact name of cluster.excludedNamespaces that none of
// them is: a user who may create namespaces could create it, and its pods
// would reach every accelerator ungoverned. It holds nothing against a
// cluster where only admins create namespaces (namespaceCreation
// "admins-only", whose globs are already the admins' word), nor against
// the names excludedNamespacesAbsentOK accepts. (Globs pass Load only
// under "admins-only".)
func (m *Model) checkExclusionsExist(inv *inventory.Inventory) []Diagnostic {
	have, known := inv.Source.KnownNamespaces()
	if !known || m.Cluster.NamespaceCreation == "admins-only" {
		return nil
	}
	var out []Diagnostic
	at := m.root().Key("cluster").Key("excludedNamespaces")
	for i, pattern := range m.Cluster.ExcludedNamespaces {
		if slices.Contains(m.Cluster.ExcludedNamespacesAbsentOK, pattern) || slices.ContainsFunc(have, func(ns string) bool {
			_, ok := MatchNamespace([]string{pattern}, ns)
			return ok
		}) {
			continue
		}
		out = append(out, Diagnostic{Path: at.Index(i), Msg: fmt.Sprintf(
			"the cluster has no namespace %s (the inventory lists its %d namespaces): a user who may create namespaces could create %s, and its pods would reach any accelerator ungoverned. Drop it if nothing of the cluster runs there; or create the namespace now; or, if only cluster admins can create namespaces, say so with cluster.namespaceCreation: \"admins-only\"; or, knowing that risk, accept it with cluster.excludedNamespacesAbsentOK: [%q]",
			pattern, len(have), pattern, pattern)})
	}
	return out
}
