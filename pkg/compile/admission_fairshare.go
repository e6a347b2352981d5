package compile

// Kueue's admission fair sharing: each namespace's weight in its queue,
// the settings Kueue is configured with, and the checks and notes on
// them.

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// AdmissionFairSharing is a team's usage-based admission fair sharing:
// Kueue orders the workloads waiting in each of the team's ClusterQueues
// by the recent use of the namespace (LocalQueue) each waits in, divided
// by the namespace's weight, instead of by arrival.
type AdmissionFairSharing struct {
	// Namespaces weigh some of the team's namespaces; the others weigh 1.
	Namespaces map[string]float64 `json:"namespaces,omitempty"`
}

// Weight is the namespace's weight as a FairShare, nil where it weighs
// the default 1 (its LocalQueues carry no fairSharing).
func (a *AdmissionFairSharing) Weight(ns string) *FairShare {
	if a == nil {
		return nil
	}
	w, ok := a.Namespaces[ns]
	if !ok {
		return nil
	}
	return &FairShare{Weight: w}
}

// AdmissionFairSharingSettings are how Kueue counts a namespace's use:
// it halves every UsageHalfLife and is sampled every
// UsageSamplingInterval (Go durations, "168h", "5m").
type AdmissionFairSharingSettings struct {
	UsageHalfLife         string `json:"usageHalfLife"`
	UsageSamplingInterval string `json:"usageSamplingInterval"`
}

// AdmissionFairSharingConfig is the settings Kueue's Configuration needs
// when some team uses admission fair sharing under Kueue, else nil: the
// cluster's, or a week's half-life sampled every five minutes.
func (m *Model) AdmissionFairSharingConfig() *AdmissionFairSharingSettings {
	if !m.UsesKueue() || !slices.ContainsFunc(m.Teams, func(t Team) bool { return t.AdmissionFairSharing != nil && len(t.Quota) > 0 }) {
		return nil
	}
	if s := m.Cluster.AdmissionFairSharing; s != nil {
		return s
	}
	return &AdmissionFairSharingSettings{UsageHalfLife: "168h", UsageSamplingInterval: "5m"}
}

// checkAdmissionFairSharing reports a team's admission fair sharing that
// cannot act: a weight for a namespace that is not the team's, or a team
// with no Kueue queue to order.
func checkAdmissionFairSharing(m *Model) []Diagnostic {
	var out []Diagnostic
	for i := range m.Teams {
		t := &m.Teams[i]
		if t.AdmissionFairSharing == nil {
			continue
		}
		at := t.path.Key("admissionFairSharing")
		if len(t.Quota) == 0 || !m.UsesKueue() {
			out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
				"team %s has no Kueue queue for admission fair sharing to order: give it a quota (teams.%s.quota), or remove admissionFairSharing", t.Name, t.Name)})
			continue
		}
		for _, ns := range slices.Sorted(maps.Keys(t.AdmissionFairSharing.Namespaces)) {
			if !slices.Contains(t.Namespaces, ns) {
				out = append(out, Diagnostic{Path: at.Key("namespaces").Key(ns), Msg: fmt.Sprintf(
					"namespace %s is not team %s's (%s): weigh one of its namespaces", ns, t.Name, strings.Join(t.Namespaces, ", "))})
			}
		}
	}
	return out
}

// AdmissionFairSharingNotes say, per team with admission fair sharing,
// how its queues pick the next workload. vet --explain prints them.
func (m *Model) AdmissionFairSharingNotes() []Diagnostic {
	cfg := m.AdmissionFairSharingConfig()
	if cfg == nil {
		return nil
	}
	var out []Diagnostic
	for i := range m.Teams {
		t := &m.Teams[i]
		if t.AdmissionFairSharing == nil || len(t.Quota) == 0 {
			continue
		}
		at := t.path.Key("admissionFairSharing")
		if len(t.Namespaces) < 2 {
			out = append(out, Diagnostic{Severity: Note, Path: at, Msg: fmt.Sprintf(
				"%s has one namespace: admission fair sharing has no other namespace to weigh it against, and its workloads are admitted by arrival", t.Name)})
			continue
		}
		var weights []string
		for _, ns := range t.Namespaces {
			w := 1.0
			if v, ok := t.AdmissionFairSharing.Namespaces[ns]; ok {
				w = v
			}
			weights = append(weights, ns+" "+strconv.FormatFloat(w, 'f', -1, 64))
		}
		out = append(out, Diagnostic{Severity: Note, Path: at, Msg: fmt.Sprintf(
			"%s's queues admit next the waiting workload of the namespace that used the least per weight (%s), its use halving every %s and sampled every %s, instead of the one that came first",
			t.Name, strings.Join(weights, ", "), cfg.UsageHalfLife, cfg.UsageSamplingInterval)})
	}
	return out
}

// profileFairShareNotes say, per team, how the weights of profiles split
// the team's quota between its queues of them.
func (m *Model) profileFairShareNotes() []Diagnostic {
	var out []Diagnostic
	for i := range m.Profiles {
		p := &m.Profiles[i]
		if p.FairShare == nil {
			continue
		}
		var teams []string
		for _, t := range m.QueueTeams(p) {
			var against []string
			for j := range m.Profiles {
				o := &m.Profiles[j]
				if j != i && slices.Contains(m.QueueTeams(o), t) {
					against = append(against, fmt.Sprintf("%s %s", o.Name, o.FairShare.WeightString()))
				}
			}
			if len(against) > 0 {
				teams = append(teams, fmt.Sprintf("%s's against its %s", t.Name, strings.Join(against, ", ")))
			}
		}
		if len(teams) == 0 {
			continue
		}
		out = append(out, Diagnostic{Severity: Note, Path: p.path.Key("fairShare"), Msg: fmt.Sprintf(
			"profile %s's queues weigh %s (%s): when a team's queues wait for its quota, Kueue gives it to the one with the least used per weight",
			p.Name, p.FairShare.WeightString(), strings.Join(teams, "; "))})
	}
	return out
}
