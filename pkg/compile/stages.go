package compile

// Enforcement stages: the stage of a namespace or team (dryrun, warn,
// deny), what mutates, and the model as it is once enforced.

import (
	"cmp"
	"maps"
	"slices"
)

// The enforcement actions, in the order a rollout moves through them.
const (
	DryRun = "dryrun"
	Warn   = "warn"
	Deny   = "deny"
)

// Stage is the enforcement action in a namespace: its team's, else the
// cluster's.
func (m *Model) Stage(namespace string) string {
	if t := m.TeamOf(namespace); t != nil {
		return m.TeamStage(t, namespace)
	}
	return m.Cluster.Enforcement
}

// TeamStage is the enforcement action in one of a team's namespaces: its
// own, else the team's, else (a model not loaded from CUE) the
// cluster's.
func (m *Model) TeamStage(t *Team, namespace string) string {
	if s, ok := t.NamespaceEnforcement[namespace]; ok {
		return s
	}
	return cmp.Or(t.Enforcement, m.Cluster.Enforcement)
}

// TeamOf is the team a namespace belongs to, or nil.
func (m *Model) TeamOf(namespace string) *Team {
	for i := range m.Teams {
		if slices.Contains(m.Teams[i].Namespaces, namespace) {
			return &m.Teams[i]
		}
	}
	return nil
}

// Staged are, per enforcement action other than the cluster's, the team
// namespaces at it, sorted. Empty when every team is at the
// cluster's stage.
func (m *Model) Staged() map[string][]string {
	out := map[string][]string{}
	for _, t := range m.Teams {
		for _, ns := range t.Namespaces {
			if s := m.TeamStage(&t, ns); s != m.Cluster.Enforcement {
				out[s] = append(out[s], ns)
			}
		}
	}
	for a := range out {
		slices.Sort(out[a])
	}
	return out
}

// Mutating says where accelc's mutations apply: only in namespaces that
// deny, so that dryrun and warn change nothing a workload does. With the
// cluster at deny, every namespace but except (the namespaces of the
// teams at another stage); otherwise only the namespaces in only (those
// of the teams at deny). None is true when no namespace denies: then no
// mutation is rendered at all.
func (m *Model) Mutating() (only, except []string, none bool) {
	staged := m.Staged()
	if m.Cluster.Enforcement == Deny {
		for _, a := range slices.Sorted(maps.Keys(staged)) {
			except = append(except, staged[a]...)
		}
		slices.Sort(except)
		return nil, except, false
	}
	only = staged[Deny]
	return only, nil, len(only) == 0
}

// Enforced is the model with the cluster, every team and every node
// pool at deny: what the policies, mutations and node layer are once the
// rollout is done. Admission fixtures are judged against it whatever the
// stage, and accelc audit takes from its mutations what enforcement
// would change.
func (m *Model) Enforced() *Model {
	e := *m
	e.Cluster.Enforcement, e.Cluster.NodeEnforcement = Deny, ""
	e.Teams = slices.Clone(m.Teams)
	for i := range e.Teams {
		e.Teams[i].Enforcement, e.Teams[i].NamespaceEnforcement = Deny, nil
	}
	e.NodePools = make([]*NodePool, len(m.NodePools))
	for i, p := range m.NodePools {
		c := *p
		c.Stage = Deny
		e.NodePools[i] = &c
	}
	return &e
}
