package render

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/catalog"
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
	MatchFeatures []featureMatcher  `json:"matchFeatures,omitempty"`
	// MatchAny matches when one of its terms does, and MatchFeatures
	// too: a class's boards told by their PCI subsystems.
	MatchAny []matchAnyTerm `json:"matchAny,omitempty"`
}

type matchAnyTerm struct {
	MatchFeatures []featureMatcher `json:"matchFeatures"`
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

// pciMatch matches the nodes with a device of class c: by its PCI ids,
// and where it has boards told by their subsystems, any of those too. A
// class with neither matches no device (device In nothing), never every
// node.
func pciMatch(c *catalog.Class) ([]featureMatcher, []matchAnyTerm) {
	vendor := c.PCIVendor()
	devices := append([]string(nil), c.PCIDeviceIDs...)
	sort.Strings(devices)
	byID := []featureMatcher{{
		Feature: "pci.device",
		MatchExpressions: map[string]matchExpression{
			"vendor": {Op: "In", Value: []string{vendor}},
			"device": {Op: "In", Value: devices},
		},
	}}
	if len(c.PCISubsystems) == 0 {
		return byID, nil
	}
	var any []matchAnyTerm
	if len(devices) > 0 {
		any = append(any, matchAnyTerm{MatchFeatures: byID})
	}
	for _, b := range c.PCISubsystems {
		any = append(any, matchAnyTerm{MatchFeatures: []featureMatcher{{
			Feature: "pci.device",
			MatchExpressions: map[string]matchExpression{
				"vendor":           {Op: "In", Value: []string{vendor}},
				"device":           {Op: "In", Value: []string{b.Device}},
				"subsystem_vendor": {Op: "In", Value: []string{b.SubsystemVendor}},
				"subsystem_device": {Op: "In", Value: []string{b.SubsystemDevice}},
			},
		}}})
	}
	return nil, any
}

// nodeFeatureRule stamps <labelPrefix>/type on every node: one rule per
// catalog class with PCI ids (NFD cannot match labels other tools set, so
// it matches the PCI vendor and device ids, and the subsystem ids of the
// boards of two models that share a device id), and one rule per node pinned
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
		if !c.TypedByPCI() {
			continue
		}
		r := nfrRule{Name: "accelc " + c.ID + " by PCI id", Labels: map[string]string{label: c.ID}}
		r.MatchFeatures, r.MatchAny = pciMatch(c)
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
