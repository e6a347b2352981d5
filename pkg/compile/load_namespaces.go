package compile

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// checkNames checks the settings that become Kubernetes names (the label
// prefix, the ids of the types the cluster defines) and the cluster's
// excluded namespaces.
func (raw *rawConfig) checkNames(m *Model) []Diagnostic {
	root := m.root()
	diags := checkKubernetesNames(&raw.Cluster.Cluster, slices.Sorted(maps.Keys(raw.Accelerators)), root)
	return append(diags, checkExcludedNamespaces(&raw.Cluster.Cluster, root.Key("cluster"))...)
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
