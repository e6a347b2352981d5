package compile

import (
	"fmt"
	"sort"
	"strings"

	"github.com/accelc/accelc/pkg/inventory"
)

// Check compares the model with a classified inventory and returns
// warnings: things that render fine but will not behave as the admin
// likely expects.
func (m *Model) Check(inv *inventory.Inventory) []Diagnostic {
	var out []Diagnostic
	warn := func(pos, format string, args ...any) {
		out = append(out, Diagnostic{Severity: Warning, Pos: pos, Msg: fmt.Sprintf(format, args...)})
	}
	for _, p := range inv.Problems {
		warn("", "inventory: %s; the node is left out", p)
	}
	maxPerNode := map[string]int{}
	nodes := map[string]int{}
	for i := range inv.Nodes {
		n := &inv.Nodes[i]
		nodes[n.AcceleratorType]++
		maxPerNode[n.AcceleratorType] = max(maxPerNode[n.AcceleratorType], n.Allocatable)
	}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		for j, id := range p.AcceleratorTypes {
			if nodes[id] == 0 {
				warn(relPos(p.typesPos[j], m.cwd), "profiles.%s: no node in the inventory has %s (0 available); the profile's pods stay Pending until one joins", p.Name, id)
			}
		}
		if p.GPU.Max != nil && len(p.AcceleratorTypes) > 0 {
			biggest := 0
			for _, id := range p.AcceleratorTypes {
				biggest = max(biggest, maxPerNode[id])
			}
			if biggest > 0 && *p.GPU.Max > biggest {
				warn(relPos(p.pos, m.cwd), "profiles.%s: gpu.max is %d but no node of its types has more than %d allocatable; larger requests never schedule", p.Name, *p.GPU.Max, biggest)
			}
		}
	}
	known := map[string]bool{}
	for i := range inv.Nodes {
		known[inv.Nodes[i].Name] = true
	}
	for _, node := range sortedKeys(m.Pins) {
		if !known[node] {
			warn(relPos(m.pinPos[node], m.cwd), "cluster.nodes.%s: no such accelerator node in the inventory; the pin only takes effect when it joins", node)
		}
	}
	var unknown []string
	for i := range inv.Nodes {
		if inv.Nodes[i].AcceleratorType == inventory.TypeUnknown {
			unknown = append(unknown, inv.Nodes[i].Name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		shown := unknown
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(unknown)-5))
		}
		warn("", "inventory: %d node(s) have accelerators of unknown type (%s): pin them in cluster.nodes or fix their GPU Feature Discovery labels; `accelc inventory show` says why",
			len(unknown), strings.Join(shown, ", "))
	}
	return out
}
