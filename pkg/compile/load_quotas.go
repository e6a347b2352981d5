package compile

// Checking the teams' quotas: against pools, types and MIG layouts, their
// coverage, namespaces, preemption and priority.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/accelc/accelc/pkg/mig"
)

// checkQuotas checks each team's quotas against its entitlements and
// the cluster's pools, and its cohort limits, preemption and tier.
func checkQuotas(m *Model) []Diagnostic {
	var diags []Diagnostic
	for i := range m.Teams {
		diags = append(diags, checkTeamQuota(&m.Teams[i], m)...)
	}
	return diags
}

// checkTeamQuota checks a team's quotas, cohort and tier against its
// entitlements and the cluster.
func checkTeamQuota(t *Team, m *Model) []Diagnostic {
	var out []Diagnostic
	for _, id := range slices.Sorted(maps.Keys(t.Quota)) {
		if pool, ok := m.Pool(id); ok {
			out = append(out, checkPoolQuota(t, m, pool)...)
		} else {
			out = append(out, checkTypeQuota(t, m, id)...)
		}
	}
	out = append(out, checkQuotaCoverage(t, m)...)
	out = append(out, checkQuotaNamespaces(t, m)...)
	out = append(out, checkLimits(t, "borrowingLimit", t.BorrowingLimit)...)
	out = append(out, checkLimits(t, "lendingLimit", t.LendingLimit)...)
	out = append(out, checkPreemption(t)...)
	return append(out, checkTeamPriority(t, m)...)
}

// checkPoolQuota checks a quota in a pool or MIG config: a quota of its
// slices or replicas, which Kueue keeps apart from whole GPUs by the
// pool's taint (a flavor's nodeTaints admit only workloads that tolerate
// them), given per MIG profile where the mixed strategy makes each
// profile of the layout its own resource.
func checkPoolQuota(t *Team, m *Model, pool *NodePool) []Diagnostic {
	id := pool.Name
	quota := t.path.Key("quota")
	at := quota.At(quota.Key(id))
	perProfile, sliced := t.SliceQuota[id]
	several := pool.Sharing == ShareMIG && poolResource(m, pool) == "" && m.Cluster.MIGStrategy() == "mixed"
	switch {
	case !slices.Contains(t.AcceleratorTypes, pool.AcceleratorType):
		return []Diagnostic{{Path: at, Msg: fmt.Sprintf(
			"a quota in %s, a pool of %s, which the team is not entitled to: add the type to acceleratorTypes or drop the quota", id, pool.AcceleratorType)}}
	case several && !sliced:
		return []Diagnostic{{Path: at, Msg: fmt.Sprintf(
			"%s cuts each GPU into several MIG profiles (%s), each its own resource under the mixed strategy: give its quota per profile, as %q: %s", id, mig.Describe(pool.Layout), id, quotaExample(pool.Layout))}}
	case sliced && !several:
		return []Diagnostic{{Path: at, Msg: fmt.Sprintf(
			"a quota per MIG profile is for a MIG config that cuts each GPU into several profiles under the mixed strategy; %s's pods request one resource (%s): give a number", id, cmp.Or(poolResource(m, pool), wholeResource(m, pool)))}}
	case sliced:
		var out []Diagnostic
		for _, prof := range slices.Sorted(maps.Keys(perProfile)) {
			if pool.Layout[prof] == 0 {
				out = append(out, Diagnostic{Path: quota.At(quota.Key(id).Key(prof)), Msg: fmt.Sprintf(
					"%s is not a MIG profile of %s's layout (%s): use %s", prof, id, mig.Describe(pool.Layout), strings.Join(layoutProfiles(pool.Layout), ", "))})
			}
		}
		return out
	case pool.Taint == nil && poolResource(m, pool) == wholeResource(m, pool):
		return []Diagnostic{{Path: at, Msg: fmt.Sprintf(
			"%s has no taint and its pods request %s like whole GPUs, so Kueue cannot keep whole-GPU workloads out of its quota: give the pool a taint (or renameByDefault)", id, wholeResource(m, pool))}}
	}
	return nil
}

// checkTypeQuota checks a quota of an accelerator type: one the catalog
// has and the team is entitled to, a number of devices.
func checkTypeQuota(t *Team, m *Model, id string) []Diagnostic {
	quota := t.path.Key("quota")
	at := quota.At(quota.Key(id))
	if _, ok := m.Catalog.Get(id); !ok {
		return []Diagnostic{unknownType(m.Catalog, at, id)}
	}
	var out []Diagnostic
	if _, sliced := t.SliceQuota[id]; sliced {
		out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
			"a quota per MIG profile is for a MIG config of cluster.mig that cuts each GPU into several profiles; %s is an accelerator type: give a number of devices", id)})
	}
	if !slices.Contains(t.AcceleratorTypes, id) {
		out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
			"a quota for %s, which the team is not entitled to: add it to acceleratorTypes or drop the quota", id)})
	}
	return out
}

// checkQuotaCoverage checks that a team with a quota for any type has
// one for each of its types, or its queue cannot admit their pods.
func checkQuotaCoverage(t *Team, m *Model) []Diagnostic {
	if !hasTypeQuota(t, m) {
		return nil
	}
	var out []Diagnostic
	for i, id := range t.AcceleratorTypes {
		if _, ok := t.Quota[id]; !ok {
			out = append(out, Diagnostic{Path: t.path.At(t.path.Key("acceleratorTypes").Index(i)), Msg: fmt.Sprintf(
				"entitled to %s but it has no quota: give it one (quota: %q: N; 0 to only borrow), or the team's queue cannot admit its pods", id, id)})
		}
	}
	return out
}

// checkQuotaNamespaces checks that a quota has pods to serve. A quota is
// for the team's pods; without namespaces the team has none: under Kueue
// a quota in a cohort still lends to the cohort's other teams (a shared
// reserve), but alone it holds devices for nobody.
func checkQuotaNamespaces(t *Team, m *Model) []Diagnostic {
	if len(t.Quota) == 0 || len(t.Namespaces) > 0 || (t.Cohort != "" && m.Cluster.Quotas == "kueue") {
		return nil
	}
	why := "Kueue's Cohort " + t.Name + " would hold it for no queue"
	if m.Cluster.Quotas != "kueue" {
		why = "a ResourceQuota lives in a namespace"
	}
	return []Diagnostic{{Path: t.path.Key("quota"), Msg: fmt.Sprintf(
		"team %s has a quota but no namespaces, so no pod can use it (%s): list the team's namespaces, drop the quota, or (with Kueue) put the team in a cohort to lend it", t.Name, why)}}
}

// checkPreemption checks a team's preemption settings as Kueue's
// ClusterQueue validation does.
func checkPreemption(t *Team) []Diagnostic {
	pre := t.Preemption
	if pre.ReclaimWithinCohort != "Never" || pre.BorrowWithinCohort == "" || pre.BorrowWithinCohort == "Never" {
		return nil
	}
	return []Diagnostic{{Path: t.path.Key("preemption").Key("borrowWithinCohort"), Msg: fmt.Sprintf(
		"borrowWithinCohort %s with reclaimWithinCohort Never: Kueue rejects the ClusterQueue; set borrowWithinCohort: \"Never\" too, or let the team reclaim", pre.BorrowWithinCohort)}}
}

// checkTeamPriority checks that a team's tier is a declared priority
// class.
func checkTeamPriority(t *Team, m *Model) []Diagnostic {
	if t.Priority == "" {
		return nil
	}
	if _, ok := m.Cluster.PriorityClasses[t.Priority]; ok {
		return nil
	}
	return []Diagnostic{{Path: t.path.Key("priority"), Msg: m.undeclaredPriorityClass(t.Priority)}}
}

// checkLimits checks a team's borrowing or lending limits: they need a
// cohort and name the team's types.
func checkLimits(t *Team, name string, limits map[string]int) []Diagnostic {
	var out []Diagnostic
	field := t.path.Key(name)
	verb := strings.TrimSuffix(name, "Limit")
	for _, id := range slices.Sorted(maps.Keys(limits)) {
		at := field.At(field.Key(id))
		switch {
		case t.Cohort == "":
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf("%s needs a cohort: set %s", verb, t.path.Key("cohort"))})
		case !slices.Contains(t.AcceleratorTypes, id):
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf("%s is not one of the team's acceleratorTypes", id)})
		}
	}
	return out
}

// quotaExample is a per-profile quota for the layout, for messages.
func quotaExample(layout map[string]int) string {
	var parts []string
	for _, prof := range layoutProfiles(layout) {
		parts = append(parts, fmt.Sprintf("%q: N", prof))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// layoutProfiles are the MIG profiles a layout cuts, by name.
func layoutProfiles(layout map[string]int) []string {
	var out []string
	for _, prof := range slices.Sorted(maps.Keys(layout)) {
		if layout[prof] > 0 {
			out = append(out, prof)
		}
	}
	return out
}

// hasTypeQuota reports whether a team has a quota for any accelerator
// type (not only pools): then each of its types needs one.
func hasTypeQuota(t *Team, m *Model) bool {
	for id := range t.Quota {
		if _, pool := m.Pool(id); !pool {
			return true
		}
	}
	return false
}
