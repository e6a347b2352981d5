package compile

// Resolving the cluster's node pins (node name to type) against the
// catalog.

import (
	"maps"
	"slices"
)

// resolvePins resolves cluster.nodes: each node pinned to a type the
// catalog has (an inventory takes the pin over what its labels say).
func (raw *rawConfig) resolvePins(m *Model) []Diagnostic {
	var diags []Diagnostic
	for _, node := range slices.Sorted(maps.Keys(raw.Cluster.Nodes)) {
		id := raw.Cluster.Nodes[node].AcceleratorType
		pin := m.root().Key("cluster").Key("nodes").Key(node)
		if _, ok := m.Catalog.Get(id); !ok {
			diags = append(diags, unknownType(m.Catalog, pin.At(pin.Key("acceleratorType")), id))
			continue
		}
		m.Pins[node] = id
		m.pins[node] = pin
	}
	return diags
}
