package render

import (
	"sort"

	"github.com/accelc/accelc/pkg/compile"
)

// NamespaceEntitlement, accelc's own cluster-scoped resource: one per team
// namespace, named after it, saying which team it belongs to and which
// accelerator types that team may use. Policies look a pod's namespace up
// in it (Gatekeeper syncs it), so the namespace → team map comes from the
// CUE and only cluster admins, who apply the rendered tree, can change it.
const (
	EntitlementGroup   = "accelc.io"
	EntitlementVersion = "v1alpha1"
)

func tenancyObjects(m *compile.Model) []Object {
	apiVersion := EntitlementGroup + "/" + EntitlementVersion
	str := map[string]any{"type": "string"}
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   meta{Name: "namespaceentitlements." + EntitlementGroup, Labels: managedLabels(m.Cluster.Name)},
		"spec": map[string]any{
			"group": EntitlementGroup,
			"names": map[string]any{"kind": "NamespaceEntitlement", "listKind": "NamespaceEntitlementList", "plural": "namespaceentitlements", "singular": "namespaceentitlement"},
			"scope": "Cluster",
			"versions": []any{map[string]any{
				"name": EntitlementVersion, "served": true, "storage": true,
				"additionalPrinterColumns": []any{
					map[string]any{"name": "Team", "type": "string", "jsonPath": ".spec.team"},
					map[string]any{"name": "Types", "type": "string", "jsonPath": ".spec.acceleratorTypes"},
				},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type":        "object",
					"description": "The team a namespace belongs to and the accelerator types it may use; rendered by accelc from the cluster's CUE. The object's name is the namespace's.",
					"properties": map[string]any{
						"apiVersion": str, "kind": str, "metadata": map[string]any{"type": "object"},
						"spec": map[string]any{
							"type":     "object",
							"required": []string{"team", "acceleratorTypes"},
							"properties": map[string]any{
								"team":             str,
								"acceleratorTypes": map[string]any{"type": "array", "items": str},
							},
						},
					},
				}},
			}},
		},
	}
	out := []Object{{Dir: "tenancy", APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "namespaceentitlements." + EntitlementGroup, Body: crd}}
	for _, t := range m.Teams {
		types := append([]string{}, t.AcceleratorTypes...)
		sort.Strings(types)
		for _, ns := range t.Namespaces {
			out = append(out, Object{
				Dir: "tenancy", APIVersion: apiVersion, Kind: "NamespaceEntitlement", Name: ns,
				Body: map[string]any{
					"apiVersion": apiVersion,
					"kind":       "NamespaceEntitlement",
					"metadata":   meta{Name: ns, Labels: managedLabels(m.Cluster.Name)},
					"spec":       map[string]any{"team": t.Name, "acceleratorTypes": nonNil(types)},
				},
			})
		}
	}
	return out
}
