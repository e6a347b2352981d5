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

// Mutate applies the rendered mutators to an object with Gatekeeper's own
// expander (the code behind `gator expand`): a Pod comes back mutated; a
// workload comes back as the mutated Pod its ExpansionTemplate generates.
func Mutate(tree render.Tree, object []byte) ([]byte, error) {
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
	obj, err := reader.ReadUnstructured(object)
	if err != nil {
		return nil, err
	}
	if ns := obj.GetNamespace(); ns != "" {
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
	resultants, err := er.Expand(obj)
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
