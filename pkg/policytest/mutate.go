package policytest

import (
	"fmt"
	"strings"

	"github.com/open-policy-agent/gatekeeper/v3/pkg/gator/expand"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/gator/reader"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/render"
)

// Mutator applies a rendered tree's mutators with Gatekeeper's own
// expander (the code behind `gator expand`).
type Mutator struct {
	expander *expand.Expander
}

// NewMutator loads the tree's mutators and ExpansionTemplates once.
// Mutators match by namespace, so it takes the namespaces of the objects
// it will mutate.
func NewMutator(tree render.Tree, namespaces []string) (*Mutator, error) {
	var resources []*unstructured.Unstructured
	for _, p := range tree.Paths() {
		if !strings.HasPrefix(p, "mutations/") && !strings.HasPrefix(p, "policies/expansiontemplate-") {
			continue
		}
		if strings.HasSuffix(p, "kustomization.yaml") {
			continue
		}
		u, err := reader.ReadUnstructured(tree[p])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		resources = append(resources, u)
	}
	for _, ns := range namespaces {
		nsObj := &unstructured.Unstructured{}
		nsObj.SetAPIVersion("v1")
		nsObj.SetKind("Namespace")
		nsObj.SetName(ns)
		resources = append(resources, nsObj)
	}
	er, err := expand.NewExpander(resources)
	if err != nil {
		return nil, err
	}
	return &Mutator{expander: er}, nil
}

// Mutate returns a Pod mutated, or a workload as the mutated Pod its
// ExpansionTemplate generates.
func (m *Mutator) Mutate(object []byte) ([]byte, error) {
	obj, err := reader.ReadUnstructured(object)
	if err != nil {
		return nil, err
	}
	resultants, err := m.expander.Expand(obj)
	if err != nil {
		return nil, err
	}
	out := obj
	if obj.GetKind() != "Pod" {
		if len(resultants) != 1 {
			return nil, fmt.Errorf("%s %s expands to %d pods, want 1: is there an ExpansionTemplate for it?", obj.GetKind(), obj.GetName(), len(resultants))
		}
		out = resultants[0].Obj
	}
	return yaml.Marshal(out.Object)
}
