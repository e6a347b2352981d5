package render

import (
	"sort"

	"github.com/accelc/accelc/pkg/compile"
)

// NamespaceEntitlement, accelc's own cluster-scoped resource: one per team
// namespace, named after it, saying which team it belongs to, which
// accelerator types and profiles that team may use, the Kueue queue its
// accelerator pods join and its priority tier. Policies look a pod's namespace up
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
								"profiles":         map[string]any{"type": "array", "items": str, "description": "The only hardware profiles the team may use; absent: every profile of its types."},
								"queue":            map[string]any{"type": "string", "description": "The LocalQueue (kueue.x-k8s.io/queue-name) the team's accelerator pods must join."},
								"priority": map[string]any{
									"type":        "object",
									"description": "The team's tier: its accelerator pods run at most at this priority, unless their profile names a class.",
									"required":    []string{"className", "value"},
									"properties":  map[string]any{"className": str, "value": map[string]any{"type": "integer", "format": "int32"}},
								},
							},
						},
					},
				}},
			}},
		},
	}
	out := []Object{{Dir: "tenancy", APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "namespaceentitlements." + EntitlementGroup, Body: crd}}
	for _, t := range m.Teams {
		spec := entitlementSpec{Team: t.Name, AcceleratorTypes: sorted(t.AcceleratorTypes)}
		if t.Profiles != nil {
			spec.Profiles = sorted(t.Profiles)
		}
		if m.Cluster.Quotas == "kueue" && len(t.Quota) > 0 {
			spec.Queue = LocalQueueName
		}
		if pc, ok := m.Cluster.PriorityClasses[t.Priority]; ok {
			spec.Priority = &tier{ClassName: t.Priority, Value: pc.Value}
		}
		for _, ns := range t.Namespaces {
			out = append(out, Object{
				Dir: "tenancy", APIVersion: apiVersion, Kind: "NamespaceEntitlement", Name: ns,
				Body: namespaceEntitlement{
					APIVersion: apiVersion, Kind: "NamespaceEntitlement",
					Metadata: meta{Name: ns, Labels: managedLabels(m.Cluster.Name)},
					Spec:     spec,
				},
			})
			if m.Cluster.PodSecurity != "none" {
				out = append(out, teamNamespace(m, ns))
			}
		}
	}
	return out
}

type namespaceEntitlement struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   meta            `json:"metadata"`
	Spec       entitlementSpec `json:"spec"`
}

type entitlementSpec struct {
	Team             string   `json:"team"`
	AcceleratorTypes []string `json:"acceleratorTypes"`
	Profiles         []string `json:"profiles,omitempty"`
	Queue            string   `json:"queue,omitempty"`
	Priority         *tier    `json:"priority,omitempty"`
}

type tier struct {
	ClassName string `json:"className"`
	Value     int    `json:"value"`
}

// teamNamespace is a team namespace with the Pod Security Admission
// labels that enforce the cluster's level: no privileged containers or
// host paths (the ways past the device plugin that admission would
// otherwise be alone to stop). Flux applies it server-side, so accelc owns
// only these labels, and never prunes it: a namespace dropped from a team
// keeps its workloads.
func teamNamespace(m *compile.Model, ns string) Object {
	labels := managedLabels(m.Cluster.Name)
	for _, mode := range []string{"enforce", "audit", "warn"} {
		labels["pod-security.kubernetes.io/"+mode] = m.Cluster.PodSecurity
		labels["pod-security.kubernetes.io/"+mode+"-version"] = "latest"
	}
	return Object{
		Dir: "tenancy", APIVersion: "v1", Kind: "Namespace", Name: ns,
		Body: map[string]any{
			"apiVersion": "v1", "kind": "Namespace",
			"metadata": meta{Name: ns, Labels: labels, Annotations: map[string]string{"kustomize.toolkit.fluxcd.io/prune": "disabled"}},
		},
	}
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return nonNil(out)
}
