package compile

// The cluster's own settings as loaded: the catalog service, live
// descriptions, names and excluded namespaces, with their checks.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// CatalogServiceBaseMiB is the memory accelc serve --live takes before
// it watches any node (about 48 MiB measured, the process and the CUE
// evaluation), with headroom: the least cluster.catalogService.memory may
// give it.
const CatalogServiceBaseMiB = 64

// checkCatalogService checks cluster.catalogService's memory: at least
// what the service takes before it watches a node.
func checkCatalogService(m *Model) []Diagnostic {
	cs := m.Cluster.CatalogService
	if cs == nil || cs.Memory == "" {
		return nil
	}
	at := m.root().Key("cluster").Key("catalogService").Key("memory")
	q, err := resource.ParseQuantity(cs.Memory)
	if err != nil {
		return []Diagnostic{{Path: at, Msg: fmt.Sprintf("%q is not a memory quantity (%v): write it as 512Mi or 2Gi", cs.Memory, err)}}
	}
	if q.Value() < CatalogServiceBaseMiB<<20 {
		return []Diagnostic{{Path: at, Msg: fmt.Sprintf(
			"%s is below the %dMi accelc serve takes before it watches any node, so it would be killed for memory: give it more, or leave memory out and render sizes it to the inventory (%dMi and 52Ki a node)",
			cs.Memory, CatalogServiceBaseMiB, CatalogServiceBaseMiB)}}
	}
	return nil
}

// MemoryLimit is the catalog service's memory limit (and request) when
// cluster.catalogService.memory sets one; Load has checked that it parses.
func (c *CatalogService) MemoryLimit() (resource.Quantity, bool) {
	if c.Memory == "" {
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(c.Memory)
	return q, err == nil
}

// LiveDescriptions says whether the catalog service keeps the
// HardwareProfiles' descriptions (cluster.catalogService.liveDescriptions),
// so that render leaves them out.
func (m *Model) LiveDescriptions() bool {
	return m.Cluster.CatalogService != nil && m.Cluster.CatalogService.LiveDescriptions
}

// checkNames checks the settings that become Kubernetes names (the label
// prefix, the ids of the types the cluster defines) and the cluster's
// excluded namespaces.
func (raw *rawConfig) checkNames(m *Model) []Diagnostic {
	root := m.root()
	diags := checkKubernetesNames(&raw.Cluster.Cluster, slices.Sorted(maps.Keys(raw.Accelerators)), root)
	diags = append(diags, checkExcludedNamespaces(&raw.Cluster.Cluster, root.Key("cluster"))...)
	return append(diags, checkExcludedAbsentOK(&raw.Cluster.Cluster, root.Key("cluster"))...)
}

// MatchNamespace reports the pattern that matches namespace ns, as
// Gatekeeper matches a constraint's or mutator's namespaces and
// excludedNamespaces: exact, a prefix (kube-*) or suffix (*-system) glob,
// or both (*gpu*: the name holds gpu).
func MatchNamespace(patterns []string, ns string) (string, bool) {
	for _, p := range patterns {
		lead, trail := strings.HasPrefix(p, "*"), strings.HasSuffix(p, "*")
		core := strings.TrimSuffix(strings.TrimPrefix(p, "*"), "*")
		switch {
		case lead && trail && strings.Contains(ns, core),
			lead && !trail && strings.HasSuffix(ns, core),
			trail && !lead && strings.HasPrefix(ns, core),
			p == ns:
			return p, true
		}
	}
	return "", false
}

// checkExcludedNamespaces refuses the excludedNamespaces patterns that
// would leave namespaces ungoverned. Gatekeeper exempts every namespace a
// glob matches, the ones created later too: where users may create
// namespaces, kube-* hands any of them a kube-x whose pods reach every
// accelerator. A glob is accepted only on the admins' word
// (namespaceCreation "admins-only") that users cannot create such names;
// one that matches every namespace never is.
func checkExcludedNamespaces(c *Cluster, cluster Path) []Diagnostic {
	var out []Diagnostic
	for i, p := range c.ExcludedNamespaces {
		if !strings.Contains(p, "*") {
			continue
		}
		at := cluster.Key("excludedNamespaces").Index(i)
		core := strings.TrimSuffix(strings.TrimPrefix(p, "*"), "*")
		switch {
		case core == "" || strings.Trim(core, "*") == "":
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"%q matches every namespace, so accelc's policies would check none: list the exact names of the system namespaces to exclude", p)})
		case strings.Contains(core, "*"):
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"%q has a * inside: Gatekeeper matches * only at the start or end of a name (kube-*, *-system) and refuses the constraint: list the exact names", p)})
		case c.NamespaceCreation != "admins-only":
			// The example is what a user would create: the glob's * as x.
			example := strings.ReplaceAll(p, "*", "x")
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"%q exempts from accelc's policies every namespace it matches, those created later too: a user who may create namespaces creates %s, whose pods reach any accelerator. List the exact names instead (kube-system, not kube-*), or, if only cluster admins can create namespaces, say so with cluster.namespaceCreation: \"admins-only\" (on OpenShift it holds for kube-* and openshift-* when users only get projects: ProjectRequests refuse those prefixes)",
				p, example)})
		}
	}
	return out
}
