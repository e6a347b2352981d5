package compile

// The placed cluster: the model laid over an inventory once. What every
// consumer asks of a node (its pool, its GPUs), of a pool or a profile
// (its nodes, what it offers), of a type or a quota key (its nodes, its
// GPUs) is resolved here in one pass and read afterwards, instead of each
// consumer asking the model again per node. Its methods are named apart
// from the model's per-node questions (Model.PoolOf, NodeGPUs, PoolNodes,
// PoolCapacity, ProfileCapacity), which internal/codeshape keeps render
// and audit from calling.

import (
	"slices"

	"github.com/accelc/accelc/pkg/inventory"
)

// Placed is a model placed on an inventory (Model.Place). It is read-only
// once made, safe to share between goroutines; the inventory must not
// change under it.
type Placed struct {
	// Model and Inventory are what was placed.
	Model     *Model
	Inventory *inventory.Inventory

	// listed is the pool that lists each node by name (the first in
	// NodePools' order that does); whole the pool that takes every other
	// node of a type (the last that does): Model.PoolOf's rule, as two maps.
	listed map[string]*NodePool
	whole  map[string]*NodePool
	// members are each pool's nodes, byType each type's, as places in
	// Inventory.Nodes, in its order: kept as places, not pointers, so
	// that a placed cluster made again for a changed node
	// (Placed.Replaced) shares the lists that node is not in.
	members map[*NodePool][]int32
	byType  map[string][]int32
	// typeGPUs are each type's GPUs (GPUs over its nodes).
	typeGPUs map[string]int
	// fleet is the model placed on FleetInventory: pl itself but on a
	// MultiKueue manager whose workers' nodes were read.
	fleet *Placed
}

// Place lays the model over inv: each node's pool and GPUs, each pool's
// and type's nodes, resolved in one pass over the nodes; on a MultiKueue
// manager that read its workers' nodes, their fleet's too (Fleet). A nil
// inv is an empty inventory.
func (m *Model) Place(inv *inventory.Inventory) *Placed {
	if inv == nil {
		inv = &inventory.Inventory{}
	}
	pl := m.place(inv)
	if fleet := m.FleetInventory(inv); fleet != inv {
		pl.fleet = m.place(fleet)
	}
	return pl
}

// Fleet is the model placed on FleetInventory: on a manager whose
// workers' nodes were read, its nodes and theirs, which its queues hold
// quota of; pl itself elsewhere.
func (pl *Placed) Fleet() *Placed {
	if pl.fleet != nil {
		return pl.fleet
	}
	return pl
}

// place is Place of one inventory.
func (m *Model) place(inv *inventory.Inventory) *Placed {
	pl := &Placed{
		Model: m, Inventory: inv,
		listed: map[string]*NodePool{}, whole: map[string]*NodePool{},
		members:  map[*NodePool][]int32{},
		byType:   map[string][]int32{},
		typeGPUs: map[string]int{},
	}
	for _, p := range m.NodePools {
		for _, name := range p.Nodes {
			if _, ok := pl.listed[name]; !ok {
				pl.listed[name] = p
			}
		}
		if len(p.Nodes) == 0 {
			pl.whole[p.AcceleratorType] = p
		}
	}
	for i := range inv.Nodes {
		n := &inv.Nodes[i]
		pl.byType[n.AcceleratorType] = append(pl.byType[n.AcceleratorType], int32(i))
		pool := pl.NodePool(n)
		if pool != nil && pool.AcceleratorType == n.AcceleratorType {
			pl.members[pool] = append(pl.members[pool], int32(i))
		}
		if g, ok := nodeGPUs(n, pool); ok {
			pl.typeGPUs[n.AcceleratorType] += g
		}
	}
	return pl
}

// NodePool is the pool a node is in (Model.PoolOf of its name and type):
// the one that lists it, else the one that takes every node of its type;
// nil for a node in none.
func (pl *Placed) NodePool(n *inventory.Node) *NodePool {
	return pl.poolOf(n.Name, n.AcceleratorType)
}

func (pl *Placed) poolOf(name, acceleratorType string) *NodePool {
	if p, ok := pl.listed[name]; ok {
		return p
	}
	return pl.whole[acceleratorType]
}

// GPUs is how many GPUs a node has (Model.NodeGPUs): its count, but
// under MIG single its slices over the slices per GPU of its MIG config;
// ok is false for such a node no config cuts.
func (pl *Placed) GPUs(n *inventory.Node) (gpus int, ok bool) {
	return nodeGPUs(n, pl.NodePool(n))
}

// nodeGPUs is GPUs of a node in pool.
func nodeGPUs(n *inventory.Node, pool *NodePool) (int, bool) {
	if n.Sharing != inventory.MIGSingle {
		return n.Count, true
	}
	if pool == nil || pool.Sharing != ShareMIG {
		return 0, false
	}
	total := 0
	for _, k := range pool.Layout {
		total += k
	}
	if total == 0 {
		return 0, false
	}
	return n.Count / total, true
}

// TypeGPUs counts a type's GPUs: GPUs over its nodes, a node no
// config cuts adding none.
func (pl *Placed) TypeGPUs(id string) int { return pl.typeGPUs[id] }

// ByType are a type's nodes, in the inventory's order.
func (pl *Placed) ByType(id string) []*inventory.Node { return pl.nodes(pl.byType[id]) }

// Members are the inventory's nodes in a pool, in its order.
func (pl *Placed) Members(pool *NodePool) []*inventory.Node { return pl.nodes(pl.members[pool]) }

// nodes are the inventory's nodes at places.
func (pl *Placed) nodes(places []int32) []*inventory.Node {
	if len(places) == 0 {
		return nil
	}
	out := make([]*inventory.Node, len(places))
	for i, at := range places {
		out[i] = &pl.Inventory.Nodes[at]
	}
	return out
}

// FlavorNodes are the nodes of a quota key's flavor: a pool's (or MIG
// config's), or for a type its nodes outside every pool.
func (pl *Placed) FlavorNodes(id string) []*inventory.Node {
	if pool, ok := pl.Model.Pool(id); ok {
		return pl.Members(pool)
	}
	var nodes []*inventory.Node
	for _, n := range pl.ByType(id) {
		if pl.poolOf(n.Name, id) == nil {
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// Reachable reports whether a profile's pods can be scheduled on a node
// as far as pools go: the node is in no pool, or its pool has no taint,
// or the profile tolerates it.
func (pl *Placed) Reachable(p *Profile, n *inventory.Node) bool {
	pool := pl.NodePool(n)
	return pool == nil || pool.Taint == nil || p.Tolerates(*pool.Taint)
}

// SharedCapacity counts what a profile over shared GPUs can request on
// the inventory: MIG slices of its profile in its configs' nodes, or
// replicas in its pools. ok is false for a whole-GPU profile. perPool is
// each of p.Pools' part, in order.
func (pl *Placed) SharedCapacity(p *Profile) (total Capacity, perPool []Capacity, ok bool) {
	if len(p.Pools) == 0 {
		return Capacity{}, nil, false
	}
	for _, name := range p.Pools {
		var pc Capacity
		if pool, ok := pl.Model.Pool(name); ok {
			pc = pl.Capacity(pool, p.MIG)
		}
		perPool = append(perPool, pc)
		total.Nodes += pc.Nodes
		total.GPUs += pc.GPUs
		total.Devices += pc.Devices
		total.Available += pc.Available
		total.Pending += pc.Pending
	}
	return total, perPool, true
}

// Capacity counts a pool's devices: for MIG, the slices of profile
// (every profile of the layout when profile is ""). A node already
// reconfigured is counted as it reports itself; one not yet, from the
// config and its physical GPUs.
func (pl *Placed) Capacity(pool *NodePool, profile string) Capacity {
	var c Capacity
	usage := pl.Inventory.UsageKnown()
	for _, n := range pl.Members(pool) {
		gpus, devices, applied := nodeDevices(pool, profile, n)
		c.Nodes++
		c.GPUs += gpus
		c.Devices += devices
		if !applied {
			c.Pending += devices
		}
		if n.Available() {
			free := devices
			if usage && (pool.Sharing != ShareMIG || profile == "" || len(pool.Layout) == 1) {
				free = max(devices-n.InUse, 0)
			}
			c.Available += free
		}
	}
	return c
}

// nodeDevices counts a pool's node: its GPUs, its devices of profile
// (Capacity), and whether the node already reports them (applied)
// rather than their being computed from the config.
func nodeDevices(pool *NodePool, profile string, n *inventory.Node) (gpus, devices int, applied bool) {
	if pool.Sharing != ShareMIG {
		gpus = n.Count
		if n.Sharing == inventory.TimeSliced || n.Sharing == inventory.MPS {
			return gpus, n.Allocatable, true
		}
		return gpus, gpus * pool.Replicas, false
	}
	perGPU, total := 0, 0
	for name, k := range pool.Layout {
		if profile == "" || name == profile {
			perGPU += k
		}
		total += k
	}
	if len(n.MIGDevices) == 0 {
		return n.Count, n.Count * perGPU, false
	}
	for name, k := range n.MIGDevices {
		if profile == "" || name == profile {
			devices += k
		}
	}
	gpus = n.Count
	if n.Sharing == inventory.MIGSingle && total > 0 {
		// GFD counts MIG devices, not GPUs, under single.
		gpus = n.Count / total
	}
	return gpus, devices, true
}

// QueueTypes are the accelerator types of the teams' queues for a
// profile, in order, each once: the union of their flavors' types.
func (m *Model) QueueTypes(p *Profile, teams ...*Team) []string {
	var out []string
	for _, t := range teams {
		for _, id := range m.QueueFlavors(t, p) {
			if typ := m.KeyType(id); !slices.Contains(out, typ) {
				out = append(out, typ)
			}
		}
	}
	return out
}
