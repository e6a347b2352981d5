package render

// Render: a model and inventory into the objects of the tree, placed once
// and handed to each part.

import (
	"fmt"
	"unicode/utf8"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// Render computes every object of a cluster's tree.
func Render(m *compile.Model, inv *inventory.Inventory) ([]Object, error) {
	// The model laid over the nodes once: every object that counts nodes
	// reads it.
	pl := m.Place(inv)
	var objs []Object
	objs = append(objs, nodeFeatureRule(m))
	profiles, err := hardwareProfiles(m)
	if err != nil {
		return nil, err
	}
	objs = append(objs, profiles...)
	cms, err := catalogConfigMaps(pl)
	if err != nil {
		return nil, err
	}
	objs = append(objs, cms...)
	policyObjs, err := policyObjects(m, inv)
	if err != nil {
		return nil, err
	}
	objs = append(objs, policyObjs...)
	objs = append(objs, tenancyObjects(m)...)
	objs = append(objs, mutationObjects(m)...)
	quotas, err := quotaObjects(pl)
	if err != nil {
		return nil, err
	}
	objs = append(objs, quotas...)
	objs = append(objs, costRules(m)...)
	objs = append(objs, draObjects(m)...)
	for _, build := range []func(*compile.Model) (Object, bool, error){migParted, devicePluginConfig, gpuOperatorValues, gatekeeperValues} {
		if cm, ok, err := build(m); err != nil {
			return nil, err
		} else if ok {
			objs = append(objs, cm)
		}
	}
	flux, err := fluxObjects(m)
	if err != nil {
		return nil, err
	}
	objs = append(objs, flux...)
	service, err := catalogServiceObjects(m, inv)
	if err != nil {
		return nil, err
	}
	objs = append(objs, service...)
	objs = append(objs, nodePools(m)...)
	if m.Cluster.AdmissionPolicies() {
		objs = append(objs, podAdmissionPolicy(m, admissionParams(m, inv), objs)...)
	}
	if err := checkCELSizes(m, objs); err != nil {
		return nil, err
	}
	sortObjects(objs)
	return objs, nil
}

// checkCELSizes refuses an admission policy with a CEL expression longer
// than the API server takes (CELExpressionLimit): it would refuse the
// policy, and the pods it mutates would be made without what it gives
// them, or those it judges refused (its bindings fail closed).
func checkCELSizes(m *compile.Model, objs []Object) error {
	type expr struct{ where, cel string }
	for _, o := range objs {
		var kind, name string
		var exprs []expr
		conditions := func(cs []admissionregistrationv1.MatchCondition) {
			for i, c := range cs {
				exprs = append(exprs, expr{fmt.Sprintf("spec.matchConditions[%d] (%s)", i, c.Name), c.Expression})
			}
		}
		variables := func(vs []admissionregistrationv1.Variable) {
			for i, v := range vs {
				exprs = append(exprs, expr{fmt.Sprintf("spec.variables[%d] (%s)", i, v.Name), v.Expression})
			}
		}
		switch p := o.Body.(type) {
		case *admissionregistrationv1.MutatingAdmissionPolicy:
			kind, name = "MutatingAdmissionPolicy", p.Name
			conditions(p.Spec.MatchConditions)
			variables(p.Spec.Variables)
			for i, mu := range p.Spec.Mutations {
				if mu.JSONPatch != nil {
					exprs = append(exprs, expr{fmt.Sprintf("spec.mutations[%d].jsonPatch", i), mu.JSONPatch.Expression})
				}
				if mu.ApplyConfiguration != nil {
					exprs = append(exprs, expr{fmt.Sprintf("spec.mutations[%d].applyConfiguration", i), mu.ApplyConfiguration.Expression})
				}
			}
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			kind, name = "ValidatingAdmissionPolicy", p.Name
			conditions(p.Spec.MatchConditions)
			variables(p.Spec.Variables)
			for i, v := range p.Spec.Validations {
				exprs = append(exprs, expr{fmt.Sprintf("spec.validations[%d]", i), v.Expression}, expr{fmt.Sprintf("spec.validations[%d].messageExpression", i), v.MessageExpression})
			}
		default:
			continue
		}
		for _, e := range exprs {
			if n := utf8.RuneCountInString(e.cel); n > CELExpressionLimit {
				namespaces := 0
				for _, t := range m.Teams {
					namespaces += len(t.Namespaces)
				}
				return fmt.Errorf("render: cluster %s: %s %s: %s is %d code points of CEL, more than the %d the API server takes in one expression: it would refuse the policy, and the pods it mutates or judges would be made without it. The cluster's %d teams, %d namespaces and %d profiles are more than accelc fits in one policy: report it to accelc's maintainers with these counts", m.Cluster.Name, kind, name, e.where, n, CELExpressionLimit, len(m.Teams), namespaces, len(m.Profiles))
			}
		}
	}
	return nil
}

// Cluster renders a cluster's whole tree: Render, Validate, then
// BuildTree. The provenance, when given, annotates every object.
func Cluster(m *compile.Model, inv *inventory.Inventory, prov ...Provenance) (Tree, error) {
	var p Provenance
	if len(prov) > 0 {
		p = prov[0]
	}
	t, _, err := cluster(m, inv, p, false)
	return t, err
}

// ClusterContent is Cluster with the tree's content digest, computed from
// the objects as they are written (BuildTreeContent): what `accelc
// render` records beside the tree for push, and `accelc status` compares
// with what the cluster runs.
func ClusterContent(m *compile.Model, inv *inventory.Inventory, prov Provenance) (Tree, string, error) {
	return cluster(m, inv, prov, true)
}

func cluster(m *compile.Model, inv *inventory.Inventory, prov Provenance, content bool) (Tree, string, error) {
	objs, err := Render(m, inv)
	if err != nil {
		return nil, "", err
	}
	if err := Validate(m, objs); err != nil {
		return nil, "", err
	}
	return buildTree(m.Cluster.Name, objs, prov, content)
}
