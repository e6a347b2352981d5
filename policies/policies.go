// Package policies holds accelc's Gatekeeper ConstraintTemplates: one
// folder per policy with its Rego (src.rego), Rego unit tests
// (src_test.rego), the generated template.yaml, sample objects and a gator
// suite.yaml. lib/ is the Rego library every template carries.
//
// pkg/render builds the cluster's ConstraintTemplates from Templates() and
// its Constraints from the model; template.yaml in each folder is the same
// object, kept in sync by a test, so `gator verify policies/...` checks
// exactly what accelc renders.
package policies

import (
	"embed"
	"fmt"
	"strings"
)

//go:embed lib/*.rego */*.rego
var sources embed.FS

// Policy is one ConstraintTemplate.
type Policy struct {
	// Dir is the policy's folder and Rego package suffix.
	Dir string
	// Kind is the constraint kind the template defines.
	Kind string
	// Description says what the policy enforces.
	Description string
	// Params are the constraint's parameters. Every one is small and
	// fixed in size: what grows with the cluster (profiles, nodes, team
	// namespaces) is read from data.inventory, by path.
	Params []string
}

// All lists accelc's policies.
var All = []Policy{
	{Dir: "profilerequired", Kind: "AccelcProfileRequired",
		Description: "A pod that asks for an accelerator names an enabled hardware profile, unless its namespace is allowed generic GPU use.",
		Params:      []string{"labelPrefix", "profileNamespace", "genericNamespaces", "extraResourcePrefixes"}},
	{Dir: "profilescheduling", Kind: "AccelcProfileScheduling",
		Description: "A pod of a typed hardware profile is confined to the profile's accelerator types and tolerates only its profile's taints.",
		Params:      []string{"labelPrefix", "profileNamespace", "typeLabel", "taintKeys", "extraResourcePrefixes"}},
	{Dir: "annotations", Kind: "AccelcAnnotations",
		Description: "The accelerator-type, types and team annotations a pod carries agree with its hardware profile and namespace.",
		Params:      []string{"labelPrefix", "profileNamespace", "extraResourcePrefixes"}},
	{Dir: "entitlement", Kind: "AccelcEntitlement",
		Description: "The pod's team may use its profile's types; the pod asks for the profile's resource, within its device limits.",
		Params:      []string{"labelPrefix", "profileNamespace", "extraResourcePrefixes"}},
}

// Name is the template's metadata.name: the kind, lower-cased.
func (p Policy) Name() string { return strings.ToLower(p.Kind) }

// Rego returns the policy's source.
func (p Policy) Rego() string { return mustRead(p.Dir + "/src.rego") }

// Lib returns the shared Rego library.
func Lib() string { return mustRead("lib/accelc.rego") }

func mustRead(name string) string {
	b, err := sources.ReadFile(name)
	if err != nil {
		panic(fmt.Sprintf("policies: %s is not embedded: %v", name, err))
	}
	return string(b)
}

// Tests returns the Rego unit tests of the policy, with the shared
// fixtures, by file name.
func (p Policy) Tests() map[string]string {
	return map[string]string{
		"policies/lib/fixtures_test.rego":      mustRead("lib/fixtures_test.rego"),
		"policies/" + p.Dir + "/src_test.rego": mustRead(p.Dir + "/src_test.rego"),
	}
}

// Template returns the ConstraintTemplate object.
func (p Policy) Template() map[string]any {
	props := map[string]any{}
	for _, name := range p.Params {
		switch name {
		case "typeLabel", "labelPrefix", "profileNamespace":
			props[name] = map[string]any{"type": "string"}
		case "extraResourcePrefixes":
			props[name] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
		default:
			props[name] = map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
		}
	}
	return map[string]any{
		"apiVersion": "templates.gatekeeper.sh/v1",
		"kind":       "ConstraintTemplate",
		"metadata": map[string]any{
			"name":        p.Name(),
			"annotations": map[string]any{"description": p.Description},
		},
		"spec": map[string]any{
			"crd": map[string]any{"spec": map[string]any{
				"names": map[string]any{"kind": p.Kind},
				"validation": map[string]any{"openAPIV3Schema": map[string]any{
					"type":       "object",
					"properties": props,
				}},
			}},
			// Rego v1 syntax through `code`, the field Gatekeeper prefers
			// over the legacy `rego` (which is parsed as v0).
			"targets": []any{map[string]any{
				"target": "admission.k8s.gatekeeper.sh",
				"code": []any{map[string]any{
					"engine": "Rego",
					"source": map[string]any{
						"version": "v1",
						"rego":    p.Rego(),
						"libs":    []any{Lib()},
					},
				}},
			}},
		},
	}
}
