package compile

// Checking the GPU sharing settings: MIG configs and time-slicing or MPS
// pools.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/accelc/accelc/pkg/mig"
)

// checkMIG checks each MIG config against its type's geometry, the
// strategy, and the other configs' nodes.
func checkMIG(m *Model) []Diagnostic {
	if m.Cluster.MIG == nil {
		return nil
	}
	geo, err := mig.Builtin()
	if err != nil {
		return []Diagnostic{{Msg: err.Error()}}
	}
	var out []Diagnostic
	wholeType := map[string]string{} // type → config without a node list
	nodeConfig := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(m.Cluster.MIG.Configs)) {
		c := m.Cluster.MIG.Configs[name]
		config := m.root().Key("cluster").Key("mig").Key("configs").Key(name)
		if _, ok := m.Catalog.Get(c.AcceleratorType); !ok {
			out = append(out, unknownType(m.Catalog, config.Key("acceleratorType"), c.AcceleratorType))
			continue
		}
		g, ok := geo[c.AcceleratorType]
		if !ok {
			out = append(out, Diagnostic{Path: config.At(config.Key("acceleratorType")), Msg: fmt.Sprintf(
				"%s has no MIG (MIG-capable types: %s): share it with time-slicing instead", c.AcceleratorType, strings.Join(slices.Sorted(maps.Keys(geo)), ", "))})
			continue
		}
		if _, err := g.Place(c.Layout); err != nil {
			out = append(out, Diagnostic{Path: config.Key("layout"), Msg: err.Error()})
		}
		if m.Cluster.MIG.Strategy == "single" {
			used := 0
			for _, n := range c.Layout {
				if n > 0 {
					used++
				}
			}
			if used > 1 {
				out = append(out, Diagnostic{Path: config.Key("layout"), Msg: fmt.Sprintf(
					"%d profiles, but the MIG strategy is single (one profile per GPU): set cluster.mig.strategy: \"mixed\"", used)})
			}
		}
		if len(c.Nodes) == 0 {
			if other, dup := wholeType[c.AcceleratorType]; dup {
				out = append(out, Diagnostic{Path: config, Msg: fmt.Sprintf(
					"config %s already takes every %s node: list nodes in one of them", other, c.AcceleratorType)})
			}
			wholeType[c.AcceleratorType] = name
		}
		for _, node := range c.Nodes {
			if other, dup := nodeConfig[node]; dup {
				out = append(out, Diagnostic{Path: config.Key("nodes"), Msg: fmt.Sprintf(
					"node %s is already in config %s: a node takes one MIG config", node, other)})
			}
			nodeConfig[node] = name
		}
	}
	return out
}

// checkSharing checks the pools' types and that no node is in two pools,
// or in a pool and a MIG config (the device plugin's MPS does not take
// MIG devices, and one sharing config applies per node).
func checkSharing(m *Model) []Diagnostic {
	var out []Diagnostic
	wholeType := map[string]string{}
	nodePool := map[string]string{}
	migTypes := map[string]string{}
	if m.Cluster.MIG != nil {
		for name, c := range m.Cluster.MIG.Configs {
			if len(c.Nodes) == 0 {
				migTypes[c.AcceleratorType] = name
			}
			for _, n := range c.Nodes {
				nodePool[n] = "MIG config " + name
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.Cluster.Sharing)) {
		p := m.Cluster.Sharing[name]
		pool := m.root().Key("cluster").Key("sharing").Key(name)
		if _, ok := m.Catalog.Get(p.AcceleratorType); !ok {
			out = append(out, unknownType(m.Catalog, pool.Key("acceleratorType"), p.AcceleratorType))
			continue
		}
		if len(p.Nodes) == 0 {
			if other, dup := wholeType[p.AcceleratorType]; dup {
				out = append(out, Diagnostic{Path: pool, Msg: fmt.Sprintf("pool %s already takes every %s node: list nodes in one of them", other, p.AcceleratorType)})
			}
			if cfg, dup := migTypes[p.AcceleratorType]; dup {
				out = append(out, Diagnostic{Path: pool, Msg: fmt.Sprintf("MIG config %s already takes every %s node: a node is either MIG-partitioned or shared; list nodes", cfg, p.AcceleratorType)})
			}
			wholeType[p.AcceleratorType] = name
		}
		if p.Strategy == "mps" && m.Cluster.MIGStrategy() == "mixed" {
			out = append(out, Diagnostic{Path: pool.At(pool.Key("strategy")), Msg: "MPS under MIG strategy mixed (the default once cluster.mig has configs): the NVIDIA device plugin refuses to start (\"using --mig-strategy=mixed is not supported with MPS\"); share the pool with time-slicing, or set cluster.mig.strategy: \"single\""})
		}
		for _, n := range p.Nodes {
			if other, dup := nodePool[n]; dup {
				out = append(out, Diagnostic{Path: pool.Key("nodes").At(pool), Msg: fmt.Sprintf("node %s is already in %s: a node has one sharing setup", n, other)})
			}
			nodePool[n] = "pool " + name
		}
	}
	return out
}
