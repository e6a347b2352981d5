package compile

// Checking a model against an inventory (Model.Check): quotas the nodes
// cannot hold, whole-GPU profiles with no whole GPU, node stages.

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/accelc/accelc/pkg/inventory"
)

// CheckConfiguration is what Check says of the configuration alone,
// with no node to read: a profile whose node pools are not reconfigured
// yet, how a cluster before 1.36 labels and places what ODH's dashboard
// writes. vet says it without an inventory too.
func (m *Model) CheckConfiguration() []Diagnostic {
	return slices.Concat(m.checkNodeStages(), m.checkKubernetesVersion())
}

// Check compares the model with a classified inventory and returns
// warnings, things that render fine but will not behave as the admin
// likely expects, and errors: a pool or MIG config that targets no node.
func (m *Model) Check(inv *inventory.Inventory) []Diagnostic {
	// What the cluster's own nodes advertise and which namespaces it
	// has are the cluster's, not its workers'.
	out := slices.Concat(m.CheckWorkerNodes(), m.checkNodeResources(inv), m.checkExclusionsExist(inv))
	inv = m.FleetInventory(inv) // a MultiKueue manager's capacity is its workers'
	warn := func(at Path, format string, args ...any) {
		out = append(out, Diagnostic{Severity: Warning, Path: at, Msg: fmt.Sprintf(format, args...)})
	}
	// inv.Problems are the inventory reader's to report (once, with the
	// file they are in): the CLI prints them as it reads.
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
				warn(p.path.At(p.types[j]), "no node in the inventory has %s (0 available); the profile's pods stay Pending until one joins", id)
			}
		}
		if p.GPU.Max != nil && len(p.AcceleratorTypes) > 0 {
			biggest := 0
			for _, id := range p.AcceleratorTypes {
				biggest = max(biggest, maxPerNode[id])
			}
			if biggest > 0 && *p.GPU.Max > biggest {
				warn(p.path, "gpu.max is %d but no node of its types has more than %d allocatable; larger requests never schedule", *p.GPU.Max, biggest)
			}
		}
	}
	out = append(out, m.checkTypeLabelling(inv)...)
	out = append(out, m.checkQuotas(inv)...)
	out = append(out, m.checkPoolNodes(inv)...)
	out = append(out, m.checkWholeGPUProfiles(inv)...)
	out = append(out, m.checkScaling(inv)...)
	out = append(out, m.CheckConfiguration()...)
	known := map[string]bool{}
	for i := range inv.Nodes {
		known[inv.Nodes[i].Name] = true
	}
	for _, node := range slices.Sorted(maps.Keys(m.Pins)) {
		if !known[node] {
			warn(m.pins[node], "no such accelerator node in the inventory; the pin only takes effect when it joins")
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
		warn(Path{}, "inventory: %d node(s) have accelerators of unknown type (%s): pin them in cluster.nodes or fix their GPU Feature Discovery labels; `accelc inventory show` says why",
			len(unknown), strings.Join(shown, ", "))
	}
	return out
}

// checkQuotas compares the teams' quotas with what the inventory has of
// each type: a quota for a type no node has, and quotas that add up to
// more than the cluster's devices (legal: queues then compete, but rarely
// what an admin meant). A type with Karpenter NodePools has nodes on
// demand: no node yet is no warning, and quotas over its nodes now plus
// what its pools may hold are checkAutoscaling's error.
func (m *Model) checkQuotas(inv *inventory.Inventory) []Diagnostic {
	var out []Diagnostic
	capacity := map[string]int{}
	for i := range inv.Nodes {
		if n := &inv.Nodes[i]; n.Available() {
			capacity[n.AcceleratorType] += n.Allocatable
		}
	}
	grows := map[string]bool{}
	for _, p := range m.ScalePools() {
		grows[p.AcceleratorType] = true
	}
	// A pool's quota is of its devices: slices or replicas.
	// A MIG config's quota per profile is of each profile's slices:
	// "<config> <profile>".
	pl := m.Place(inv)
	for _, pool := range m.NodePools {
		c := pl.Capacity(pool, "")
		capacity[pool.Name] = c.Available
		for prof := range pool.Layout {
			capacity[pool.Name+" "+prof] = pl.Capacity(pool, prof).Available
		}
	}
	total := map[string]int{}
	var parts = map[string][]string{}
	for i := range m.Teams {
		t := &m.Teams[i]
		for _, id := range slices.Sorted(maps.Keys(t.Quota)) {
			quotas := map[string]int{id: t.Quota[id]}
			if per, ok := t.SliceQuota[id]; ok {
				quotas = map[string]int{}
				for prof, n := range per {
					quotas[id+" "+prof] = n
				}
			}
			for _, key := range slices.Sorted(maps.Keys(quotas)) {
				q := quotas[key]
				total[key] += q
				parts[key] = append(parts[key], fmt.Sprintf("%s %d", t.Name, q))
				if capacity[key] == 0 && q > 0 && !grows[key] {
					quota := t.path.Key("quota")
					out = append(out, Diagnostic{Severity: Warning, Path: quota.At(quota.Key(id)), Msg: fmt.Sprintf(
						"%d × %s, but no node in the inventory has one: the quota admits nothing until one joins", q, key)})
				}
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(total)) {
		if c := capacity[id]; c > 0 && !grows[id] && total[id] > c {
			out = append(out, Diagnostic{Severity: Warning, Path: m.root().Key("teams"), Msg: fmt.Sprintf(
				"quotas for %s add up to %d (%s) but the cluster has %d allocatable: teams will wait on each other for the difference",
				id, total[id], strings.Join(parts[id], " + "), c)})
		}
	}
	return out
}

// checkWholeGPUProfiles warns about profiles of whole GPUs whose type is
// shared: where a pool has no taint, their pods may be handed a replica or
// a slice; where every node of the type is in pools they do not tolerate,
// they never schedule.
func (m *Model) checkWholeGPUProfiles(inv *inventory.Inventory) []Diagnostic {
	var out []Diagnostic
	for i := range m.Profiles {
		p := &m.Profiles[i]
		if len(p.Pools) > 0 || p.Generic() {
			continue
		}
		for _, id := range p.AcceleratorTypes {
			var untainted, closed []string
			open := 0
			for _, n := range inv.ByType(id) {
				pool := m.PoolOf(n.Name, id)
				switch {
				case pool == nil:
					open++
				case pool.Taint == nil:
					open++
					untainted = appendOnce(untainted, pool.Name)
				case p.Tolerates(*pool.Taint):
					open++
				default:
					closed = appendOnce(closed, pool.Name)
				}
			}
			sort.Strings(untainted)
			sort.Strings(closed)
			if len(untainted) > 0 {
				out = append(out, Diagnostic{Severity: Warning, Path: p.path, Msg: fmt.Sprintf(
					"%s nodes of pool %s have no taint (taint: \"none\"), so the profile's pods may be handed a shared replica or a MIG slice there, not a whole GPU: give the pool a taint",
					id, strings.Join(untainted, ", "))})
			}
			if open == 0 && len(closed) > 0 {
				out = append(out, Diagnostic{Severity: Warning, Path: p.path, Msg: fmt.Sprintf(
					"every %s node is in pool %s, whose taint the profile does not tolerate: its pods stay Pending; target the pool (pool: or mig:) instead",
					id, strings.Join(closed, ", "))})
			}
		}
	}
	return out
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// checkNodeStages warns about the offered profiles (enabled, not
// retired) whose every pool or MIG config is held back at dryrun or warn:
// their nodes are not labelled, cut or shared for them yet, so the
// profile's pods (which select the pool label) find no node until one of
// them moves to deny.
func (m *Model) checkNodeStages() []Diagnostic {
	var out []Diagnostic
	for i := range m.Profiles {
		p := &m.Profiles[i]
		if !p.Offered() || len(p.Pools) == 0 {
			continue
		}
		var held []*NodePool
		for _, name := range p.Pools {
			if pool, ok := m.Pool(name); ok && !pool.Reconfigured() {
				held = append(held, pool)
			}
		}
		if len(held) < len(p.Pools) {
			continue
		}
		pool := held[0]
		what, state := "pool", "its nodes do not share their GPUs yet"
		if pool.Sharing == ShareMIG {
			what, state = "MIG config", "its nodes are not cut into "+p.MIG+" slices yet"
		}
		msg := fmt.Sprintf("its %s %s is at node stage %s (%s): %s, so the profile's pods find no node; `accelc audit` lists the nodes the change would reconfigure and the pods it would evict, then set %s.enforcement: \"deny\"",
			what, pool.Name, pool.Stage, pool.StageFrom, state, pool.Setting())
		if len(held) > 1 {
			msg = fmt.Sprintf("none of its pools (%s) is at node stage deny: their nodes are not reconfigured yet, so the profile's pods find no node; `accelc audit` lists the nodes the change would reconfigure and the pods it would evict, then set a pool's enforcement: \"deny\"",
				strings.Join(p.Pools, ", "))
		}
		out = append(out, Diagnostic{Severity: Warning, Path: p.path, Msg: msg})
	}
	return out
}
