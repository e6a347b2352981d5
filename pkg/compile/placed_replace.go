package compile

// Placing again after nodes changed: accelc serve keeps the placed cluster
// of its last count and, when the watch sees nodes change, resolves only
// theirs (Placed.Replaced) instead of placing the cluster again.

import (
	"maps"
	"slices"
	"strings"

	"github.com/accelc/accelc/pkg/inventory"
)

// Replaced is pl's model placed on inv, an inventory that differs from
// pl.Inventory only in the nodes changed names (added, removed or
// changed; a name in neither is ignored), both sorted by name as
// Inventory.Nodes are. It equals Model.Place(inv); pl is not changed.
//
// Only the changed nodes' pools and GPUs are resolved again. Where the
// inventory keeps its node names, a type's or pool's list is made again
// only where a changed node left or joined it, and the others are shared
// with pl. Where a node was added or removed the nodes after it move:
// every list is renumbered, though no other node is resolved again. On a
// MultiKueue manager that read its workers' nodes the fleet's inventory
// is made anew from the cluster's, and the whole is placed again.
func (pl *Placed) Replaced(inv *inventory.Inventory, changed []string) *Placed {
	m := pl.Model
	if inv == nil {
		inv = &inventory.Inventory{}
	}
	if pl.fleet != nil || m.FleetInventory(inv) != inv {
		return m.Place(inv)
	}
	old := pl.Inventory
	next := &Placed{Model: m, Inventory: inv, listed: pl.listed, whole: pl.whole,
		members: pl.members, byType: pl.byType, typeGPUs: maps.Clone(pl.typeGPUs)}
	// The lists are cloned before the first change to them: pl keeps its
	// own.
	own := false
	write := func() {
		if !own {
			next.members, next.byType, own = maps.Clone(next.members), maps.Clone(next.byType), true
		}
	}
	if !sameNodeNames(old, inv, changed) {
		moved := movedPlaces(old, inv)
		next.members, next.byType, own = renumber(pl.members, moved), renumber(pl.byType, moved), true
	}
	for _, name := range changed {
		was, is := nodeNamed(old, name), nodeNamed(inv, name)
		if was < 0 && is < 0 {
			continue
		}
		var wasPool, isPool *NodePool
		if was >= 0 {
			n := &old.Nodes[was]
			wasPool = pl.memberOf(n)
			if g, ok := nodeGPUs(n, pl.NodePool(n)); ok {
				next.typeGPUs[n.AcceleratorType] -= g
			}
		}
		if is >= 0 {
			n := &inv.Nodes[is]
			isPool = next.memberOf(n)
			if g, ok := nodeGPUs(n, next.NodePool(n)); ok {
				next.typeGPUs[n.AcceleratorType] += g
			}
		}
		if was >= 0 && is >= 0 && old.Nodes[was].AcceleratorType == inv.Nodes[is].AcceleratorType && wasPool == isPool {
			// Its lists hold it where they did (renumbered if nodes
			// moved).
			continue
		}
		write()
		if was >= 0 && is >= 0 {
			// Out of the lists it was in, at its place now; a node gone
			// was dropped by renumber.
			t := old.Nodes[was].AcceleratorType
			next.byType[t] = without(next.byType[t], int32(is))
			if wasPool != nil {
				next.members[wasPool] = without(next.members[wasPool], int32(is))
			}
		}
		if is >= 0 {
			t := inv.Nodes[is].AcceleratorType
			next.byType[t] = with(next.byType[t], int32(is))
			if isPool != nil {
				next.members[isPool] = with(next.members[isPool], int32(is))
			}
		}
	}
	return next
}

// memberOf is the pool whose members hold n (place's rule): its pool,
// where that pool is of its type.
func (pl *Placed) memberOf(n *inventory.Node) *NodePool {
	if pool := pl.NodePool(n); pool != nil && pool.AcceleratorType == n.AcceleratorType {
		return pool
	}
	return nil
}

// nodeNamed is the place of the node named name in inv, -1 if none.
func nodeNamed(inv *inventory.Inventory, name string) int {
	i, ok := slices.BinarySearchFunc(inv.Nodes, name, func(n inventory.Node, name string) int { return strings.Compare(n.Name, name) })
	if !ok {
		return -1
	}
	return i
}

// sameNodeNames reports whether two inventories that differ only in the
// changed nodes have the same names, so that every node has the same
// place in both.
func sameNodeNames(a, b *inventory.Inventory, changed []string) bool {
	if len(a.Nodes) != len(b.Nodes) {
		return false
	}
	for _, name := range changed {
		if (nodeNamed(a, name) >= 0) != (nodeNamed(b, name) >= 0) {
			return false
		}
	}
	return true
}

// movedPlaces maps each node's place in a to its place in b, -1 for a
// node b lacks: a walk over both, sorted by name.
func movedPlaces(a, b *inventory.Inventory) []int32 {
	moved := make([]int32, len(a.Nodes))
	j := 0
	for i := range a.Nodes {
		for j < len(b.Nodes) && b.Nodes[j].Name < a.Nodes[i].Name {
			j++
		}
		if j < len(b.Nodes) && b.Nodes[j].Name == a.Nodes[i].Name {
			moved[i] = int32(j)
		} else {
			moved[i] = -1
		}
	}
	return moved
}

// renumber is lists with each place moved, those gone dropped.
func renumber[K comparable](lists map[K][]int32, moved []int32) map[K][]int32 {
	out := make(map[K][]int32, len(lists))
	for k, list := range lists {
		var places []int32
		for _, at := range list {
			if to := moved[at]; to >= 0 {
				places = append(places, to)
			}
		}
		if len(places) > 0 {
			out[k] = places
		}
	}
	return out
}

// with is a sorted list with at added (a new slice: the list may be
// shared).
func with(list []int32, at int32) []int32 {
	i, ok := slices.BinarySearch(list, at)
	if ok {
		return list
	}
	out := make([]int32, 0, len(list)+1)
	out = append(out, list[:i]...)
	out = append(out, at)
	return append(out, list[i:]...)
}

// without is a sorted list without at (a new slice: the list may be
// shared).
func without(list []int32, at int32) []int32 {
	i, ok := slices.BinarySearch(list, at)
	if !ok {
		return list
	}
	if len(list) == 1 {
		return nil
	}
	return slices.Concat(list[:i], list[i+1:])
}
