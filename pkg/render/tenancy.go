package render

// Tenancy: the teams' namespaces, their Pod Security labels, and the
// entitlement CRD.

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	crd := entitlementCRD(m)
	out := []Object{{Dir: "tenancy", Body: crd}}
	for _, t := range m.Teams {
		spec := entitlementSpec{Team: t.Name, AcceleratorTypes: sorted(t.AcceleratorTypes)}
		if t.Profiles != nil {
			spec.Profiles = sorted(t.Profiles)
		}
		spec.DeviceClasses = m.TeamDeviceClasses(&t)
		// Where profiles schedule through Kueue, the queue is the
		// profile's (its HardwareProfile names it), not the team's: the
		// policy reads it there, and spec.queue stays empty.
		if pc, ok := m.Cluster.PriorityClasses[t.Priority]; ok {
			spec.Priority = &tier{ClassName: t.Priority, Value: pc.Value}
		}
		for _, ns := range t.Namespaces {
			out = append(out, Object{
				Dir: "tenancy",
				Body: &namespaceEntitlement{
					TypeMeta:   metav1.TypeMeta{APIVersion: apiVersion, Kind: "NamespaceEntitlement"},
					ObjectMeta: objectMeta(m.Cluster.Name, "", ns),
					Spec:       spec,
				},
			})
			if m.Cluster.PodSecurity != "none" {
				out = append(out, podSecurityNamespace(m, ns, m.TeamStage(&t, ns)))
			}
		}
	}
	return append(out, genericNamespaces(m)...)
}

// genericNamespaces are the generic GPU namespaces that are no team's,
// with the Pod Security labels team namespaces get: their pods may ask
// for accelerators without a profile, and what keeps them from the
// devices a device plugin did not hand them (privileged containers, host
// namespaces and paths, added capabilities) is the same there as in a
// team's namespace.
func genericNamespaces(m *compile.Model) []Object {
	if m.Cluster.PodSecurity == "none" {
		return nil
	}
	var out []Object
	for _, ns := range sorted(m.Cluster.GenericGPUNamespaces) {
		if m.TeamOf(ns) == nil {
			out = append(out, podSecurityNamespace(m, ns, m.Stage(ns)))
		}
	}
	return out
}

// entitlementCRD is the NamespaceEntitlement's CustomResourceDefinition.
func entitlementCRD(m *compile.Model) *customResourceDefinition {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	strList := apiextensionsv1.JSONSchemaProps{Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &str}}
	withDescription := func(s apiextensionsv1.JSONSchemaProps, d string) apiextensionsv1.JSONSchemaProps {
		s.Description = d
		return s
	}
	schema := apiextensionsv1.JSONSchemaProps{
		Type:        "object",
		Description: "The team a namespace belongs to and the accelerator types it may use; rendered by accelc from the cluster's CUE. The object's name is the namespace's.",
		Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"apiVersion": str, "kind": str, "metadata": {Type: "object"},
			"spec": {
				Type:     "object",
				Required: []string{"team", "acceleratorTypes"},
				Properties: map[string]apiextensionsv1.JSONSchemaProps{
					"team":             str,
					"acceleratorTypes": strList,
					"profiles":         withDescription(strList, "The only hardware profiles the team may use; absent: every profile of its types."),
					"queue":            withDescription(str, "The LocalQueue (kueue.x-k8s.io/queue-name) the team's accelerator pods must join."),
					"deviceClasses": withDescription(apiextensionsv1.JSONSchemaProps{Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextensionsv1.JSONSchemaProps{Type: "integer"}}},
						"The Dynamic Resource Allocation DeviceClasses the team's ResourceClaims and ResourceClaimTemplates may name, each with the most devices one request may ask for."),
					"priority": {
						Type:        "object",
						Description: "The team's tier: its accelerator pods run at most at this priority, unless their profile names a class.",
						Required:    []string{"className", "value"},
						Properties:  map[string]apiextensionsv1.JSONSchemaProps{"className": str, "value": {Type: "integer", Format: "int32"}},
					},
				},
			},
		},
	}
	return &customResourceDefinition{CustomResourceDefinition: apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: objectMeta(m.Cluster.Name, "", "namespaceentitlements."+EntitlementGroup),
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: EntitlementGroup,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind: "NamespaceEntitlement", ListKind: "NamespaceEntitlementList", Plural: "namespaceentitlements", Singular: "namespaceentitlement",
			},
			Scope: apiextensionsv1.ClusterScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: EntitlementVersion, Served: true, Storage: true,
				AdditionalPrinterColumns: []apiextensionsv1.CustomResourceColumnDefinition{
					{Name: "Team", Type: "string", JSONPath: ".spec.team"},
					{Name: "Types", Type: "string", JSONPath: ".spec.acceleratorTypes"},
				},
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &schema},
			}},
		},
	}}
}

// customResourceDefinition is a CustomResourceDefinition as accelc writes
// it: without the status, a struct that encoding/json writes even when it
// is empty. The field hides the embedded type's.
type customResourceDefinition struct {
	apiextensionsv1.CustomResourceDefinition
	Status struct{} `json:"status,omitzero"`
}

// NamespaceEntitlement, accelc's own resource (above).
type namespaceEntitlement struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              entitlementSpec `json:"spec"`
}

type entitlementSpec struct {
	Team             string         `json:"team"`
	AcceleratorTypes []string       `json:"acceleratorTypes"`
	Profiles         []string       `json:"profiles,omitempty"`
	DeviceClasses    map[string]int `json:"deviceClasses,omitempty"`
	Queue            string         `json:"queue,omitempty"`
	Priority         *tier          `json:"priority,omitempty"`
}

type tier struct {
	ClassName string `json:"className"`
	Value     int    `json:"value"`
}

// podSecurityNamespace is a team's or a generic GPU namespace with the
// Pod Security Admission labels that enforce the cluster's level: no
// privileged containers or host paths (the ways past the device plugin
// that admission would otherwise be alone to stop). Flux applies it
// server-side, so accelc owns only these labels, and never prunes it: a
// namespace dropped from a team, or from the generic ones, keeps its
// workloads.
//
// A namespace not yet at deny (stage) gets the audit and warn labels
// only: its pods are reported and warned about, never refused, as the
// stage says.
func podSecurityNamespace(m *compile.Model, ns, stage string) Object {
	labels := managedLabels(m.Cluster.Name)
	modes := []string{"enforce", "audit", "warn"}
	if stage != compile.Deny {
		modes = modes[1:]
	}
	for _, mode := range modes {
		labels["pod-security.kubernetes.io/"+mode] = m.Cluster.PodSecurity
		labels["pod-security.kubernetes.io/"+mode+"-version"] = "latest"
	}
	return Object{
		Dir: "tenancy",
		Body: &namespace{Namespace: corev1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels, Annotations: map[string]string{"kustomize.toolkit.fluxcd.io/prune": "disabled"}},
		}},
	}
}

// namespace is a Namespace as accelc writes it: metadata only. Its spec
// and status are structs, which encoding/json writes even when they are
// empty; the fields hide the embedded type's.
type namespace struct {
	corev1.Namespace
	Spec   struct{} `json:"spec,omitzero"`
	Status struct{} `json:"status,omitzero"`
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return nonNil(out)
}
