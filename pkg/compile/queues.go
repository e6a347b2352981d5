package compile

// Queues: whether the cluster uses Kueue, the flavors and quotas of a
// team's queue for a profile, the teams of a profile, and Kueue's DRA
// device class mappings.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/accelc/accelc/pkg/mig"
)

// UsesKueue reports whether the cluster's team quotas are Kueue's: its
// quotas are "kueue" and some team has one. Then profiles schedule through
// Kueue's queues (HardwareProfile scheduling type Queue); otherwise by
// node selector and tolerations (type Node).
func (m *Model) UsesKueue() bool {
	if m.Cluster.Quotas != "kueue" {
		return false
	}
	for i := range m.Teams {
		if len(m.Teams[i].Quota) > 0 {
			return true
		}
	}
	return false
}

// QueueFlavors are the quota keys (accelerator types, or pools and MIG
// configs) a team's queue for a profile tries, in the profile's order:
// the profile's pools, or its types, or for a generic profile the team's
// types, each that the team has a quota for and whose devices are the
// resource the profile's pods request. Empty: the team's quota covers
// none of the profile's pods, which Kueue would leave pending.
func (m *Model) QueueFlavors(t *Team, p *Profile) []string {
	var keys []string
	switch {
	case len(p.Pools) > 0:
		keys = p.Pools
	case p.Generic():
		keys = t.AcceleratorTypes
	default:
		keys = p.AcceleratorTypes
	}
	var out []string
	for _, id := range keys {
		if _, ok := m.KeyQuotas(t, id)[p.ResourceName]; ok {
			out = append(out, id)
		}
	}
	return out
}

// KeyQuotas is a team's quota of a key per resource its devices are
// requested by: one resource for a type, a pool, or a MIG config of one
// profile; one per profile (nvidia.com/mig-<profile>) for a MIG config
// whose quota is per profile. Nil when the team has no quota of the key.
func (m *Model) KeyQuotas(t *Team, id string) map[string]int {
	if per, ok := t.SliceQuota[id]; ok {
		out := map[string]int{}
		for prof, n := range per {
			out[mig.ResourceName(prof)] = n
		}
		return out
	}
	q, ok := t.Quota[id]
	if !ok {
		return nil
	}
	if res := m.QuotaResource(id); res != "" {
		return map[string]int{res: q}
	}
	return nil
}

// QuotaResource is the resource a quota key counts: a pool's or MIG
// config's devices (PoolResource), or a type's resource; "" for neither.
func (m *Model) QuotaResource(id string) string {
	if pool, ok := m.Pool(id); ok {
		return poolResource(m, pool)
	}
	if c, ok := m.Catalog.Get(id); ok {
		return c.ResourceName
	}
	return ""
}

// QueueTeams are the teams with a LocalQueue for the profile: those with
// namespaces and the right to use it (checkQueueCoverage makes sure their
// quotas cover it). Nil when the cluster does not use Kueue, or for a
// disabled profile.
func (m *Model) QueueTeams(p *Profile) []*Team {
	// A DRA profile whose claims Kueue cannot count schedules by node.
	if !m.UsesKueue() || !p.Enabled || (p.DRA != nil && !m.KueueCountsClaims(p)) {
		return nil
	}
	var out []*Team
	for i := range m.Teams {
		t := &m.Teams[i]
		if len(t.Namespaces) > 0 && t.MayUse(p) {
			out = append(out, t)
		}
	}
	return out
}

// checkQueueCoverage reports, where profiles schedule through Kueue, each
// enabled profile a team may use whose pods the team's quota does not
// cover: Open Data Hub puts them in the profile's LocalQueue, whose
// ClusterQueue would have no flavor of their resource, and Kueue would
// leave them pending for ever.
func checkQueueCoverage(m *Model) []Diagnostic {
	var out []Diagnostic
	if !m.UsesKueue() {
		return nil
	}
	// Each team's quota is a Cohort named after the team; a shared
	// cohort of the same name would be that Cohort, and hold the team's
	// quota for the others.
	for i := range m.Teams {
		t := &m.Teams[i]
		if t.Cohort == "" {
			continue
		}
		if other := m.team(t.Cohort); other != nil && len(other.Quota) > 0 {
			out = append(out, Diagnostic{Path: t.path.Key("cohort"), Msg: fmt.Sprintf(
				"cohort %s has the name of team %s, whose quota is Kueue Cohort %s: rename the cohort", t.Cohort, other.Name, t.Cohort)})
		}
	}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		teams := m.QueueTeams(p)
		if len(teams) > 0 && len(p.NodeSelector) > 0 {
			out = append(out, Diagnostic{Path: p.path.Key("nodeSelector"), Msg: fmt.Sprintf(
				"profile %s schedules through Kueue (HardwareProfile scheduling type Queue), which holds no node selector: Kueue's flavors select the nodes of its types and pools; drop nodeSelector", p.Name)})
		}
		for _, t := range teams {
			if len(m.QueueFlavors(t, p)) > 0 {
				continue
			}
			have := orNone(slices.Sorted(maps.Keys(t.Quota)))
			want := p.AcceleratorTypes
			kind := "types"
			switch {
			case len(p.Pools) > 0:
				want, kind = p.Pools, "pools"
			case p.Generic():
				want = t.AcceleratorTypes
			}
			at := p.path
			if j := slices.Index(t.Profiles, p.Name); j >= 0 {
				at = t.path.Key("profiles").Index(j)
			}
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"team %s may use profile %s, but its quota (%s) has none of the profile's %s (%s) for the %s its pods request: in LocalQueue %s Kueue would leave them pending; give the team a quota of one of them, or list the team's profiles without %s",
				t.Name, p.Name, have, kind, orNone(want), p.ResourceName, p.Name, p.Name)})
		}
	}
	return out
}

func (m *Model) team(name string) *Team {
	for i := range m.Teams {
		if m.Teams[i].Name == name {
			return &m.Teams[i]
		}
	}
	return nil
}

// KueueCountsClaims says Kueue admits a DRA profile's pods and charges
// their claims to the team's quota, as it charges the devices of the
// profile's resource: Kueue's DRA integration (beta, on by default since
// Kueue 0.18) counts the devices a claim template asks for under the
// resource its Configuration maps their DeviceClass to
// (resources.deviceClassMappings, KueueDeviceClassMappings). It counts a
// request for exactly a number of devices of one class; a request with
// firstAvailable (several classes, a multi-type DRA profile) makes the
// workload inadmissible, and an attribute class has no type whose quota
// it would draw on. Those profiles schedule by node, capped by the
// namespaces' ResourceQuotas on claims.
func (m *Model) KueueCountsClaims(p *Profile) bool {
	return p.DRA != nil && p.DRA.DeviceClass == "" && len(m.ProfileDeviceClasses(p)) == 1
}

// DeviceClassMapping is an entry of Kueue's resources.deviceClassMappings:
// the DeviceClasses whose devices count as Resource in quotas.
type DeviceClassMapping struct {
	Resource string
	Classes  []string
}

// Kueue's limits on resources.deviceClassMappings (its configuration
// validation).
const (
	MaxDeviceClassMappings     = 16
	MaxClassesPerDeviceMapping = 8
)

// KueueDeviceClassMappings map the DeviceClass of each DRA profile whose
// claims Kueue counts to the profile's resource (nvidia.com/gpu, a MIG
// slice's), so that a claimed device draws on the same team quota, in
// the same flavors, as one requested by the resource: one budget per
// type whichever way a pod asks. Sorted by resource; nil when none.
func (m *Model) KueueDeviceClassMappings() []DeviceClassMapping {
	if !m.UsesKueue() {
		return nil
	}
	byResource := map[string]map[string]bool{}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		if !p.Enabled || !m.KueueCountsClaims(p) {
			continue
		}
		if byResource[p.ResourceName] == nil {
			byResource[p.ResourceName] = map[string]bool{}
		}
		for _, c := range m.ProfileDeviceClasses(p) {
			byResource[p.ResourceName][c] = true
		}
	}
	var out []DeviceClassMapping
	for _, r := range slices.Sorted(maps.Keys(byResource)) {
		out = append(out, DeviceClassMapping{Resource: r, Classes: slices.Sorted(maps.Keys(byResource[r]))})
	}
	return out
}

// checkDeviceClassMappings reports mappings past Kueue's limits, which
// its manager would refuse to start with.
func checkDeviceClassMappings(m *Model) []Diagnostic {
	mappings := m.KueueDeviceClassMappings()
	var out []Diagnostic
	if len(mappings) > MaxDeviceClassMappings {
		out = append(out, Diagnostic{Path: m.root().Key("profiles"), Msg: fmt.Sprintf(
			"the DRA profiles Kueue queues claim devices of %d resources; Kueue maps at most %d (resources.deviceClassMappings): give some of them dra.deviceClass, or set cluster.quotas to \"resourcequota\"", len(mappings), MaxDeviceClassMappings)})
	}
	for _, mp := range mappings {
		if len(mp.Classes) > MaxClassesPerDeviceMapping {
			out = append(out, Diagnostic{Path: m.root().Key("profiles"), Msg: fmt.Sprintf(
				"the DRA profiles Kueue queues claim %s through %d DeviceClasses (%s); Kueue maps at most %d to one resource: hand some of those types out as %s instead of by claim", mp.Resource, len(mp.Classes), strings.Join(mp.Classes, ", "), MaxClassesPerDeviceMapping, mp.Resource)})
		}
	}
	return out
}
