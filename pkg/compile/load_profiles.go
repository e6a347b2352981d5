package compile

// Resolving and checking the hardware profiles: their types, resource,
// selector, priority, ranges and retirement.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// checkProfiles resolves each profile, in name order: its types against
// the catalog (a pool profile's from its pools), the resource its pods
// request, its sharing (MIG slice or pool), priority class and ranges.
func (raw *rawConfig) checkProfiles(m *Model) []Diagnostic {
	var diags []Diagnostic
	for _, name := range slices.Sorted(maps.Keys(raw.Profiles)) {
		p := raw.Profiles[name]
		p.path = m.root().Key("profiles").Key(name)
		resourceSet := p.ResourceName != ""
		diags = append(diags, resolveProfileTypes(m, &p)...)
		diags = append(diags, resolveProfileResource(&p)...)
		diags = append(diags, checkProfileSharing(m, &p, resourceSet)...)
		diags = append(diags, checkProfileSelector(m, &p)...)
		diags = append(diags, checkProfilePriority(m, &p)...)
		diags = append(diags, checkRanges(&p)...)
		m.Profiles = append(m.Profiles, p)
	}
	for i := range m.Profiles {
		diags = append(diags, checkRetirement(m, &m.Profiles[i])...)
	}
	return diags
}

// checkRetirement checks that a retired profile's replacement is a
// profile new pods may use.
func checkRetirement(m *Model, p *Profile) []Diagnostic {
	if p.Retired == nil || p.Retired.Replacement == "" {
		return nil
	}
	at := p.path.Key("retired").Key("replacement")
	name := p.Retired.Replacement
	r := m.Profile(name)
	switch {
	case name == p.Name:
		return []Diagnostic{{Path: at, Msg: "a profile cannot replace itself: name the profile its users move to"}}
	case r == nil:
		return []Diagnostic{{Path: at, Msg: fmt.Sprintf("%s is not a profile (%s): name the one its users move to", name, strings.Join(profileNames(m), ", "))}}
	case !r.Offered():
		return []Diagnostic{{Path: at, Msg: fmt.Sprintf("%s takes no new pods itself (disabled or retired): name a profile in service", name)}}
	}
	return nil
}

// resolveProfileTypes looks up a profile's types in the catalog, in order
// of preference, into its Classes. A pool profile that names no type
// takes its pools' types.
func resolveProfileTypes(m *Model, p *Profile) []Diagnostic {
	var diags []Diagnostic
	derived := p.Pool != "" && len(p.AcceleratorTypes) == 0
	if derived {
		p.AcceleratorTypes = poolTypes(m.Cluster, p)
	}
	seen := map[string]bool{}
	for i, id := range p.AcceleratorTypes {
		tp := p.path.Key("acceleratorTypes").Index(i)
		if derived {
			tp = tp.At(p.path.Key("pool"))
		}
		p.types = append(p.types, tp)
		c, ok := m.Catalog.Get(id)
		switch {
		case !ok:
			diags = append(diags, unknownType(m.Catalog, tp, id))
		case seen[id]:
			diags = append(diags, Diagnostic{Path: tp, Msg: fmt.Sprintf("%s is listed twice: list each type once, in order of preference", id)})
		default:
			p.Classes = append(p.Classes, c)
		}
		seen[id] = true
	}
	return diags
}

// resolveProfileResource settles the extended resource a profile's pods
// request: its types' (one, for all of them), or another of their
// vendor's that the profile names: a MIG slice (nvidia.com/mig-1g.10gb)
// or a renamed shared GPU (nvidia.com/gpu.shared). A generic profile
// requests nvidia.com/gpu unless it names one.
func resolveProfileResource(p *Profile) []Diagnostic {
	if len(p.Classes) == 0 {
		if p.ResourceName == "" {
			p.ResourceName = "nvidia.com/gpu"
		}
		return nil
	}
	var diags []Diagnostic
	resources := map[string]bool{}
	for _, c := range p.Classes {
		resources[c.ResourceName] = true
	}
	if len(resources) > 1 {
		diags = append(diags, Diagnostic{Path: p.path, Msg: fmt.Sprintf(
			"its types are requested through different resources (%s); a pod asks for one: split the profile per vendor",
			strings.Join(slices.Sorted(maps.Keys(resources)), ", "))})
	}
	base := p.Classes[0].ResourceName
	if p.ResourceName != "" && !resources[p.ResourceName] && !sameDomain(p.ResourceName, base) {
		diags = append(diags, Diagnostic{Path: p.path.Key("resourceName"), Msg: fmt.Sprintf(
			"%s is not a resource of its types' vendor (%s): name one under %s, or drop it",
			p.ResourceName, base, base[:strings.Index(base, "/")+1])})
	}
	if p.ResourceName == "" {
		p.ResourceName = base
	}
	return diags
}

// checkProfileSelector checks that a profile's nodeSelector does not
// set the labels accelc sets on its HardwareProfile to something else:
// the type label of a single-type profile (not one of DRA: its claim
// places it), the pool label of a profile of one pool.
func checkProfileSelector(m *Model, p *Profile) []Diagnostic {
	var diags []Diagnostic
	at := p.path.Key("nodeSelector")
	if label := m.Cluster.TypeLabel(); len(p.AcceleratorTypes) == 1 && p.DRA == nil {
		if v, ok := p.NodeSelector[label]; ok && v != p.AcceleratorTypes[0] {
			diags = append(diags, Diagnostic{Path: at.Key(label), Msg: fmt.Sprintf(
				"sets %s=%s but the profile's type is %s: drop it from nodeSelector (accelc selects the type itself)", label, v, p.AcceleratorTypes[0])})
		}
	}
	if label := m.Cluster.PoolLabel(); len(p.Pools) == 1 {
		if v, ok := p.NodeSelector[label]; ok && v != p.Pools[0] {
			diags = append(diags, Diagnostic{Path: at.Key(label), Msg: fmt.Sprintf(
				"sets %s=%s but the profile's pool is %s: drop it from nodeSelector (accelc selects the pool itself)", label, v, p.Pools[0])})
		}
	}
	return diags
}

// checkProfilePriority checks that a profile's priority class is one the
// cluster declares.
func checkProfilePriority(m *Model, p *Profile) []Diagnostic {
	pc := p.PriorityClassName
	if pc == "" {
		return nil
	}
	if _, ok := m.Cluster.PriorityClasses[pc]; ok {
		return nil
	}
	return []Diagnostic{{Path: p.path.Key("priorityClassName"), Msg: m.undeclaredPriorityClass(pc) +
		"; the mutation sets the class's value with its name, as the Priority admission plugin requires"}}
}

// undeclaredPriorityClass says that name is not one of the cluster's
// priority classes, and which are.
func (m *Model) undeclaredPriorityClass(name string) string {
	return fmt.Sprintf("%s is not one of cluster.priorityClasses (%s): declare it there",
		name, orNone(slices.Sorted(maps.Keys(m.Cluster.PriorityClasses))))
}

// checkRanges checks that each min <= default <= max of a profile.
func checkRanges(p *Profile) []Diagnostic {
	var out []Diagnostic
	check := func(field string, min, def resource.Quantity, max *resource.Quantity) {
		at := p.path.Key(field)
		if def.Cmp(min) < 0 {
			out = append(out, Diagnostic{Path: at.Key("default"), Msg: fmt.Sprintf("%s is below min %s: raise default or lower min", def.String(), min.String())})
		}
		if max != nil && max.Cmp(def) < 0 {
			out = append(out, Diagnostic{Path: at.Key("max"), Msg: fmt.Sprintf("%s is below default %s: raise max or lower default", max.String(), def.String())})
		}
	}
	q := func(n int) resource.Quantity { return *resource.NewQuantity(int64(n), resource.DecimalSI) }
	var gmax *resource.Quantity
	if p.GPU.Max != nil {
		v := q(*p.GPU.Max)
		gmax = &v
	}
	check("gpu", q(p.GPU.Min), q(p.GPU.Default), gmax)
	for _, r := range []struct {
		field string
		rng   Range
	}{{"cpu", p.CPU}, {"memory", p.Memory}} {
		min, err1 := r.rng.Min.Parse()
		def, err2 := r.rng.Default.Parse()
		var max *resource.Quantity
		var err3 error
		if r.rng.Max != nil {
			var v resource.Quantity
			v, err3 = r.rng.Max.Parse()
			max = &v
		}
		if err := errors.Join(err1, err2, err3); err != nil {
			out = append(out, Diagnostic{Path: p.path.Key(r.field), Msg: err.Error()})
			continue
		}
		check(r.field, min, def, max)
	}
	return out
}

// sameDomain reports whether two extended resources share a vendor
// domain (the part before the slash).
func sameDomain(a, b string) bool {
	i, j := strings.Index(a, "/"), strings.Index(b, "/")
	return i > 0 && j > 0 && a[:i] == b[:j]
}

func profileNames(m *Model) []string {
	names := make([]string, len(m.Profiles))
	for i := range m.Profiles {
		names[i] = m.Profiles[i].Name
	}
	return names
}
