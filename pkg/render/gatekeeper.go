package render

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// Gatekeeper's objects, as accelc writes them. Gatekeeper's own Go types
// are in go.mod but are not used here: the mutators' and
// ExpansionTemplate's packages import client-go (which render must not,
// see TestRenderDependencies), the ConstraintTemplate's (the frameworks
// module) brings CEL and the API server's validation, 160 packages, into
// everything that renders, and the SyncSet's omits the core group ("")
// that accelc writes. A Constraint's kind is the one Gatekeeper generates
// from its template, so no Go type has it.

// mutator is an Assign, AssignMetadata or ModifySet,
// mutations.gatekeeper.sh/v1.
type mutator struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              mutatorSpec `json:"spec"`
}

type mutatorSpec struct {
	// ApplyTo is Assign's and ModifySet's; AssignMetadata has none.
	ApplyTo    []applyTo         `json:"applyTo,omitempty"`
	Match      match             `json:"match"`
	Location   string            `json:"location"`
	Parameters mutatorParameters `json:"parameters"`
}

type mutatorParameters struct {
	// Assign and AssignMetadata.
	Assign    *assignField `json:"assign,omitempty"`
	PathTests []pathTest   `json:"pathTests,omitempty"`
	// ModifySet.
	Operation string           `json:"operation,omitempty"`
	Values    *modifySetValues `json:"values,omitempty"`
}

type assignField struct {
	// Value is what is assigned at the location, whatever its type: a
	// string, a number, a node affinity.
	Value any `json:"value"`
}

type pathTest struct {
	SubPath   string `json:"subPath"`
	Condition string `json:"condition"`
}

// modifySetValues are what a ModifySet merges: accelc's merge
// tolerations.
type modifySetValues struct {
	FromList []compile.Toleration `json:"fromList"`
}

// applyTo names the kinds a mutator or ExpansionTemplate applies to.
type applyTo struct {
	Groups   []string `json:"groups"`
	Kinds    []string `json:"kinds"`
	Versions []string `json:"versions"`
}

// match is what a mutator or constraint matches.
type match struct {
	Scope string       `json:"scope"`
	Kinds []matchKinds `json:"kinds"`
	// ExcludedNamespaces is written even when empty.
	ExcludedNamespaces []string              `json:"excludedNamespaces"`
	Namespaces         []string              `json:"namespaces,omitempty"`
	LabelSelector      *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

type matchKinds struct {
	APIGroups []string `json:"apiGroups"`
	Kinds     []string `json:"kinds"`
}

// constraintTemplate is a ConstraintTemplate, templates.gatekeeper.sh/v1,
// with Rego v1 code.
type constraintTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              constraintTemplateSpec `json:"spec"`
}

type constraintTemplateSpec struct {
	CRD     templateCRD      `json:"crd"`
	Targets []templateTarget `json:"targets"`
}

type templateCRD struct {
	Spec struct {
		Names struct {
			Kind string `json:"kind"`
		} `json:"names"`
		Validation struct {
			OpenAPIV3Schema *apiextensionsv1.JSONSchemaProps `json:"openAPIV3Schema"`
		} `json:"validation"`
	} `json:"spec"`
}

type templateTarget struct {
	Target string         `json:"target"`
	Code   []templateCode `json:"code"`
}

type templateCode struct {
	Engine string     `json:"engine"`
	Source regoSource `json:"source"`
}

type regoSource struct {
	Version string   `json:"version"`
	Rego    string   `json:"rego"`
	Libs    []string `json:"libs"`
}

// admissionConstraint is the constraint of accelc's admission template
// (its kind is policies.Admission.Kind).
type admissionConstraint struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              admissionConstraintSpec `json:"spec"`
}

type admissionConstraintSpec struct {
	EnforcementAction string              `json:"enforcementAction"`
	Match             match               `json:"match"`
	Parameters        admissionParameters `json:"parameters"`
}

// syncSet is a SyncSet, syncset.gatekeeper.sh/v1alpha1: the kinds
// Gatekeeper replicates into data.inventory.
type syncSet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              syncSetSpec `json:"spec"`
}

type syncSetSpec struct {
	GVKs []gvk `json:"gvks"`
}

// gvk is a group, version and kind, the core group written as "".
type gvk struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

// expansionTemplate is an ExpansionTemplate,
// expansion.gatekeeper.sh/v1alpha1: which pods a workload's template
// stands for.
type expansionTemplate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              expansionTemplateSpec `json:"spec"`
}

type expansionTemplateSpec struct {
	ApplyTo        []applyTo `json:"applyTo"`
	TemplateSource string    `json:"templateSource"`
	GeneratedGVK   gvk       `json:"generatedGVK"`
}
