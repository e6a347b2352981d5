package compile

// How Kueue shares quota: fair-share weights, cohorts, topologies, and
// the flavor and topology of each quota key.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// FairShare is a Kueue fair-sharing weight (a ClusterQueue's or Cohort's
// spec.fairSharing.weight).
type FairShare struct {
	Weight float64 `json:"weight"`
}

// Cohort is a declared cohort: a Kueue Cohort under its parent.
type Cohort struct {
	Parent    string     `json:"parent,omitempty"`
	FairShare *FairShare `json:"fairShare,omitempty"`
}

// Topology is an accelerator type's network levels, widest first: Kueue's
// Topology of the type's flavors.
type Topology struct {
	Levels []TopologyLevel `json:"levels"`
}

// TopologyLevel is one level: the name profiles call it and the node
// label whose value names its domains.
type TopologyLevel struct {
	Name      string `json:"name"`
	NodeLabel string `json:"nodeLabel"`
}

// ProfileTopology is the level (by name) a profile's pods are kept in:
// required or preferred.
type ProfileTopology struct {
	Required  string `json:"required,omitempty"`
	Preferred string `json:"preferred,omitempty"`
}

// Kueue's pod-set annotations that ask for topology-aware scheduling; the
// value is a level's node label (for the unconstrained one, "true").
const (
	RequiredTopologyAnnotation      = "kueue.x-k8s.io/podset-required-topology"
	PreferredTopologyAnnotation     = "kueue.x-k8s.io/podset-preferred-topology"
	UnconstrainedTopologyAnnotation = "kueue.x-k8s.io/podset-unconstrained-topology"
)

// TopologyAnnotations are the pod-set annotations of which Kueue's
// webhooks admit at most one on a pod or a pod template: a second is
// refused ("must not contain more than one topology annotation").
var TopologyAnnotations = []string{RequiredTopologyAnnotation, PreferredTopologyAnnotation, UnconstrainedTopologyAnnotation}

// weight is the weight as Kueue reads it; 1 for nil.
func (f *FairShare) weight() float64 {
	if f == nil {
		return 1
	}
	return f.Weight
}

// WeightString is the weight written as a Kubernetes quantity ("2",
// "500m"); 1 for nil.
func (f *FairShare) WeightString() string {
	w := f.weight()
	if w == float64(int64(w)) {
		return strconv.FormatInt(int64(w), 10)
	}
	return strconv.FormatInt(int64(w*1000+0.5), 10) + "m"
}

// FairSharing reports whether any team or cohort sets a fair-share weight:
// then Kueue's Configuration turns fair sharing on.
func (m *Model) FairSharing() bool {
	for i := range m.Teams {
		if m.Teams[i].FairShare != nil {
			return true
		}
	}
	for _, c := range m.Cluster.Cohorts {
		if c.FairShare != nil {
			return true
		}
	}
	return slices.ContainsFunc(m.Profiles, func(p Profile) bool { return p.FairShare != nil })
}

// KeyType is the accelerator type of a quota key: a pool's or MIG
// config's type, or the key itself.
func (m *Model) KeyType(id string) string {
	if pool, ok := m.Pool(id); ok {
		return pool.AcceleratorType
	}
	return id
}

// KeyTopology is the topology of a quota key's type, and the type; nil
// when the type has none.
func (m *Model) KeyTopology(id string) (string, *Topology) {
	typ := m.KeyType(id)
	if tp, ok := m.Cluster.Topology[typ]; ok {
		return typ, &tp
	}
	return typ, nil
}

// TopologyAnnotation is the pod-set annotation Kueue reads for a
// profile's topology, and its value (the level's node label); "" when
// the profile has none or its level is not found.
func (m *Model) TopologyAnnotation(p *Profile) (key, nodeLabel string) {
	if p.Topology == nil {
		return "", ""
	}
	key, level := RequiredTopologyAnnotation, p.Topology.Required
	if level == "" {
		key, level = PreferredTopologyAnnotation, p.Topology.Preferred
	}
	for _, id := range p.AcceleratorTypes {
		if tp, ok := m.Cluster.Topology[id]; ok {
			for _, l := range tp.Levels {
				if l.Name == level {
					return key, l.NodeLabel
				}
			}
		}
	}
	return "", ""
}

// checkCohorts reports a declared cohort whose parents loop back to it
// (Kueue stops admitting in every cohort of the loop), and one named after
// a team with a quota (that name is the team's Cohort).
func checkCohorts(m *Model) []Diagnostic {
	var out []Diagnostic
	at := m.root().Key("cluster").Key("cohorts")
	for _, name := range slices.Sorted(maps.Keys(m.Cluster.Cohorts)) {
		if t := m.team(name); t != nil && len(t.Quota) > 0 {
			out = append(out, Diagnostic{Path: at.Key(name), Msg: fmt.Sprintf(
				"cohort %s has the name of team %s, whose quota is Kueue Cohort %s: rename the cohort", name, name, name)})
		}
		chain := []string{name}
		for c := m.Cluster.Cohorts[name]; c.Parent != ""; c = m.Cluster.Cohorts[c.Parent] {
			if slices.Contains(chain, c.Parent) {
				out = append(out, Diagnostic{Path: at.Key(name).Key("parent"), Msg: fmt.Sprintf(
					"cohorts loop: %s → %s; Kueue stops admitting in every cohort of a loop: give one of them no parent", strings.Join(chain, " → "), c.Parent)})
				break
			}
			chain = append(chain, c.Parent)
		}
	}
	return out
}

// checkTopology reports topologies of unknown types, levels Kueue's
// Topology refuses (a repeated label, kubernetes.io/hostname other than
// last, a label that is not a label key), profiles whose topology level
// one of their types lacks, and queues that mix flavors with and without
// a topology: Kueue gives a pod that asks for a topology only flavors
// that have one, and one that does not only flavors that have none, so
// such a queue would silently drop half its flavors.
func checkTopology(m *Model) []Diagnostic {
	out := checkTopologyLevels(m)
	for i := range m.Profiles {
		out = append(out, checkProfileTopology(m, &m.Profiles[i])...)
	}
	return append(out, checkQueueTopology(m)...)
}

// checkTopologyLevels checks each type's topology: a type the catalog
// has, levels each named once and labelled by a distinct label key, the
// node (kubernetes.io/hostname) only as the last level.
func checkTopologyLevels(m *Model) []Diagnostic {
	var out []Diagnostic
	at := m.root().Key("cluster").Key("topology")
	for _, id := range slices.Sorted(maps.Keys(m.Cluster.Topology)) {
		if _, ok := m.Catalog.Get(id); !ok {
			out = append(out, unknownType(m.Catalog, at.Key(id), id))
			continue
		}
		levels := m.Cluster.Topology[id].Levels
		names, labels := map[string]bool{}, map[string]bool{}
		for i, l := range levels {
			lp := at.Key(id).Key("levels").Index(i)
			switch {
			case names[l.Name]:
				out = append(out, Diagnostic{Path: lp.Key("name"), Msg: fmt.Sprintf("level %s is named twice: name each level once", l.Name)})
			case labels[l.NodeLabel]:
				out = append(out, Diagnostic{Path: lp.Key("nodeLabel"), Msg: fmt.Sprintf("%s is the label of two levels: Kueue's Topology takes each once", l.NodeLabel)})
			case l.NodeLabel == "kubernetes.io/hostname" && i != len(levels)-1:
				out = append(out, Diagnostic{Path: lp.Key("nodeLabel"), Msg: "kubernetes.io/hostname is the node: Kueue takes it only as the last (narrowest) level; move it last"})
			}
			if errs := validation.IsQualifiedName(l.NodeLabel); len(errs) > 0 {
				out = append(out, Diagnostic{Path: lp.Key("nodeLabel"), Msg: fmt.Sprintf("%q is not a label key (%s)", l.NodeLabel, strings.Join(errs, "; "))})
			}
			names[l.Name], labels[l.NodeLabel] = true, true
		}
	}
	return out
}

// checkProfileTopology checks a profile's topology: one level, required
// or preferred, that every one of its types' topologies has, under the
// same node label.
func checkProfileTopology(m *Model, p *Profile) []Diagnostic {
	if p.Topology == nil {
		return nil
	}
	tp := p.path.Key("topology")
	level := p.Topology.Required
	switch {
	case p.Topology.Required != "" && p.Topology.Preferred != "":
		return []Diagnostic{{Path: tp, Msg: "a profile's topology is required or preferred, not both: keep one"}}
	case level == "":
		level = p.Topology.Preferred
		tp = tp.Key("preferred")
	default:
		tp = tp.Key("required")
	}
	if level == "" {
		return []Diagnostic{{Path: p.path.Key("topology"), Msg: "topology names no level: set required or preferred to a level of its types' cluster.topology"}}
	}
	if p.Generic() {
		return []Diagnostic{{Path: tp, Msg: "a generic profile has no types whose topology its level could be: list its acceleratorTypes"}}
	}
	var out []Diagnostic
	label := ""
	for _, id := range p.AcceleratorTypes {
		topo, ok := m.Cluster.Topology[id]
		if !ok {
			out = append(out, Diagnostic{Path: tp, Msg: fmt.Sprintf(
				"type %s has no cluster.topology, so Kueue could not keep the profile's pods in one %s: give %s a topology with level %s, or drop the profile's topology", id, level, id, level)})
			continue
		}
		j := slices.IndexFunc(topo.Levels, func(l TopologyLevel) bool { return l.Name == level })
		if j < 0 {
			out = append(out, Diagnostic{Path: tp, Msg: fmt.Sprintf("%s is not a level of %s's topology (%s)", level, id, levelNames(topo))})
			continue
		}
		switch nl := topo.Levels[j].NodeLabel; {
		case label == "":
			label = nl
		case label != nl:
			out = append(out, Diagnostic{Path: tp, Msg: fmt.Sprintf(
				"level %s is %s on one of the profile's types and %s on %s: a pod's annotation names one label; give the level the same label on all of them", level, label, nl, id)})
		}
	}
	return out
}

// checkQueueTopology checks, under Kueue, that no team's queue for a
// profile mixes flavors with a topology and without.
func checkQueueTopology(m *Model) []Diagnostic {
	if !m.UsesKueue() {
		return nil
	}
	var out []Diagnostic
	for i := range m.Profiles {
		p := &m.Profiles[i]
		for _, t := range m.QueueTeams(p) {
			var with, without []string
			for _, id := range m.QueueFlavors(t, p) {
				if _, topo := m.KeyTopology(id); topo != nil {
					with = append(with, id)
				} else {
					without = append(without, id)
				}
			}
			if len(with) > 0 && len(without) > 0 {
				out = append(out, Diagnostic{Path: p.path, Msg: fmt.Sprintf(
					"team %s's queue for profile %s mixes flavors with a topology (%s) and without (%s): Kueue gives a pod that asks for a topology only the former and one that does not only the latter; give every type of the profile a topology, or split the profile",
					t.Name, p.Name, strings.Join(with, ", "), strings.Join(without, ", "))})
			}
		}
	}
	return out
}

func levelNames(t Topology) string {
	var names []string
	for _, l := range t.Levels {
		names = append(names, l.Name)
	}
	return strings.Join(names, ", ")
}

// FairShareNotes say, per team of a cohort under fair sharing, what its
// weight does: how many idle devices of each type it may borrow from the
// other teams of its cohort, at its weight against theirs. vet --explain
// prints them.
func (m *Model) FairShareNotes() []Diagnostic {
	if !m.FairSharing() || !m.UsesKueue() {
		return nil
	}
	var out []Diagnostic
	for i := range m.Teams {
		t := &m.Teams[i]
		if t.Cohort == "" || len(t.Quota) == 0 {
			continue
		}
		var others []*Team
		for j := range m.Teams {
			if o := &m.Teams[j]; j != i && o.Cohort == t.Cohort && len(o.Quota) > 0 {
				others = append(others, o)
			}
		}
		var against []string
		for _, o := range others {
			against = append(against, fmt.Sprintf("%s's %s", o.Name, o.FairShare.WeightString()))
		}
		var borrow []string
		for _, id := range slices.Sorted(maps.Keys(t.Quota)) {
			if _, ok := t.SliceQuota[id]; ok {
				continue
			}
			idle := 0
			for _, o := range others {
				n := o.Quota[id]
				if l, ok := o.LendingLimit[id]; ok {
					n = min(n, l)
				}
				idle += n
			}
			if l, ok := t.BorrowingLimit[id]; ok {
				idle = min(idle, l)
			}
			if idle > 0 {
				borrow = append(borrow, fmt.Sprintf("%d idle %s", idle, m.keyName(id)))
			}
		}
		if len(borrow) == 0 {
			continue
		}
		msg := fmt.Sprintf("%s may borrow up to %s from cohort %s, at weight %s", t.Name, strings.Join(borrow, " and "), t.Cohort, t.FairShare.WeightString())
		if len(against) > 0 {
			msg += " against " + strings.Join(against, " and ")
		}
		msg += ": Kueue gives idle devices to the team with the least borrowed per weight, and preempts to reclaim from the one with the most"
		at := t.path
		if t.FairShare != nil {
			at = t.path.Key("fairShare")
		}
		out = append(out, Diagnostic{Severity: Note, Path: at, Msg: msg})
	}
	return append(out, m.profileFairShareNotes()...)
}

// keyName names a quota key's devices for people: a type's model
// ("H200s"), else the key.
func (m *Model) keyName(id string) string {
	if c, ok := m.Catalog.Get(id); ok && c.Model != "" {
		return c.Model + "s"
	}
	return id
}
