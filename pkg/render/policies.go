package render

import (
	"sort"
	"strings"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/policies"
)

// ConstraintName is the name of every constraint accelc renders: one per
// template, so the kind tells them apart.
const ConstraintName = "accelc"

// basePrefixes are the accelerator resource prefixes the Rego library
// knows (policies/lib/accelc.rego); a class whose resource none of them
// covers is passed as extraResourcePrefixes.
var basePrefixes = []string{"nvidia.com/gpu", "nvidia.com/mig-", "alpha.kubernetes.io/nvidia-gpu", "amd.com/", "habana.ai/", "gpu.intel.com/"}

// policyObjects renders the ConstraintTemplates, one Constraint per
// template with parameters from the model, the SyncSet that gives
// policies live Node labels, and ExpansionTemplates so workload templates
// are checked as the pods they create.
func policyObjects(m *compile.Model, inv *inventory.Inventory) []Object {
	params := policyParams(m, inv)
	var out []Object
	for _, p := range policies.All {
		out = append(out, Object{Dir: "policies", APIVersion: "templates.gatekeeper.sh/v1", Kind: "ConstraintTemplate", Name: p.Name(), Body: withLabels(p.Template(), m.Cluster.Name)})
		pp := map[string]any{}
		for _, name := range p.Params {
			if v, ok := params[name]; ok {
				pp[name] = v
			}
		}
		out = append(out, Object{
			Dir: "policies", APIVersion: "constraints.gatekeeper.sh/v1beta1", Kind: p.Kind, Name: ConstraintName,
			Body: map[string]any{
				"apiVersion": "constraints.gatekeeper.sh/v1beta1",
				"kind":       p.Kind,
				"metadata":   meta{Name: ConstraintName, Labels: managedLabels(m.Cluster.Name)},
				"spec": map[string]any{
					"enforcementAction": m.Cluster.Enforcement,
					"match": map[string]any{
						"kinds":              []any{map[string]any{"apiGroups": []string{""}, "kinds": []string{"Pod"}}},
						"scope":              "Namespaced",
						"excludedNamespaces": nonNil(m.Cluster.ExcludedNamespaces),
					},
					"parameters": pp,
				},
			},
		})
	}
	out = append(out, Object{
		Dir: "policies", APIVersion: "syncset.gatekeeper.sh/v1alpha1", Kind: "SyncSet", Name: "accelc-nodes",
		Body: map[string]any{
			"apiVersion": "syncset.gatekeeper.sh/v1alpha1",
			"kind":       "SyncSet",
			"metadata":   meta{Name: "accelc-nodes", Labels: managedLabels(m.Cluster.Name)},
			"spec":       map[string]any{"gvks": []any{map[string]any{"group": "", "version": "v1", "kind": "Node"}}},
		},
	})
	for _, e := range []struct {
		name, source string
		applyTo      []any
	}{
		{"accelc-workloads", "spec.template", []any{
			map[string]any{"groups": []string{"apps"}, "kinds": []string{"DaemonSet", "Deployment", "ReplicaSet", "StatefulSet"}, "versions": []string{"v1"}},
			map[string]any{"groups": []string{"batch"}, "kinds": []string{"Job"}, "versions": []string{"v1"}},
		}},
		{"accelc-cronjobs", "spec.jobTemplate.spec.template", []any{
			map[string]any{"groups": []string{"batch"}, "kinds": []string{"CronJob"}, "versions": []string{"v1"}},
		}},
	} {
		out = append(out, Object{
			Dir: "policies", APIVersion: "expansion.gatekeeper.sh/v1alpha1", Kind: "ExpansionTemplate", Name: e.name,
			Body: map[string]any{
				"apiVersion": "expansion.gatekeeper.sh/v1alpha1",
				"kind":       "ExpansionTemplate",
				"metadata":   meta{Name: e.name, Labels: managedLabels(m.Cluster.Name)},
				"spec": map[string]any{
					"applyTo":        e.applyTo,
					"templateSource": e.source,
					"generatedGVK":   map[string]any{"group": "", "version": "v1", "kind": "Pod"},
				},
			},
		})
	}
	return out
}

func withLabels(obj map[string]any, cluster string) map[string]any {
	md := obj["metadata"].(map[string]any)
	md["labels"] = managedLabels(cluster)
	return obj
}

// policyParams builds every constraint parameter, each a map keyed by what
// a policy looks up, so admission cost does not grow with teams or
// profiles.
func policyParams(m *compile.Model, inv *inventory.Inventory) map[string]any {
	profiles := map[string]any{}
	taintKeys := map[string]any{}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		tols := make([]any, 0, len(p.Tolerations))
		for _, t := range p.Tolerations {
			tols = append(tols, t)
			if t.Key != "" {
				taintKeys[t.Key] = true
			}
		}
		entry := map[string]any{
			"enabled":      p.Enabled,
			"types":        nonNil(p.AcceleratorTypes),
			"resourceName": p.ResourceName,
			"gpuMin":       p.GPU.Min,
			"tolerations":  tols,
		}
		if p.GPU.Max != nil {
			entry["gpuMax"] = *p.GPU.Max
		}
		profiles[p.Name] = entry
	}
	generic := map[string]any{}
	for _, ns := range m.Cluster.GenericGPUNamespaces {
		generic[ns] = true
	}
	namespaces := map[string]any{}
	teams := map[string]any{}
	for _, t := range m.Teams {
		for _, ns := range t.Namespaces {
			namespaces[ns] = t.Name
		}
		teams[t.Name] = map[string]any{"types": nonNil(t.AcceleratorTypes)}
	}
	nodes := map[string]any{}
	if inv != nil {
		for i := range inv.Nodes {
			n := &inv.Nodes[i]
			if _, ok := m.Catalog.Get(n.AcceleratorType); ok {
				nodes[n.Name] = n.AcceleratorType
			}
		}
	}
	extra := map[string]bool{}
	for _, c := range m.Catalog.Classes() {
		covered := false
		for _, p := range basePrefixes {
			covered = covered || strings.HasPrefix(c.ResourceName, p)
		}
		if !covered {
			extra[c.ResourceName] = true
		}
	}
	extraList := make([]string, 0, len(extra))
	for r := range extra {
		extraList = append(extraList, r)
	}
	sort.Strings(extraList)
	return map[string]any{
		"typeLabel":             m.Cluster.TypeLabel(),
		"labelPrefix":           m.Cluster.LabelPrefix,
		"profiles":              profiles,
		"genericNamespaces":     generic,
		"namespaces":            namespaces,
		"teams":                 teams,
		"nodes":                 nodes,
		"taintKeys":             taintKeys,
		"extraResourcePrefixes": extraList,
	}
}
