package render

import (
	"sort"
	"strings"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/policies"
)

// ConstraintName is the name of accelc's admission constraint.
const ConstraintName = "accelc"

// policyObjects renders the admission ConstraintTemplate (every policy in
// one template: policies.AdmissionTemplate) and its Constraint,
// the SyncSet that gives policies live Nodes and HardwareProfiles, and
// ExpansionTemplates so workload templates are checked as the pods they
// create.
//
// Parameters stay small whatever the cluster's size. Gatekeeper converts a
// constraint's whole parameters on every evaluation, and decodes the
// object under review again for every constraint it matches against, so
// accelc keeps one template and one constraint with fixed-size parameters,
// and everything that grows — HardwareProfiles, Nodes, the namespace →
// team map — is synced into data.inventory and looked up by path.
func policyObjects(m *compile.Model, inv *inventory.Inventory) []Object {
	kind := policies.Admission.Kind
	out := []Object{
		{Dir: "policies", APIVersion: "templates.gatekeeper.sh/v1", Kind: "ConstraintTemplate", Name: policies.Admission.Name, Body: withLabels(policies.AdmissionTemplate(), m.Cluster.Name)},
		{
			Dir: DirConstraints, APIVersion: "constraints.gatekeeper.sh/v1beta1", Kind: kind, Name: ConstraintName,
			Body: map[string]any{
				"apiVersion": "constraints.gatekeeper.sh/v1beta1",
				"kind":       kind,
				"metadata":   meta{Name: ConstraintName, Labels: managedLabels(m.Cluster.Name)},
				"spec": map[string]any{
					"enforcementAction": m.Cluster.Enforcement,
					"match": map[string]any{
						"kinds":              []any{map[string]any{"apiGroups": []string{""}, "kinds": []string{"Pod"}}},
						"scope":              "Namespaced",
						"excludedNamespaces": nonNil(m.Cluster.ExcludedNamespaces),
					},
					"parameters": admissionParams(m, inv),
				},
			},
		},
	}
	out = append(out, Object{
		Dir: "policies", APIVersion: "syncset.gatekeeper.sh/v1alpha1", Kind: "SyncSet", Name: "accelc",
		Body: map[string]any{
			"apiVersion": "syncset.gatekeeper.sh/v1alpha1",
			"kind":       "SyncSet",
			"metadata":   meta{Name: "accelc", Labels: managedLabels(m.Cluster.Name)},
			"spec": map[string]any{"gvks": []any{
				map[string]any{"group": "", "version": "v1", "kind": "Node"},
				map[string]any{"group": "infrastructure.opendatahub.io", "version": "v1", "kind": "HardwareProfile"},
				map[string]any{"group": EntitlementGroup, "version": EntitlementVersion, "kind": "NamespaceEntitlement"},
				map[string]any{"group": "scheduling.k8s.io", "version": "v1", "kind": "PriorityClass"},
			}},
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
		// The ML kinds users run on accelerators. An ExpansionTemplate has
		// one source, so a job with several replica templates takes one per
		// template; RayCluster's worker groups are a list, which a source
		// path cannot index: only its head is checked here.
		{"accelc-notebooks", "spec.template", []any{
			map[string]any{"groups": []string{"kubeflow.org"}, "kinds": []string{"Notebook"}, "versions": []string{"v1", "v1beta1"}},
		}},
		{"accelc-pytorchjob-master", "spec.pytorchReplicaSpecs.Master.template", []any{
			map[string]any{"groups": []string{"kubeflow.org"}, "kinds": []string{"PyTorchJob"}, "versions": []string{"v1"}},
		}},
		{"accelc-pytorchjob-worker", "spec.pytorchReplicaSpecs.Worker.template", []any{
			map[string]any{"groups": []string{"kubeflow.org"}, "kinds": []string{"PyTorchJob"}, "versions": []string{"v1"}},
		}},
		{"accelc-raycluster-head", "spec.headGroupSpec.template", []any{
			map[string]any{"groups": []string{"ray.io"}, "kinds": []string{"RayCluster"}, "versions": []string{"v1"}},
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

// VendorTaintKeys are the taints accelerator vendors' operators and cloud
// node pools put on accelerator nodes.
var VendorTaintKeys = []string{"nvidia.com/gpu", "amd.com/gpu", "habana.ai/gaudi", "gpu.intel.com/i915", "gpu.intel.com/xe"}

// admissionParams are the admission constraint's parameters
// (policies.AdmissionParams).
func admissionParams(m *compile.Model, inv *inventory.Inventory) map[string]any {
	// Taints that keep pods off accelerator nodes: the vendors', the
	// profiles' and pools', and those the inventory's accelerator nodes
	// carry. Only a profile's pods may tolerate them.
	taintKeys := map[string]any{}
	for _, k := range VendorTaintKeys {
		taintKeys[k] = true
	}
	if inv != nil {
		for _, n := range inv.Nodes {
			for _, t := range n.Taints {
				taintKeys[t.Key] = true
			}
		}
	}
	for i := range m.Profiles {
		for _, t := range m.Profiles[i].Tolerations {
			if t.Key != "" {
				taintKeys[t.Key] = true
			}
		}
	}
	for _, pool := range m.NodePools {
		if pool.Taint != nil {
			taintKeys[pool.Taint.Key] = true
		}
	}
	runtimeClasses := map[string]any{}
	for _, rc := range m.Cluster.DeviceRuntimeClasses {
		runtimeClasses[rc] = true
	}
	generic := map[string]any{}
	for _, ns := range m.Cluster.GenericGPUNamespaces {
		generic[ns] = true
	}
	extra := map[string]bool{}
	for _, c := range m.Catalog.Classes() {
		covered := false
		for _, p := range policies.BaseResourcePrefixes {
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
		"profileNamespace":      m.Cluster.ProfileNamespace,
		"genericNamespaces":     generic,
		"taintKeys":             taintKeys,
		"extraResourcePrefixes": extraList,
		"deviceRuntimeClasses":  runtimeClasses,
	}
}
