// Package nodechange makes random changes to a snapshot's nodes, the
// changes a watch sees (pods bound and gone, nodes cordoned, relabelled
// as another type, resized, added and removed), for the tests that a
// count after a change equals a whole count.
package nodechange

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/accelc/accelc/pkg/inventory"
)

// Random is s after one to three random node changes, and what they
// were; s and its nodes are not changed (a changed node is a copy, its
// maps too, as a watch replaces a node).
func Random(rng *rand.Rand, s *inventory.Snapshot) (*inventory.Snapshot, string) {
	out := *s
	out.Nodes = slices.Clone(s.Nodes)
	var what []string
	for range 1 + rng.IntN(3) {
		if len(out.Nodes) == 0 {
			break
		}
		i := rng.IntN(len(out.Nodes))
		n := out.Nodes[i]
		switch op := rng.IntN(6); op {
		case 0: // pods bound or gone
			n.Metadata.Annotations = maps.Clone(n.Metadata.Annotations)
			inventory.SetInUse(&n, map[string]int{"team-a": rng.IntN(3), "team-b": rng.IntN(2)})
			what = append(what, "in use "+n.Metadata.Name)
		case 1: // cordoned or not
			n.Spec.Unschedulable = !n.Spec.Unschedulable
			what = append(what, "cordon "+n.Metadata.Name)
		case 2: // relabelled as another node's type
			other := out.Nodes[rng.IntN(len(out.Nodes))]
			n.Metadata.Labels = maps.Clone(other.Metadata.Labels)
			n.Status.Capacity = maps.Clone(other.Status.Capacity)
			n.Status.Allocatable = maps.Clone(other.Status.Allocatable)
			what = append(what, "relabel "+n.Metadata.Name+" as "+other.Metadata.Name)
		case 3: // resized: one resource's count halved
			n.Status.Allocatable = maps.Clone(n.Status.Allocatable)
			for _, k := range slices.Sorted(maps.Keys(n.Status.Allocatable)) {
				if inventory.ExtendedResource(k) {
					n.Status.Allocatable[k] = "1"
					break
				}
			}
			what = append(what, "resize "+n.Metadata.Name)
		case 4: // a node joins, a copy of this one
			n.Metadata.Name = fmt.Sprintf("%s-copy-%d", n.Metadata.Name, rng.IntN(1000))
			if !slices.ContainsFunc(out.Nodes, func(o inventory.RawNode) bool { return o.Metadata.Name == n.Metadata.Name }) {
				out.Nodes = slices.Insert(out.Nodes, rng.IntN(len(out.Nodes)+1), n)
				what = append(what, "add "+n.Metadata.Name)
			}
			continue
		case 5: // a node leaves
			out.Nodes = slices.Delete(out.Nodes, i, i+1)
			what = append(what, "remove "+n.Metadata.Name)
			continue
		}
		out.Nodes[i] = n
	}
	return &out, fmt.Sprint(what)
}
