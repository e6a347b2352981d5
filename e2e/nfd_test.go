//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// nfdNode is what Node Feature Discovery's rules see of a node here: its
// name (feature system.name, element nodename) and its GPUs' PCI ids
// (feature pci.device, one instance per distinct vendor/device).
type nfdNode struct {
	name string
	pci  []map[string]string // vendor, device: lower-case hex without 0x
}

// nfdResult is what the rules stamp on a node: labels, and taints (with
// nfd-master -enable-taints).
type nfdResult struct {
	labels map[string]string
	taints []map[string]string // key, value, effect
	rules  []string
}

// evalNodeFeatureRules applies the rules of NodeFeatureRule objects to a
// node as nfd-master does: a rule fires when every term of matchFeatures
// matches (and one group of matchAny, when given); a feature term matches
// when one instance of the feature satisfies all its expressions. This is a
// stand-in for nfd-master, which these tests do not run, for the features
// and operators accelc's rules use; anything else is an error, so that a
// new kind of rule fails here rather than being ignored.
func evalNodeFeatureRules(rules []*unstructured.Unstructured, n nfdNode) (nfdResult, error) {
	res := nfdResult{labels: map[string]string{}}
	for _, obj := range rules {
		list, _, _ := unstructured.NestedSlice(obj.Object, "spec", "rules")
		for _, item := range list {
			rule, _ := item.(map[string]any)
			name := fmt.Sprint(rule["name"])
			ok, err := matchTerms(rule["matchFeatures"], n)
			if err != nil {
				return res, fmt.Errorf("NodeFeatureRule %s, rule %q: %w", obj.GetName(), name, err)
			}
			if anyGroups, has := rule["matchAny"].([]any); has && ok {
				anyOK := false
				for _, g := range anyGroups {
					gm, _ := g.(map[string]any)
					m, err := matchTerms(gm["matchFeatures"], n)
					if err != nil {
						return res, fmt.Errorf("NodeFeatureRule %s, rule %q: matchAny: %w", obj.GetName(), name, err)
					}
					anyOK = anyOK || m
				}
				ok = anyOK
			}
			if !ok {
				continue
			}
			for _, unsupported := range []string{"labelsTemplate", "vars", "varsTemplate", "extendedResources", "annotations"} {
				if _, has := rule[unsupported]; has {
					return res, fmt.Errorf("NodeFeatureRule %s, rule %q: %s is not handled by the tests' NFD stand-in", obj.GetName(), name, unsupported)
				}
			}
			labels, _, _ := unstructured.NestedStringMap(rule, "labels")
			for k, v := range labels {
				res.labels[k] = v
			}
			taints, _, _ := unstructured.NestedSlice(rule, "taints")
			for _, tn := range taints {
				m, _ := tn.(map[string]any)
				res.taints = append(res.taints, map[string]string{"key": fmt.Sprint(m["key"]), "value": str(m["value"]), "effect": fmt.Sprint(m["effect"])})
			}
			res.rules = append(res.rules, name)
		}
	}
	return res, nil
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// matchTerms is true when every feature term matches (no terms: true).
func matchTerms(terms any, n nfdNode) (bool, error) {
	list, _ := terms.([]any)
	for _, t := range list {
		term, _ := t.(map[string]any)
		feature := fmt.Sprint(term["feature"])
		exprs, _ := term["matchExpressions"].(map[string]any)
		if _, has := term["matchName"]; has {
			return false, fmt.Errorf("matchName is not handled by the tests' NFD stand-in")
		}
		var instances []map[string]string
		switch feature {
		case "pci.device":
			instances = n.pci
		case "system.name":
			instances = []map[string]string{{"nodename": n.name}}
		default:
			return false, fmt.Errorf("feature %s is not handled by the tests' NFD stand-in", feature)
		}
		matched := false
		for _, inst := range instances {
			ok, err := matchExpressions(exprs, inst)
			if err != nil {
				return false, err
			}
			if ok {
				matched = true
				break
			}
		}
		if !matched {
			return false, nil
		}
	}
	return true, nil
}

// matchExpressions is true when the instance satisfies every expression.
func matchExpressions(exprs map[string]any, inst map[string]string) (bool, error) {
	for attr, e := range exprs {
		expr, _ := e.(map[string]any)
		op := fmt.Sprint(expr["op"])
		var values []string
		if vs, ok := expr["value"].([]any); ok {
			for _, v := range vs {
				values = append(values, fmt.Sprint(v))
			}
		}
		got, has := inst[attr]
		switch op {
		case "In":
			if !has || !slices.Contains(values, got) {
				return false, nil
			}
		case "NotIn":
			if has && slices.Contains(values, got) {
				return false, nil
			}
		case "Exists":
			if !has {
				return false, nil
			}
		case "DoesNotExist":
			if has {
				return false, nil
			}
		case "InRegexp":
			ok := false
			for _, v := range values {
				re, err := regexp.Compile(v)
				if err != nil {
					return false, fmt.Errorf("InRegexp %q: %w", v, err)
				}
				ok = ok || (has && re.MatchString(got))
			}
			if !ok {
				return false, nil
			}
		default:
			return false, fmt.Errorf("op %s is not handled by the tests' NFD stand-in", op)
		}
	}
	return true, nil
}

// pciOf is the PCI device NFD would report for a node of the type: the
// first vendor and device id of the rule that stamps the type, which the
// renderer takes from the accelerator catalog.
func pciOf(rules []*unstructured.Unstructured, typeLabel, typ string) (map[string]string, error) {
	for _, obj := range rules {
		list, _, _ := unstructured.NestedSlice(obj.Object, "spec", "rules")
		for _, item := range list {
			rule, _ := item.(map[string]any)
			labels, _, _ := unstructured.NestedStringMap(rule, "labels")
			if labels[typeLabel] != typ {
				continue
			}
			terms, _ := rule["matchFeatures"].([]any)
			for _, t := range terms {
				term, _ := t.(map[string]any)
				if term["feature"] != "pci.device" {
					continue
				}
				vendor, _, _ := unstructured.NestedStringSlice(term, "matchExpressions", "vendor", "value")
				device, _, _ := unstructured.NestedStringSlice(term, "matchExpressions", "device", "value")
				if len(vendor) > 0 && len(device) > 0 {
					return map[string]string{"vendor": strings.ToLower(vendor[0]), "device": strings.ToLower(device[0])}, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("no NodeFeatureRule rule stamps %s=%s from a PCI id", typeLabel, typ)
}
