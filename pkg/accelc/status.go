package accelc

// The status report, what `accelc status` says of a live cluster, and
// ReadStatus, which reads (status_kube.go) and assembles
// (status_assemble.go) it.

import (
	"context"
	"os/exec"
	"strings"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/workloads"
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
		checkout = &Rendering{Revision: git.Revision, ContentDigest: res.ContentDigest}
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
	if model != nil && objs.admits() {
		objs.identities = k.readIdentities(ctx, model.Cluster.KueueIdentities)
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
