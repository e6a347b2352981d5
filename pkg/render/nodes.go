package render

// The NodeFeatureRule that labels each node with its accelerator type.

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// NFD's NodeFeatureRule, nfd.k8s-sigs.io/v1alpha1. NFD's Go types are
// only in tools/upstream's module, which checks these against NFD's own
// validator: the project's go.mod does not carry NFD.
type nfr struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              nfrSpec `json:"spec"`
}

type nfrSpec struct {
	Rules []nfrRule `json:"rules"`
}

type nfrRule struct {
	Name          string            `json:"name"`
	Labels        map[string]string `json:"labels"`
	Taints        []compile.Taint   `json:"taints,omitempty"`
	MatchFeatures []featureMatcher  `json:"matchFeatures"`
}

type featureMatcher struct {
	Feature          string                     `json:"feature"`
	MatchExpressions map[string]matchExpression `json:"matchExpressions"`
}

type matchExpression struct {
	Op    string   `json:"op"`
	Value []string `json:"value,omitempty"`
}

// NodeFeatureRuleName is the name of the rule object that stamps the type
// label.
const NodeFeatureRuleName = "accelc-accelerator-types"

// nodeFeatureRule stamps <labelPrefix>/type on every node: one rule per
// catalog class with PCI ids (NFD cannot match labels other tools set, so
// it matches the PCI vendor and device ids), and one rule per node pinned
// by hand in CUE, matched by node name. Pinned nodes are excluded from
// the PCI rules so that exactly one rule labels each node.
func nodeFeatureRule(m *compile.Model) Object {
	label := m.Cluster.TypeLabel()
	pinned := make([]string, 0, len(m.Pins))
	for node := range m.Pins {
		pinned = append(pinned, node)
	}
	sort.Strings(pinned)

	var rules []nfrRule
	for _, c := range m.Catalog.Classes() {
		vendor := c.PCIVendor()
		if len(c.PCIDeviceIDs) == 0 || vendor == "" {
			continue
		}
		devices := append([]string(nil), c.PCIDeviceIDs...)
		sort.Strings(devices)
		r := nfrRule{
			Name:   "accelc " + c.ID + " by PCI id",
			Labels: map[string]string{label: c.ID},
			MatchFeatures: []featureMatcher{{
				Feature: "pci.device",
				MatchExpressions: map[string]matchExpression{
					"vendor": {Op: "In", Value: []string{vendor}},
					"device": {Op: "In", Value: devices},
				},
			}},
		}
		if len(pinned) > 0 {
			r.MatchFeatures = append(r.MatchFeatures, featureMatcher{
				Feature:          "system.name",
				MatchExpressions: map[string]matchExpression{"nodename": {Op: "NotIn", Value: pinned}},
			})
		}
		rules = append(rules, r)
	}
	for _, node := range pinned {
		rules = append(rules, nfrRule{
			Name:   "accelc " + node + " pinned to " + m.Pins[node],
			Labels: map[string]string{label: m.Pins[node]},
			MatchFeatures: []featureMatcher{{
				Feature:          "system.name",
				MatchExpressions: map[string]matchExpression{"nodename": {Op: "In", Value: []string{node}}},
			}},
		})
	}
	rules = append(rules, poolRules(m)...)
	return Object{
		Dir: "nodes",
		Body: &nfr{
			TypeMeta:   metav1.TypeMeta{APIVersion: "nfd.k8s-sigs.io/v1alpha1", Kind: "NodeFeatureRule"},
			ObjectMeta: objectMeta(m.Cluster.Name, "", NodeFeatureRuleName),
			Spec:       nfrSpec{Rules: rules},
		},
	}
}
