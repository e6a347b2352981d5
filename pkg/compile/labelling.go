package compile

import (
	"fmt"
	"strings"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
)

// checkTypeLabelling warns about a profile type whose nodes nothing
// accelc renders labels: the type has no PCI id for the NodeFeatureRule
// to match, and of its nodes in the inventory some are not pinned in
// cluster.nodes and do not carry the type label already (their node
// pool's). Profiles select nodes by that label, so their pods would stay
// Pending while the inventory, which reads the nodes' other labels,
// counts the nodes available. A type with no node yet and no Karpenter
// pool (whose nodes are born labelled) gets the same advice for when its
// nodes join.
func (m *Model) checkTypeLabelling(inv *inventory.Inventory) []Diagnostic {
	var out []Diagnostic
	label := m.Cluster.TypeLabel()
	grows := map[string]bool{}
	for _, p := range m.ScalePools() {
		grows[p.AcceleratorType] = true
	}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		for j, id := range p.AcceleratorTypes {
			class, ok := m.Catalog.Get(id)
			if !ok || class.TypedByPCI() {
				continue
			}
			nodes := inv.ByType(id)
			var unlabelled []string
			for _, n := range m.Unlabelled(class, nodes) {
				unlabelled = append(unlabelled, n.Name)
			}
			advice := class.Labelling(label)
			switch {
			case len(unlabelled) > 0:
				shown := unlabelled
				if len(shown) > 3 {
					shown = append(shown[:3:3], fmt.Sprintf("and %d more", len(unlabelled)-3))
				}
				out = append(out, Diagnostic{Severity: Warning, Path: p.path.At(p.types[j]), Msg: fmt.Sprintf(
					"%d of %d %s nodes (%s) carry no %s and are not pinned, so the profile's pods stay Pending there though the inventory counts them: %s",
					len(unlabelled), len(nodes), id, strings.Join(shown, ", "), label, advice)})
			case len(nodes) == 0 && !grows[id]:
				out = append(out, Diagnostic{Severity: Warning, Path: p.path.At(p.types[j]), Msg: fmt.Sprintf(
					"when %s nodes join, %s", id, advice)})
			}
		}
	}
	return out
}

// Unlabelled are the nodes of class, among nodes, that its profiles'
// pods cannot reach: no NodeFeatureRule gives them the type label (the
// class has no PCI id to match), they are not pinned in cluster.nodes,
// and they do not carry the label already (their node pool's, a
// Karpenter pool's). The inventory types them by their other labels;
// profiles select the type label. None for a class the rule types.
func (m *Model) Unlabelled(class *catalog.Class, nodes []*inventory.Node) []*inventory.Node {
	if class.TypedByPCI() {
		return nil
	}
	label := m.Cluster.TypeLabel()
	var out []*inventory.Node
	for _, n := range nodes {
		if v, _ := n.Label(label); !n.Pinned && v != class.ID {
			out = append(out, n)
		}
	}
	return out
}
