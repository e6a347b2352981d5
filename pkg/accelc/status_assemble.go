package accelc

// What ReadStatus makes of the objects it read: the Status, grouped by
// team and profile through the model, with the drift against the
// checkout's render.

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/pkg/artifact"
	"github.com/accelc/accelc/pkg/audit"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/workloads"
	"github.com/accelc/accelc/policies"
)

// queueOwner is the team and profile a ClusterQueue serves.
type queueOwner struct{ team, profile string }

// assemble groups what was read into the Status: namespaces to teams
// through the model (else the NamespaceEntitlements), ClusterQueues to
// teams and profiles through the model (else their Cohort, which render
// names after the team, and their accelc.io/profile annotation), and the
// drift against the checkout's render when there is one. Everything is
// sorted: the same cluster gives the same Status.
func assemble(objs *clusterObjects, m *compile.Model, checkout *Rendering) *Status {
	st := &Status{}
	teamOf := map[string]string{}
	owners := map[string]queueOwner{}
	switch {
	case m != nil:
		st.Config, st.TeamsFrom = m.Cluster.Name, "config"
		for _, t := range m.Teams {
			for _, ns := range t.Namespaces {
				teamOf[ns] = t.Name
			}
		}
		for i := range m.Profiles {
			p := &m.Profiles[i]
			for _, t := range m.QueueTeams(p) {
				owners[render.ClusterQueueName(t, p)] = queueOwner{t.Name, p.Name}
			}
		}
	case len(objs.entitlements) > 0:
		st.TeamsFrom = "NamespaceEntitlements"
		teamOf = objs.entitlements
	}
	team := func(ns string) string {
		if t, ok := teamOf[ns]; ok && t != "" {
			return t
		}
		return NoTeam
	}

	st.Admission = admission(objs, team)
	st.Queues = queues(objs, owners, team)
	if objs.running != nil {
		for _, u := range objs.running.Unaccounted(kueueAccounting(objs, m)) {
			st.Queues.Unaccounted = append(st.Queues.Unaccounted, UnaccountedPod{Team: team(u.Namespace), Unaccounted: u})
		}
		for _, w := range objs.running.Warnings {
			st.Notes = append(st.Notes, "pods Kueue does not account for: "+w)
		}
	}
	mutating, validating := objs.mutatingWebhook, objs.validatingWebhook
	if mutating != nil && mutating.mutatesPodUpdates() && len(objs.mutators) > 0 {
		st.Notes = append(st.Notes, "Gatekeeper's mutating webhook ("+gatekeeperMutatingWebhook+") receives pod UPDATEs: on a running pod made before its namespace denied, accelc's mutators would change its spec on its controllers' updates, which the API server refuses (a finalizer is never removed, a Job never completes); install Gatekeeper with the values of mutations/configmap-"+render.GatekeeperValuesName+".yaml (its mutating webhook on CREATE only)")
	}
	if mutating != nil && mutating.mutatesPods() && len(objs.mutators) > 0 && m != nil && m.Cluster.AdmissionPolicies() {
		st.Notes = append(st.Notes, "Gatekeeper's mutating webhook ("+gatekeeperMutatingWebhook+") receives new pods, which the API server already mutates on Kubernetes 1.36 ("+render.PodProfilePolicyName+", the MutatingAdmissionPolicy translated from accelc's mutators): every pod's creation waits for a webhook call that changes nothing; install Gatekeeper with the values of mutations/configmap-"+render.GatekeeperValuesName+".yaml (its match condition pods-mutated-by-"+render.PodProfilePolicyName+")")
	}
	if validating != nil && validating.receivesEverything() && len(objs.constraints) > 0 {
		st.Notes = append(st.Notes, "Gatekeeper's validating webhook ("+gatekeeperValidatingWebhook+") receives every resource: every write to the cluster (Kueue's Workloads, Events, node Leases, pods' bookkeeping) waits for a webhook call no accelc policy needs; install Gatekeeper with the values of mutations/configmap-"+render.GatekeeperValuesName+".yaml (docs/scale.md)")
	}
	st.Notes = append(st.Notes, podAdmissionNotes(objs)...)
	st.Notes = append(st.Notes, ignoreLabelNotes(objs, m, team)...)
	if m != nil && objs.admits() {
		st.Notes = append(st.Notes, identityNotes(objs.identities, m, objs.kueue)...)
	}
	st.Delivery = delivery(objs)
	if checkout != nil {
		notes, err := webhookScopeNotes(objs, m)
		if err != nil {
			st.Notes = append(st.Notes, "the Gatekeeper values of --config could not be rendered to compare with Gatekeeper's webhooks ("+err.Error()+"): fix the configuration (accelc render names the error)")
		}
		st.Notes = append(st.Notes, notes...)
		st.Delivery.Drift = drift(st.Delivery, m.Cluster.Name, *checkout)
		if other := otherClusters(objs, m.Cluster.Name); len(other) > 0 {
			st.Notes = append(st.Notes, fmt.Sprintf("accelc's objects in this cluster are labelled %s=%s, but the configuration is cluster %s: is this the right --context?",
				clusterLabel, strings.Join(other, ", "), m.Cluster.Name))
		}
	}
	return st
}

// podAdmissionNotes says where accelc-pod-admission and the constraints
// disagree on the common GPU pod: Gatekeeper's webhook skips it and the
// API server lacks the policy or its bindings, or their bindings (all, or
// one profile's) do not deny where a constraint does (both: those pods
// are admitted unjudged),
// or the bindings still deny where no constraint does (an enforcementAction
// relaxed live, which the API server does not see).
func podAdmissionNotes(objs *clusterObjects) []string {
	pa := objs.podAdmission
	if !pa.read {
		return nil
	}
	var denying, relaxed []string
	for _, c := range objs.constraints {
		if c.Spec.EnforcementAction == "" || c.Spec.EnforcementAction == "deny" {
			denying = append(denying, c.Kind+"/"+c.Metadata.Name)
		} else {
			relaxed = append(relaxed, c.Kind+"/"+c.Metadata.Name+" ("+c.Spec.EnforcementAction+")")
		}
	}
	skipped := "Gatekeeper's validating webhook (" + gatekeeperValidatingWebhook + ") skips the common GPU pod (its match condition pods-judged-by-" + render.PodAdmissionPolicyName + "), which the API server is to judge itself"
	var notes []string
	skips := objs.validatingWebhook != nil && objs.validatingWebhook.skipsJudgedPods()
	switch {
	case len(denying) == 0:
		// Nothing is refused: at warn or dryrun the tree renders no such
		// policy, and the pods Gatekeeper's webhook skips would be
		// admitted either way (its audit still reports them).
	case skips && !pa.policy:
		notes = append(notes, skipped+", but the API server has no ValidatingAdmissionPolicy "+render.PodAdmissionPolicyName+": those pods are admitted unjudged; apply the tree (its policies/ folder), or install Gatekeeper without that match condition")
	case skips && pa.bindings == 0:
		notes = append(notes, skipped+", but the API server has no binding of the ValidatingAdmissionPolicy "+render.PodAdmissionPolicyName+": those pods are admitted unjudged; apply the tree (its policies/ folder), or install Gatekeeper without that match condition")
	case skips && pa.denying == 0:
		notes = append(notes, skipped+", but no binding of "+render.PodAdmissionPolicyName+" has validationActions Deny while "+strings.Join(denying, ", ")+" denies: those pods are admitted unjudged; give the bindings validationActions [Deny] (as the tree renders them), or install Gatekeeper without that match condition")
	case skips && (!pa.unknownPolicy || !pa.unknownBinding):
		notes = append(notes, skipped+", but the API server has no "+render.UnknownProfilePolicyName+" (the policy or its binding): a pod naming a profile the tree no longer has, which the condition Gatekeeper was installed with may still list, is admitted unjudged; apply the tree (its policies/ folder)")
	case skips:
		var unbound, lax []string
		for _, p := range pa.unknownLeaves {
			if why, ok := pa.bound[p]; !ok {
				unbound = append(unbound, p)
			} else if why != "" {
				lax = append(lax, p+" ("+why+")")
			}
		}
		if len(unbound) > 0 {
			slices.Sort(unbound)
			notes = append(notes, skipped+", but no binding of "+render.PodAdmissionPolicyName+" selects hardware profile(s) "+strings.Join(unbound, ", ")+" (the tree renders "+render.PodAdmissionPolicyName+"-<profile>): their pods are admitted unjudged; apply the tree (its policies/ folder)")
		}
		// A binding relaxed live (validationActions [Audit] or [Warn], or
		// a missing HardwareProfile allowed) while the constraint still
		// denies: that profile's pods are neither refused by the API
		// server nor sent to Gatekeeper.
		if len(lax) > 0 {
			slices.Sort(lax)
			notes = append(notes, skipped+", but the binding of "+render.PodAdmissionPolicyName+" for hardware profile(s) "+strings.Join(lax, ", ")+" does not refuse while "+strings.Join(denying, ", ")+" denies: their pods are admitted unjudged; give it validationActions [Deny] and parameterNotFoundAction Deny (as the tree renders it), or relax the constraint too")
		}
	}
	if pa.denying > 0 && len(denying) == 0 && len(relaxed) > 0 {
		notes = append(notes, fmt.Sprintf("accelc's constraints do not deny (%s), but %d binding(s) of the ValidatingAdmissionPolicy %s have validationActions Deny: the API server still refuses the common GPU pod in the namespaces the tree renders at deny, whatever the constraints say; relax the bindings too (validationActions [Warn] or [Audit]), or apply the tree rendered at the stage you want",
			strings.Join(relaxed, ", "), pa.denying, render.PodAdmissionPolicyName))
	}
	return notes
}

// webhookScopeNotes says what Gatekeeper's webhooks, as registered, do
// not receive of what the values this configuration renders send them
// (render.GatekeeperInstallValues): Gatekeeper installed with the values
// of another configuration (the catalog service taken out, another
// Kubernetes minor) lets those objects through unmutated or unjudged.
func webhookScopeNotes(objs *clusterObjects, m *compile.Model) ([]string, error) {
	if (objs.mutatingWebhook == nil || len(objs.mutators) == 0) && (objs.validatingWebhook == nil || len(objs.constraints) == 0) {
		return nil, nil
	}
	v, err := render.GatekeeperInstallValues(m)
	if err != nil {
		return nil, err
	}
	// The API server's own policies keep these from a webhook that has
	// them in its rules (a selector no object meets, or a match condition
	// for pods): nothing is to be sent.
	mutatesNothing := v.DisableMutation || v.MutatingWebhookObjectSelector != nil
	podsKept := len(v.MutatingWebhookMatchConditions) > 0
	// missing names, as "<resource>.<group> (<operations>)", what the rules
	// send that the webhook does not receive; at most eight, then how
	// many more.
	missing := func(h *mutatingWebhookConfiguration, rules []admissionregistrationv1.RuleWithOperations, skip func(group, resource string) bool) string {
		var out []string
		for _, r := range rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					if skip(g, res) {
						continue
					}
					var ops []string
					for _, op := range r.Operations {
						if !h.sends(string(op), g, res, func([]webhookMatchCondition) bool { return false }) {
							ops = append(ops, string(op))
						}
					}
					if len(ops) > 0 {
						name := res
						if g != "" {
							name += "." + g
						}
						out = append(out, name+" ("+strings.Join(ops, ", ")+")")
					}
				}
			}
		}
		if len(out) > 8 {
			out = append(out[:8], fmt.Sprintf("%d more", len(out)-8))
		}
		return strings.Join(out, ", ")
	}
	var notes []string
	const reinstall = "reinstall Gatekeeper with the values of mutations/configmap-" + render.GatekeeperValuesName + ".yaml (they change with the Kubernetes minor, the catalog service and the profiles)"
	if h := objs.mutatingWebhook; h != nil && len(objs.mutators) > 0 && !mutatesNothing {
		if gone := missing(h, v.MutatingWebhookCustomRules, func(g, res string) bool { return podsKept && g == "" && res == "pods" }); gone != "" {
			notes = append(notes, "Gatekeeper's mutating webhook ("+gatekeeperMutatingWebhook+") does not receive "+gone+", which accelc's mutators mutate in this configuration: those objects are admitted without accelc's mutations; "+reinstall)
		}
	}
	if h := objs.validatingWebhook; h != nil && len(objs.constraints) > 0 {
		if gone := missing(h, v.ValidatingWebhookCustomRules, func(string, string) bool { return false }); gone != "" {
			notes = append(notes, "Gatekeeper's validating webhook ("+gatekeeperValidatingWebhook+") does not receive "+gone+", which accelc's constraints judge: those are admitted unjudged (only the audit reports them); "+reinstall)
		}
	}
	return notes, nil
}

// ignoreLabelNotes says where admission.gatekeeper.sh/ignore takes
// namespaces from accelc: every accelc policy skips a namespace so
// labelled, as Gatekeeper's webhooks do, so its GPU pods are neither
// completed nor judged at admission. That is safe only while Gatekeeper's
// check-ignore-label webhook keeps the label to the namespaces Gatekeeper
// exempts; status says where it is missing or fails open, and names the
// labelled namespaces the configuration does not exclude (with one,
// cluster.excludedNamespaces; without, any but Gatekeeper's own). Nothing
// is said where accelc has no constraint in the cluster.
func ignoreLabelNotes(objs *clusterObjects, m *compile.Model, team func(string) string) []string {
	if len(objs.constraints) == 0 {
		return nil
	}
	var notes []string
	if h := objs.validatingWebhook; h != nil {
		if why := h.ignoreLabelUnguarded(); why != "" {
			notes = append(notes, "Gatekeeper's validating webhook configuration ("+gatekeeperValidatingWebhook+") "+why+": whoever may label a namespace can put "+render.GatekeeperIgnoreLabel+" on a team's, and Gatekeeper and every accelc policy then skip its pods; install Gatekeeper with its chart's check-ignore-label webhook, failing closed (validatingWebhookCheckIgnoreFailurePolicy: Fail in the values of mutations/configmap-"+render.GatekeeperValuesName+".yaml)")
		}
	}
	own := render.GatekeeperNamespace
	if h := objs.validatingWebhook; h != nil && h.namespace() != "" {
		own = h.namespace()
	}
	var governed []string
	for _, ns := range objs.ignored {
		if ns == own {
			continue
		}
		if m != nil {
			if _, excluded := compile.MatchNamespace(m.Cluster.ExcludedNamespaces, ns); excluded {
				continue
			}
		}
		if t := team(ns); t != NoTeam {
			ns += " (team " + t + ")"
		}
		governed = append(governed, ns)
	}
	if len(governed) > 0 {
		where := "which accelc governs"
		if m == nil {
			where = "(give --config to leave out those cluster.excludedNamespaces names)"
		}
		notes = append(notes, fmt.Sprintf("namespaces labelled %s, %s: %s; Gatekeeper and every accelc policy skip them, so their pods are admitted without accelc's profile, queue or entitlement: remove the label (kubectl label namespace NAME %s-), or name them in cluster.excludedNamespaces if they are meant to be ungoverned",
			render.GatekeeperIgnoreLabel, where, strings.Join(governed, ", "), render.GatekeeperIgnoreLabel))
	}
	return notes
}

// otherClusters are the cluster names accelc's objects are labelled with
// when none is name, sorted.
func otherClusters(objs *clusterObjects, name string) []string {
	seen := map[string]bool{}
	add := func(md objectMeta) {
		if c := md.Labels[clusterLabel]; c != "" {
			seen[c] = true
		}
	}
	for _, o := range objs.constraints {
		add(o.Metadata)
	}
	for _, o := range objs.clusterQueues {
		add(o.Metadata)
	}
	for _, o := range objs.sources {
		add(o.Metadata)
	}
	for _, o := range objs.kustomizations {
		add(o.Metadata)
	}
	if len(seen) == 0 || seen[name] {
		return nil
	}
	return slices.Sorted(maps.Keys(seen))
}

func admission(objs *clusterObjects, team func(string) string) Admission {
	a := Admission{Installed: objs.gatekeeper, Constraints: []Constraint{}, Mutators: []KindCount{}}
	for _, o := range objs.constraints {
		c := Constraint{
			Kind: o.Kind, Name: o.Metadata.Name, EnforcementAction: o.Spec.EnforcementAction,
			AuditTimestamp: o.Status.AuditTimestamp, ByTeam: []TeamViolations{},
		}
		if o.Status.TotalViolations != nil || o.Status.AuditTimestamp != "" {
			c.Audited = true
			c.TotalViolations = len(o.Status.Violations)
			if o.Status.TotalViolations != nil {
				c.TotalViolations = *o.Status.TotalViolations
			}
		}
		byTeam := map[string][]Violation{}
		for _, v := range o.Status.Violations {
			t := team(v.Namespace)
			byTeam[t] = append(byTeam[t], v)
		}
		for _, t := range sortedTeams(slices.Collect(maps.Keys(byTeam))) {
			vs := byTeam[t]
			slices.SortFunc(vs, func(a, b Violation) int {
				return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name),
					cmp.Compare(a.Message, b.Message), cmp.Compare(a.EnforcementAction, b.EnforcementAction))
			})
			c.ByTeam = append(c.ByTeam, TeamViolations{Team: t, Violations: vs})
		}
		a.Constraints = append(a.Constraints, c)
	}
	slices.SortFunc(a.Constraints, func(x, y Constraint) int {
		return cmp.Or(cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Name, y.Name))
	})
	for _, kind := range slices.Sorted(maps.Keys(objs.mutators)) {
		if n := objs.mutators[kind]; n > 0 {
			a.Mutators = append(a.Mutators, KindCount{Kind: kind, Count: n})
			a.MutatorCount += n
		}
	}
	return a
}

// sortedTeams sorts team names with NoTeam last.
func sortedTeams(teams []string) []string {
	slices.SortFunc(teams, func(a, b string) int {
		return cmp.Or(cmpBool(a == NoTeam, b == NoTeam), cmp.Compare(a, b))
	})
	return teams
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	default:
		return 1
	}
}

// quotaTable accumulates FlavorResources in the order their keys are
// first met.
type quotaTable struct {
	order [][2]string
	rows  map[[2]string]*quotaRow
}

type quotaRow struct{ nominal, reserved, used resource.Quantity }

func newQuotaTable() *quotaTable { return &quotaTable{rows: map[[2]string]*quotaRow{}} }

func (t *quotaTable) row(flavor, res string) *quotaRow {
	k := [2]string{flavor, res}
	r, ok := t.rows[k]
	if !ok {
		r = &quotaRow{}
		t.rows[k] = r
		t.order = append(t.order, k)
	}
	return r
}

func (t *quotaTable) addGroups(groups resourceGroups) {
	for _, g := range groups {
		for _, f := range g.Flavors {
			for _, r := range f.Resources {
				t.row(f.Name, r.Name).nominal.Add(r.NominalQuota)
			}
		}
	}
}

func (t *quotaTable) addUsage(u flavorUsage, used bool) {
	for _, f := range u {
		for _, r := range f.Resources {
			row := t.row(f.Name, r.Name)
			if used {
				row.used.Add(r.Total)
			} else {
				row.reserved.Add(r.Total)
			}
		}
	}
}

func (t *quotaTable) list() []FlavorResource {
	out := make([]FlavorResource, 0, len(t.order))
	for _, k := range t.order {
		r := t.rows[k]
		out = append(out, FlavorResource{Flavor: k[0], Resource: k[1], Nominal: r.nominal.String(), Reserved: r.reserved.String(), Used: r.used.String()})
	}
	return out
}

func queues(objs *clusterObjects, owners map[string]queueOwner, team func(string) string) Queues {
	q := Queues{Installed: objs.kueue, APIVersion: objs.kueueVersion, Teams: []TeamQueues{}, Pending: []PendingQueue{}}
	cohorts := map[string]*cohortObject{}
	for i := range objs.cohorts {
		cohorts[objs.cohorts[i].Metadata.Name] = &objs.cohorts[i]
	}
	owner := func(cq *clusterQueueObject) queueOwner {
		if o, ok := owners[cq.Metadata.Name]; ok {
			return o
		}
		// Without the configuration: render puts a team's queues in the
		// team's Cohort, named after it, and annotates the profile.
		return queueOwner{team: cmp.Or(cq.cohort(), NoTeam), profile: cq.Metadata.Annotations["accelc.io/profile"]}
	}
	byTeam := map[string][]*clusterQueueObject{}
	owned := map[string]queueOwner{}
	for i := range objs.clusterQueues {
		cq := &objs.clusterQueues[i]
		o := owner(cq)
		owned[cq.Metadata.Name] = o
		byTeam[o.team] = append(byTeam[o.team], cq)
	}
	for _, t := range sortedTeams(slices.Collect(maps.Keys(byTeam))) {
		cqs := byTeam[t]
		slices.SortFunc(cqs, func(a, b *clusterQueueObject) int {
			return cmp.Or(cmp.Compare(owned[a.Metadata.Name].profile, owned[b.Metadata.Name].profile), cmp.Compare(a.Metadata.Name, b.Metadata.Name))
		})
		tq := TeamQueues{Team: t, ClusterQueues: []ClusterQueue{}}
		total := newQuotaTable()
		for _, cq := range cqs {
			if tq.Cohort == "" {
				tq.Cohort = cq.cohort()
			}
		}
		if c, ok := cohorts[tq.Cohort]; ok {
			total.addGroups(c.Spec.ResourceGroups)
		}
		for _, cq := range cqs {
			own := newQuotaTable()
			for _, tab := range []*quotaTable{own, total} {
				tab.addGroups(cq.Spec.ResourceGroups)
				tab.addUsage(cq.Status.FlavorsReservation, false)
				tab.addUsage(cq.Status.FlavorsUsage, true)
			}
			tq.ClusterQueues = append(tq.ClusterQueues, ClusterQueue{
				Name: cq.Metadata.Name, Profile: owned[cq.Metadata.Name].profile,
				PendingWorkloads: cq.Status.PendingWorkloads, ReservingWorkloads: cq.Status.ReservingWorkloads,
				AdmittedWorkloads: cq.Status.AdmittedWorkloads, Flavors: own.list(),
			})
		}
		tq.Quota = total.list()
		q.Teams = append(q.Teams, tq)
	}

	// Workloads waiting, per accelc LocalQueue.
	type lqKey struct{ ns, name string }
	local := map[lqKey]string{} // → ClusterQueue
	for _, lq := range objs.localQueues {
		local[lqKey{lq.Metadata.Namespace, lq.Metadata.Name}] = lq.Spec.ClusterQueue
	}
	waiting := map[lqKey]int{}
	for i := range objs.workloads {
		w := &objs.workloads[i]
		k := lqKey{w.Metadata.Namespace, w.Spec.QueueName}
		if _, ok := local[k]; ok && w.waiting() {
			waiting[k]++
		}
	}
	for k, n := range waiting {
		cq := local[k]
		o, ok := owned[cq]
		if !ok {
			o = queueOwner{team: team(k.ns)}
		}
		q.Pending = append(q.Pending, PendingQueue{Namespace: k.ns, LocalQueue: k.name, ClusterQueue: cq, Team: o.team, Profile: o.profile, Workloads: n})
	}
	slices.SortFunc(q.Pending, func(a, b PendingQueue) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.LocalQueue, b.LocalQueue))
	})
	return q
}

func delivery(objs *clusterObjects) Delivery {
	d := Delivery{Installed: objs.flux, Sources: []FluxSource{}, Kustomizations: []FluxKustomization{}}
	for _, o := range objs.sources {
		s := FluxSource{Namespace: o.Metadata.Namespace, Name: o.Metadata.Name, Cluster: o.Metadata.Labels[clusterLabel], URL: o.Spec.URL, Ready: ready(o.Status.Conditions)}
		if a := o.Status.Artifact; a != nil {
			s.Revision, s.Metadata = a.Revision, a.Metadata
		}
		d.Sources = append(d.Sources, s)
	}
	for _, o := range objs.kustomizations {
		ref := o.Spec.SourceRef
		d.Kustomizations = append(d.Kustomizations, FluxKustomization{
			Namespace: o.Metadata.Namespace, Name: o.Metadata.Name, Path: o.Spec.Path,
			Source:              cmp.Or(ref.Namespace, o.Metadata.Namespace) + "/" + ref.Name,
			LastAppliedRevision: o.Status.LastAppliedRevision, Ready: ready(o.Status.Conditions),
		})
	}
	slices.SortFunc(d.Sources, func(a, b FluxSource) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	slices.SortFunc(d.Kustomizations, func(a, b FluxKustomization) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return d
}

// drift compares the cluster's artifact for the configuration's cluster
// (the OCIRepository labelled accelc.io/cluster=<cluster>) with the
// checkout's render.
func drift(d Delivery, cluster string, checkout Rendering) *Drift {
	out := &Drift{State: Unknown, Checkout: checkout}
	if !d.Installed {
		out.Reason = "Flux is not installed: nothing in the cluster says what it runs"
		out.Hint = "install Flux and apply the tree's flux/ folder once (kubectl apply -k out/" + cluster + "/flux)"
		return out
	}
	i := slices.IndexFunc(d.Sources, func(s FluxSource) bool { return s.Cluster == cluster })
	if i < 0 {
		out.Reason = fmt.Sprintf("no OCIRepository of accelc's for cluster %s", cluster)
		out.Hint = "apply the tree's flux/ folder once (kubectl apply -k out/" + cluster + "/flux)"
		return out
	}
	src := d.Sources[i]
	where := "OCIRepository " + src.Namespace + "/" + src.Name
	if src.Revision == "" {
		out.Reason = where + " has no artifact yet" + readySuffix(src.Ready)
		out.Hint = "check that the artifact was pushed to " + src.URL + " and that Flux may pull it"
		return out
	}
	out.Cluster = Rendering{Artifact: src.Revision, Revision: src.Metadata[artifact.AnnotationRevision], ContentDigest: src.Metadata[artifact.AnnotationContentDigest]}
	if out.Cluster.ContentDigest == "" {
		out.Reason = fmt.Sprintf("the artifact %s carries no %s annotation (pushed by an earlier accelc, or by flux push artifact)", src.Revision, artifact.AnnotationContentDigest)
		out.Hint = "push the checkout's render with this accelc (accelc render, then accelc push)"
		return out
	}
	// Kustomizations of the source that have not applied its artifact.
	var behind []FluxKustomization
	for _, k := range d.Kustomizations {
		if k.Source == src.Namespace+"/"+src.Name && k.LastAppliedRevision != src.Revision {
			behind = append(behind, k)
		}
	}
	same := out.Cluster.ContentDigest == checkout.ContentDigest
	switch {
	case same && len(behind) == 0:
		out.State = InSync
	case same:
		out.State = Pending
		k := behind[0]
		out.Reason = fmt.Sprintf("Flux holds the checkout's render (%s), but Kustomization %s/%s has applied %s%s",
			src.Revision, k.Namespace, k.Name, cmp.Or(k.LastAppliedRevision, "nothing yet"), readySuffix(k.Ready))
		out.Hint = fmt.Sprintf("wait for its next reconciliation, or see why it fails: flux reconcile kustomization %s -n %s", k.Name, k.Namespace)
	default:
		out.State = Drifted
		if len(behind) > 0 {
			k := behind[0]
			out.Reason = fmt.Sprintf("and Kustomization %s/%s has not applied that artifact either: it applied %s%s",
				k.Namespace, k.Name, cmp.Or(k.LastAppliedRevision, "nothing yet"), readySuffix(k.Ready))
		}
		switch {
		case checkout.Uncommitted:
			out.Hint = "the checkout has uncommitted changes: commit them, and CI renders and pushes them (accelc render, then accelc push) for Flux to apply"
		default:
			out.Hint = "if the checkout is newer, render and push it (accelc render, then accelc push; CI does on merge) for Flux to apply; if the cluster is newer, update the checkout"
		}
	}
	return out
}

// readySuffix is ": <reason>: <message>" of a Ready condition that is not
// True, for a reason.
func readySuffix(c Condition) string {
	if c.Status == "True" || (c.Reason == "" && c.Message == "") {
		return ""
	}
	parts := []string{}
	for _, s := range []string{c.Reason, c.Message} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return " (" + strings.Join(parts, ": ") + ")"
}

// queuedNamespaces are the namespaces whose pods schedule through Kueue,
// each with the profiles that do: with the configuration, those of the
// teams its profiles queue (compile.Model.QueueTeams); without it, those
// that hold accelc's LocalQueues, which render names after the profile.
func queuedNamespaces(objs *clusterObjects, m *compile.Model) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	add := func(ns, profile string) {
		if out[ns] == nil {
			out[ns] = map[string]bool{}
		}
		out[ns][profile] = true
	}
	if m != nil {
		for i := range m.Profiles {
			p := &m.Profiles[i]
			for _, t := range m.QueueTeams(p) {
				for _, ns := range t.Namespaces {
					add(ns, p.Name)
				}
			}
		}
		return out
	}
	for _, lq := range objs.localQueues {
		add(lq.Metadata.Namespace, lq.Metadata.Name)
	}
	return out
}

// kueueAccounting says which pods Kueue must account for: with the
// configuration, as audit says (audit.KueueAccounting); without it, the
// pods holding the resources the policies count as accelerators, or DRA
// claims, in the namespaces of accelc's LocalQueues, but for pods holding
// only claims of a profile that has no LocalQueue there.
func kueueAccounting(objs *clusterObjects, m *compile.Model) workloads.AccountOptions {
	if m != nil {
		return audit.KueueAccounting(m)
	}
	queued := queuedNamespaces(objs, nil)
	return workloads.AccountOptions{
		Queued: func(ns, profile string, claimsOnly bool) bool {
			profiles, ok := queued[ns]
			return ok && (!claimsOnly || profile == "" || profiles[profile])
		},
		Accelerator: func(r string) bool {
			return slices.ContainsFunc(policies.BaseResourcePrefixes, func(p string) bool { return strings.HasPrefix(r, p) })
		},
	}
}
