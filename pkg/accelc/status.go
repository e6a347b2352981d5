package accelc

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os/exec"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/pkg/artifact"
	"github.com/accelc/accelc/pkg/audit"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/workloads"
	"github.com/accelc/accelc/policies"
)

// Status is what is true now in a live cluster that accelc renders for:
// what Gatekeeper reports of accelc's constraints, what Kueue holds in
// accelc's queues, and what Flux applied, beside what the checkout
// renders. ReadStatus reads it; WriteText prints it for people.
type Status struct {
	// Cluster is the kubeconfig's name for the cluster read (never its
	// server's address).
	Cluster string `json:"cluster"`
	// Config is the cluster name of the configuration given, if one was.
	Config string `json:"config,omitempty"`
	// TeamsFrom says where namespaces were mapped to teams: "config" (the
	// configuration's teams), "NamespaceEntitlements" (the cluster's
	// accelc.io objects) or "" (nowhere: every namespace is NoTeam).
	TeamsFrom string    `json:"teamsFrom"`
	Admission Admission `json:"admission"`
	Queues    Queues    `json:"queues"`
	Delivery  Delivery  `json:"delivery"`
	// Notes are what a reader should know to trust the rest: objects
	// labelled for another cluster than the configuration's.
	Notes []string `json:"notes,omitempty"`
	// Diagnostics are the configuration's warnings (a stale snapshot),
	// each once; they are not the cluster's status.
	Diagnostics []compile.Diagnostic `json:"-"`
}

// NoTeam is where a namespace no team holds is counted.
const NoTeam = "(no team)"

// Admission is Gatekeeper's part: accelc's constraints with what their
// audit found, and accelc's mutators.
type Admission struct {
	// Installed says whether the cluster serves Gatekeeper's
	// templates.gatekeeper.sh API.
	Installed   bool         `json:"installed"`
	Constraints []Constraint `json:"constraints"`
	// Mutators counts accelc's mutators (mutations.gatekeeper.sh) by kind.
	Mutators     []KindCount `json:"mutators"`
	MutatorCount int         `json:"mutatorCount"`
}

// KindCount is how many objects of a kind there are.
type KindCount struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// Constraint is one of accelc's Gatekeeper constraints (one per
// enforcement stage in use) and its last audit.
type Constraint struct {
	Kind              string `json:"kind"`
	Name              string `json:"name"`
	EnforcementAction string `json:"enforcementAction"`
	// Audited says whether Gatekeeper's audit has reported on it yet;
	// until then TotalViolations means nothing.
	Audited         bool   `json:"audited"`
	AuditTimestamp  string `json:"auditTimestamp,omitempty"`
	TotalViolations int    `json:"totalViolations"`
	// ByTeam are the violations the audit listed (Gatekeeper lists at
	// most its --constraint-violations-limit, 20 by default, of
	// TotalViolations), by the team of their namespace.
	ByTeam []TeamViolations `json:"byTeam"`
}

// Listed is how many violations the audit listed.
func (c *Constraint) Listed() int {
	n := 0
	for _, t := range c.ByTeam {
		n += len(t.Violations)
	}
	return n
}

// TeamViolations are a team's violations of a constraint.
type TeamViolations struct {
	Team       string      `json:"team"`
	Violations []Violation `json:"violations"`
}

// Violation is an object the audit found against a constraint.
type Violation struct {
	Kind              string `json:"kind"`
	Namespace         string `json:"namespace,omitempty"`
	Name              string `json:"name"`
	Message           string `json:"message"`
	EnforcementAction string `json:"enforcementAction,omitempty"`
}

// Queues is Kueue's part: accelc's ClusterQueues by team and profile,
// the team's quota and what is used of it, and the workloads waiting.
type Queues struct {
	// Installed says whether the cluster serves Kueue's kueue.x-k8s.io
	// API; APIVersion is the version read.
	Installed  bool         `json:"installed"`
	APIVersion string       `json:"apiVersion,omitempty"`
	Teams      []TeamQueues `json:"teams"`
	// Pending are accelc's LocalQueues that have workloads not admitted.
	Pending []PendingQueue `json:"pending"`
	// Unaccounted are the pods holding accelerators, running or bound,
	// in namespaces whose team schedules through Kueue, that no admitted
	// Kueue Workload accounts for: Kueue's quota counts none of their
	// devices (workloads.Set.Unaccounted).
	Unaccounted []UnaccountedPod `json:"unaccounted,omitempty"`
}

// UnaccountedPod is a pod Kueue does not account for, with the team of
// its namespace.
type UnaccountedPod struct {
	Team string `json:"team"`
	workloads.Unaccounted
}

// TeamQueues are a team's ClusterQueues, one per profile it may use, and
// the quota they share.
type TeamQueues struct {
	Team string `json:"team"`
	// Cohort holds the team's quota (render puts every ClusterQueue of a
	// team in the team's Cohort); empty when its queues name none.
	Cohort string `json:"cohort,omitempty"`
	// Quota is per flavor and resource: the Cohort's nominal quota and
	// the ClusterQueues' own, and what the ClusterQueues reserve and use.
	Quota         []FlavorResource `json:"quota"`
	ClusterQueues []ClusterQueue   `json:"clusterQueues"`
}

// ClusterQueue is one of accelc's ClusterQueues with Kueue's status.
type ClusterQueue struct {
	Name               string           `json:"name"`
	Profile            string           `json:"profile"`
	PendingWorkloads   int              `json:"pendingWorkloads"`
	ReservingWorkloads int              `json:"reservingWorkloads"`
	AdmittedWorkloads  int              `json:"admittedWorkloads"`
	Flavors            []FlavorResource `json:"flavors"`
}

// FlavorResource is one resource of one flavor: its nominal quota, the
// quota reserved by workloads (flavorsReservation) and used by admitted
// ones (flavorsUsage), as Kubernetes quantities.
type FlavorResource struct {
	Flavor   string `json:"flavor"`
	Resource string `json:"resource"`
	Nominal  string `json:"nominalQuota"`
	Reserved string `json:"reserved"`
	Used     string `json:"used"`
}

// PendingQueue counts the workloads waiting in one LocalQueue.
type PendingQueue struct {
	Namespace    string `json:"namespace"`
	LocalQueue   string `json:"localQueue"`
	ClusterQueue string `json:"clusterQueue"`
	Team         string `json:"team"`
	Profile      string `json:"profile"`
	Workloads    int    `json:"workloads"`
}

// Delivery is Flux's part: accelc's OCIRepository and Kustomizations,
// and whether what they applied is what the checkout renders.
type Delivery struct {
	// Installed says whether the cluster serves Flux's
	// source.toolkit.fluxcd.io API.
	Installed      bool                `json:"installed"`
	Sources        []FluxSource        `json:"sources"`
	Kustomizations []FluxKustomization `json:"kustomizations"`
	// Drift is nil when no configuration was given to compare with.
	Drift *Drift `json:"drift,omitempty"`
}

// FluxSource is an OCIRepository and the artifact it holds.
type FluxSource struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Cluster is the cluster it was rendered for (its accelc.io/cluster
	// label).
	Cluster string `json:"cluster,omitempty"`
	URL     string `json:"url"`
	// Revision is the artifact's, as Flux writes it: <tag>@sha256:<digest>;
	// empty before the first pull.
	Revision string `json:"revision,omitempty"`
	// Metadata is the artifact manifest's annotations, which
	// source-controller copies: source, revision (the commit), created
	// and accelc's content digest.
	Metadata map[string]string `json:"metadata,omitempty"`
	Ready    Condition         `json:"ready"`
}

// FluxKustomization is a Kustomization that applies the artifact.
type FluxKustomization struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Path      string `json:"path"`
	// Source is the OCIRepository it applies, namespace/name.
	Source              string    `json:"source"`
	LastAppliedRevision string    `json:"lastAppliedRevision,omitempty"`
	Ready               Condition `json:"ready"`
}

// Condition is an object's Ready condition; Status is empty when it has
// none yet.
type Condition struct {
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Drift states.
const (
	// InSync: Flux applied what the checkout renders.
	InSync = "in-sync"
	// Drifted: the cluster runs other content than the checkout renders.
	Drifted = "drift"
	// Pending: Flux holds what the checkout renders but has not applied
	// it (yet, or it fails to).
	Pending = "pending"
	// Unknown: the cluster does not say what it runs.
	Unknown = "unknown"
)

// Drift compares what the cluster runs with what the checkout renders,
// by content digest (artifact.ContentDigest): the digest push writes in
// the artifact's manifest, which Flux copies into the OCIRepository's
// status, against the digest of the tree rendered from the
// configuration now.
type Drift struct {
	State    string    `json:"state"`
	Cluster  Rendering `json:"cluster"`
	Checkout Rendering `json:"checkout"`
	// Reason says why the state is Unknown or Pending.
	Reason string `json:"reason,omitempty"`
	// Hint says what to do about it.
	Hint string `json:"hint,omitempty"`
}

// Rendering is one side of a comparison.
type Rendering struct {
	// Revision is the configuration's commit, <branch>@sha1:<commit>.
	Revision string `json:"revision,omitempty"`
	// Uncommitted says the checkout has changes not in Revision.
	Uncommitted bool `json:"uncommitted,omitempty"`
	// Artifact is the artifact's revision in the cluster,
	// <tag>@sha256:<digest>.
	Artifact      string `json:"artifact,omitempty"`
	ContentDigest string `json:"contentDigest,omitempty"`
}

// StatusOptions say which cluster to read and what to compare it with.
type StatusOptions struct {
	// Live chooses the kubeconfig and context.
	Live live.Options
	// Config is the cluster directory, as render takes it: with it, the
	// namespaces' teams come from its CUE and Drift is computed from its
	// render (with its inventory.json); without it, teams come from the
	// cluster's NamespaceEntitlements and there is no Drift.
	Config string
	// Limits bound the CUE evaluation of Config.
	Limits compile.Limits
}

// ReadStatus loads the configuration, if one is given, and reads the
// cluster. Parts of the cluster that are not installed (no Gatekeeper,
// Kueue or Flux API) are reported as such, not as errors. Where Kueue is
// served and a namespace queues through it, it also reads what runs
// (workloads.ReadLive), for the pods Kueue does not account for. A wrong
// configuration is compile.Errors; a cluster that cannot be reached, or
// that refuses to let the user list what status reads (every denial
// named, with its API group and resource), is an error IsOutside
// reports. The Status comes back with the configuration's Diagnostics
// even with an error.
func ReadStatus(ctx context.Context, opts StatusOptions) (*Status, error) {
	st := &Status{}
	var (
		model    *compile.Model
		checkout *Rendering
	)
	if opts.Config != "" {
		// Checked against its nodes and rendered: the nodes' warnings (a
		// node of no known type, a quota past the devices) say why what
		// the checkout renders may differ from what the cluster holds. The
		// DRA selectors are vet's to check.
		res, err := Cluster(ctx, opts.Config, Options{Limits: opts.Limits, Stages: ReadNodes | CheckConfig | RenderTree})
		if res != nil {
			st.Diagnostics = res.Diagnostics
		}
		if err != nil {
			return st, err
		}
		model = res.Model
		git := Checkout(opts.Config)
		checkout = &Rendering{Revision: git.Revision, ContentDigest: artifact.ContentDigest(res.Tree)}
		checkout.Uncommitted = git.Revision != "" && uncommitted(opts.Config)
	}
	k, cluster, err := connect(opts.Live)
	if err != nil {
		return st, &OutsideError{Err: err}
	}
	objs, err := k.read(ctx, model == nil)
	if err != nil {
		return st, &OutsideError{Err: err}
	}
	if objs.kueue && len(queuedNamespaces(objs, model)) > 0 {
		// What runs, to find the pods Kueue does not account for.
		if objs.running, err = workloads.ReadLive(ctx, opts.Live); err != nil {
			return st, &OutsideError{Err: err}
		}
	}
	out := assemble(objs, model, checkout)
	out.Cluster = cluster
	out.Diagnostics = st.Diagnostics
	return out, nil
}

// uncommitted says whether dir, in a Git checkout, has changes or files
// that are not committed.
func uncommitted(dir string) bool {
	out, err := exec.Command("git", "-C", dir, "status", "--porcelain", "--", ".").Output()
	return err == nil && len(strings.TrimSpace(string(out))) > 0
}

// What status reads from the API server, decoded: only the fields it
// shows. A part not installed has its flag false.
type clusterObjects struct {
	gatekeeper, kueue, flux bool
	kueueVersion            string

	constraints []constraintObject
	mutators    map[string]int // kind → count
	// mutatesPodUpdates: Gatekeeper's mutating webhook receives pod
	// UPDATEs (its default rules), which accelc's installation leaves out.
	mutatesPodUpdates bool
	// validatesEverything: Gatekeeper's validating webhook receives every
	// resource (its default rules), not only the kinds accelc judges.
	validatesEverything bool
	// entitlements map namespaces to teams (read only without a
	// configuration).
	entitlements map[string]string

	clusterQueues  []clusterQueueObject
	cohorts        []cohortObject
	localQueues    []localQueueObject
	workloads      []workloadObject
	sources        []ociRepositoryObject
	kustomizations []kustomizationObject

	// running is what the cluster runs, with Kueue's Workloads: read
	// only where Kueue is served and some namespace queues through it.
	running *workloads.Set
}

// managedBy selects the objects accelc rendered.
const managedBy = "app.kubernetes.io/managed-by=accelc"

// clusterLabel is the label that names the cluster an object was
// rendered for.
const clusterLabel = "accelc.io/cluster"

type objectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func ready(conds []condition) Condition {
	for _, c := range conds {
		if c.Type == "Ready" {
			return Condition{Status: c.Status, Reason: c.Reason, Message: c.Message}
		}
	}
	return Condition{}
}

func isTrue(conds []condition, typ string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == "True"
		}
	}
	return false
}

type constraintObject struct {
	Kind     string     `json:"kind"`
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		EnforcementAction string `json:"enforcementAction"`
	} `json:"spec"`
	Status struct {
		AuditTimestamp  string      `json:"auditTimestamp"`
		TotalViolations *int        `json:"totalViolations"`
		Violations      []Violation `json:"violations"`
	} `json:"status"`
}

type entitlementObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Team string `json:"team"`
	} `json:"spec"`
}

type resourceGroups []struct {
	Flavors []struct {
		Name      string `json:"name"`
		Resources []struct {
			Name         string            `json:"name"`
			NominalQuota resource.Quantity `json:"nominalQuota"`
		} `json:"resources"`
	} `json:"flavors"`
}

type flavorUsage []struct {
	Name      string `json:"name"`
	Resources []struct {
		Name  string            `json:"name"`
		Total resource.Quantity `json:"total"`
	} `json:"resources"`
}

type clusterQueueObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		// CohortName is v1beta2's, Cohort v1beta1's.
		CohortName     string         `json:"cohortName"`
		Cohort         string         `json:"cohort"`
		ResourceGroups resourceGroups `json:"resourceGroups"`
	} `json:"spec"`
	Status struct {
		FlavorsReservation flavorUsage `json:"flavorsReservation"`
		FlavorsUsage       flavorUsage `json:"flavorsUsage"`
		PendingWorkloads   int         `json:"pendingWorkloads"`
		ReservingWorkloads int         `json:"reservingWorkloads"`
		AdmittedWorkloads  int         `json:"admittedWorkloads"`
	} `json:"status"`
}

func (q *clusterQueueObject) cohort() string { return cmp.Or(q.Spec.CohortName, q.Spec.Cohort) }

type cohortObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		ResourceGroups resourceGroups `json:"resourceGroups"`
	} `json:"spec"`
}

type localQueueObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		ClusterQueue string `json:"clusterQueue"`
	} `json:"spec"`
}

type workloadObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		QueueName string `json:"queueName"`
	} `json:"spec"`
	Status struct {
		Conditions []condition `json:"conditions"`
	} `json:"status"`
}

// waiting says whether Kueue has not admitted the workload and it has
// not finished.
func (w *workloadObject) waiting() bool {
	return !isTrue(w.Status.Conditions, "Admitted") && !isTrue(w.Status.Conditions, "Finished")
}

type ociRepositoryObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		URL string `json:"url"`
	} `json:"spec"`
	Status struct {
		Artifact *struct {
			Revision string            `json:"revision"`
			Metadata map[string]string `json:"metadata"`
		} `json:"artifact"`
		Conditions []condition `json:"conditions"`
	} `json:"status"`
}

type kustomizationObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Path      string `json:"path"`
		SourceRef struct {
			Kind      string `json:"kind"`
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"sourceRef"`
	} `json:"spec"`
	Status struct {
		LastAppliedRevision string      `json:"lastAppliedRevision"`
		Conditions          []condition `json:"conditions"`
	} `json:"status"`
}

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
	if objs.mutatesPodUpdates && len(objs.mutators) > 0 {
		st.Notes = append(st.Notes, "Gatekeeper's mutating webhook ("+gatekeeperMutatingWebhook+") receives pod UPDATEs: on a running pod made before its namespace denied, accelc's mutators would change its spec on its controllers' updates, which the API server refuses (a finalizer is never removed, a Job never completes); install Gatekeeper with the values of mutations/configmap-"+render.GatekeeperValuesName+".yaml (its mutating webhook on CREATE only)")
	}
	if objs.validatesEverything && len(objs.constraints) > 0 {
		st.Notes = append(st.Notes, "Gatekeeper's validating webhook ("+gatekeeperValidatingWebhook+") receives every resource: every write to the cluster (Kueue's Workloads, Events, node Leases, pods' bookkeeping) waits for a webhook call no accelc policy needs; install Gatekeeper with the values of mutations/configmap-"+render.GatekeeperValuesName+".yaml (docs/scale.md)")
	}
	st.Delivery = delivery(objs)
	if checkout != nil {
		st.Delivery.Drift = drift(st.Delivery, m.Cluster.Name, *checkout)
		if other := otherClusters(objs, m.Cluster.Name); len(other) > 0 {
			st.Notes = append(st.Notes, fmt.Sprintf("accelc's objects in this cluster are labelled %s=%s, but the configuration is cluster %s: is this the right --context?",
				clusterLabel, strings.Join(other, ", "), m.Cluster.Name))
		}
	}
	return st
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
