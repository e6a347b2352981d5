package compile

// Checking the teams: their namespaces, enforcement and profiles.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/accelc/accelc/pkg/catalog"
)

// checkTeams resolves each team, in name order: its enforcement (the
// cluster's unless set), its types, its profiles (which give it types
// when it lists none) and its namespaces, each of which has one team.
func (raw *rawConfig) checkTeams(m *Model) []Diagnostic {
	var diags []Diagnostic
	nsTeam := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(raw.Teams)) {
		t := raw.Teams[name].team()
		t.path = m.root().Key("teams").Key(name)
		if t.Enforcement == "" {
			t.Enforcement = m.Cluster.Enforcement
		}
		diags = append(diags, checkNamespaceEnforcement(&t)...)
		for i, id := range t.AcceleratorTypes {
			if _, ok := m.Catalog.Get(id); !ok {
				diags = append(diags, unknownType(m.Catalog, t.path.Key("acceleratorTypes").Index(i), id))
			}
		}
		diags = append(diags, checkTeamProfiles(&t, m)...)
		diags = append(diags, checkTeamNamespaces(&t, name, m, nsTeam)...)
		m.Teams = append(m.Teams, t)
	}
	return diags
}

// checkNamespaceEnforcement checks that namespaceEnforcement names the
// team's own namespaces.
func checkNamespaceEnforcement(t *Team) []Diagnostic {
	var diags []Diagnostic
	for _, ns := range slices.Sorted(maps.Keys(t.NamespaceEnforcement)) {
		if !slices.Contains(t.Namespaces, ns) {
			diags = append(diags, Diagnostic{Path: t.path.Key("namespaceEnforcement").Key(ns), Msg: fmt.Sprintf(
				"team %s has no namespace %s: namespaceEnforcement sets the stage of one of the team's namespaces (%s)", t.Name, ns, strings.Join(t.Namespaces, ", "))})
		}
	}
	return diags
}

// checkTeamNamespaces checks the namespaces of team name: none excluded
// from the policies, none another team's (nsTeam, which it adds them to).
func checkTeamNamespaces(t *Team, name string, m *Model, nsTeam map[string]string) []Diagnostic {
	var diags []Diagnostic
	for i, ns := range t.Namespaces {
		at := t.path.Key("namespaces").Index(i)
		if pattern, ok := MatchNamespace(m.Cluster.ExcludedNamespaces, ns); ok {
			diags = append(diags, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"namespace %s is excluded from accelc's policies by cluster.excludedNamespaces %q, so its pods would reach any accelerator: rename the namespace or narrow the pattern", ns, pattern)})
		}
		if other, ok := nsTeam[ns]; ok {
			diags = append(diags, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"namespace %s already belongs to team %s: a namespace has one team", ns, other)})
			continue
		}
		nsTeam[ns] = name
	}
	return diags
}

// checkTeamProfiles resolves a team's profile entitlement: each profile
// must exist; the team's types, left out, are its profiles' types, and
// given, must hold them; a profile's priority class may not outrank the
// team's tier.
func checkTeamProfiles(t *Team, m *Model) []Diagnostic {
	if t.Profiles == nil {
		return nil
	}
	var out []Diagnostic
	derive := len(t.AcceleratorTypes) == 0
	has := map[string]bool{}
	for _, id := range t.AcceleratorTypes {
		has[id] = true
	}
	generic := ""
	for i, name := range t.Profiles {
		where := t.path.Key("profiles").Index(i)
		p := m.Profile(name)
		if p == nil {
			msg := fmt.Sprintf("no hardware profile %q", name)
			if close := catalog.Closest(name, profileNames(m), 3); len(close) > 0 {
				msg += "; did you mean " + strings.Join(close, ", ") + "?"
			}
			out = append(out, Diagnostic{Path: where, Msg: msg + " (profiles: " + orNone(profileNames(m)) + ")"})
			continue
		}
		if p.Generic() {
			generic = name
		}
		for _, id := range p.AcceleratorTypes {
			switch {
			case derive && !has[id]:
				t.AcceleratorTypes = append(t.AcceleratorTypes, id)
				has[id] = true
			case !has[id]:
				out = append(out, Diagnostic{Path: where, Msg: fmt.Sprintf(
					"profile %s runs on %s, which is not among the team's acceleratorTypes (%s): add the type or drop the profile",
					name, id, strings.Join(t.AcceleratorTypes, ", "))})
			}
		}
		if tier, ok := m.Cluster.PriorityClasses[t.Priority]; ok && p.PriorityClassName != "" {
			if pc := m.Cluster.PriorityClasses[p.PriorityClassName]; pc.Value > tier.Value {
				out = append(out, Diagnostic{Path: where, Msg: fmt.Sprintf(
					"profile %s runs at priority class %s (%d), above the team's tier %s (%d): raise the team's priority or pick a profile of its tier",
					name, p.PriorityClassName, pc.Value, t.Priority, tier.Value)})
			}
		}
	}
	if generic != "" && len(t.AcceleratorTypes) == 0 {
		out = append(out, Diagnostic{Path: t.path.Key("profiles"), Msg: fmt.Sprintf(
			"generic profile %s runs on the team's types, and the team has none: give it acceleratorTypes", generic)})
	}
	return out
}
