// Package audit says what a rendered tree would do to what a cluster
// runs now, before the tree is applied: which workloads Gatekeeper would
// report or refuse (at their team's stage), which accelc's mutations
// would change once their namespace denies (moved off their node's type,
// queued in Kueue, another priority class), and which would wait for
// their team's quota.
//
// Objects are judged by the policy engine as Gatekeeper's audit judges
// them (policytest.Audit): the object as stored, under no admission
// request, and each pod a workload's ExpansionTemplates make. Findings
// are counted per workload, the object at the top of an object's owners
// (a Deployment's ten replicas, its ReplicaSet and itself are one).
package audit

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/workloads"
)

// Input is what an audit reads: the cluster's model and rendered tree,
// its nodes and what it runs.
type Input struct {
	Model     *compile.Model
	Inventory *inventory.Inventory
	Tree      render.Tree
	Workloads *workloads.Set
	// Source says where the workloads were read (a file, or "live").
	Source string
}

// Report is an audit's findings.
type Report struct {
	Cluster string `json:"cluster"`
	Source  string `json:"source,omitempty"`
	Totals  Totals `json:"totals"`
	// Teams hold the workloads with findings, by team; the namespaces of
	// no team last, as team "".
	Teams []Team `json:"teams"`
	// Kueue is the apiVersion Kueue's Workloads were read in, "" where
	// they were not (Kueue is not served, or the workloads are a
	// snapshot's): only then is Unaccounted known.
	Kueue string `json:"kueue,omitempty"`
	// Unaccounted are the running pods holding accelerators, in
	// namespaces whose team schedules through Kueue, that no admitted
	// Kueue Workload accounts for (workloads.Set.Unaccounted): admission
	// let them past Kueue, and Kueue's quota does not count them.
	Unaccounted []workloads.Unaccounted `json:"unaccounted,omitempty"`
	// Nodes are the nodes the node layer would reconfigure (labels and
	// taints of their pool or MIG config) and the pods that would evict:
	// by this tree where the pool's node stage is deny, else (withheld)
	// once it moves there.
	Nodes []NodeChange `json:"nodes,omitempty"`
	// UnjudgedKinds are the kinds a live cluster serves whose schemas
	// embed pod templates that accelc does not judge at the workload
	// (workloads.ReadUnjudgedKinds): their pods are judged only when made,
	// after the workload was accepted. Read only with --live.
	UnjudgedKinds []workloads.UnjudgedKind `json:"unjudgedKinds,omitempty"`
	Warnings      []string                 `json:"warnings,omitempty"`
}

// Totals count workloads (and their pods) by finding. A workload is
// counted once per kind of finding.
type Totals struct {
	Workloads int `json:"workloads"`
	Pods      int `json:"pods"`
	// Denied would be refused (a namespace at deny), Warned admitted with
	// a warning, Reported only reported (dryrun), when their pods are
	// made again; Audited will be listed by Gatekeeper's audit.
	Audited  int `json:"audited"`
	Denied   int `json:"denied"`
	Warned   int `json:"warned"`
	Reported int `json:"reported"`
	// Changed would be changed by accelc's mutations once its namespace
	// denies; Waiting would wait for its team's quota.
	Changed int `json:"changed"`
	Waiting int `json:"waiting"`
	// Unaccounted counts the pods of Report.Unaccounted.
	Unaccounted int `json:"unaccounted"`
	// Reconfigured counts the nodes this tree reconfigures, Withheld
	// those it would at deny; Evicted the pods either would evict.
	Reconfigured int `json:"reconfigured"`
	Withheld     int `json:"withheld"`
	Evicted      int `json:"evicted"`
	// Stranded counts the workloads running accelerators now whose pods
	// would be denied if made again (a profile retired, an entitlement or
	// type taken away, a namespace moved to deny): they keep running and
	// finish, since an UPDATE is judged only for what it adds, but a pod
	// that ends is not replaced. StrandedDevices are the accelerators
	// they hold.
	Stranded        int `json:"stranded"`
	StrandedDevices int `json:"strandedDevices"`
}

// Team is a team's workloads with findings.
type Team struct {
	// Name is "" for namespaces of no team.
	Name       string      `json:"name"`
	Stage      string      `json:"stage"`
	Namespaces []Namespace `json:"namespaces"`
}

// Namespace is a namespace's workloads with findings.
type Namespace struct {
	Name      string    `json:"name"`
	Stage     string    `json:"stage"`
	Workloads []Finding `json:"workloads"`
}

// Finding is what the tree would do to one workload.
type Finding struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Pods int    `json:"pods"`
	// Devices are the accelerators its running pods hold.
	Devices int `json:"devices,omitempty"`
	// Action is what admission would do, at its namespace's stage, with
	// the Violations its pods meet when they are made again: deny, warn
	// or dryrun; "" when they meet none.
	Action     string   `json:"action,omitempty"`
	Violations []string `json:"violations,omitempty"`
	// Audited says Gatekeeper's audit will list the workload (its
	// objects as they are stored); AuditOnly are the violations it will
	// list that its pods, made again, would not meet (what accelc's
	// mutations fix).
	Audited   bool     `json:"audited"`
	AuditOnly []string `json:"auditOnly,omitempty"`
	// Changes are what accelc's mutations would change of its pods once
	// the namespace denies.
	Changes []string `json:"changes,omitempty"`
	// Waits says why it would wait for its team's quota.
	Waits string `json:"waits,omitempty"`
}

// Run audits what in.Workloads holds against in.Tree.
func Run(ctx context.Context, in Input) (*Report, error) {
	m, set := in.Model, in.Workloads
	enforcing, err := enforcingTree(m, in.Inventory)
	if err != nil {
		return nil, err
	}
	// The model laid over the nodes once: each node's pool and GPUs.
	pl := m.Place(in.Inventory)
	nodes := syncedNodes(pl)
	data := make([][]byte, 0, len(nodes))
	for _, n := range slices.Sorted(maps.Keys(nodes)) {
		b, err := json.Marshal(nodes[n])
		if err != nil {
			return nil, err
		}
		data = append(data, b)
	}
	namespaces := map[string]bool{}
	for _, t := range m.Teams {
		for _, ns := range t.Namespaces {
			namespaces[ns] = true
		}
	}
	objects := make([][]byte, len(set.Objects))
	for i, o := range set.Objects {
		if o.GetNamespace() != "" {
			namespaces[o.GetNamespace()] = true
		}
		if objects[i], err = json.Marshal(o.Object); err != nil {
			return nil, err
		}
		if o.GetKind() == "ResourceClaim" {
			// Gatekeeper syncs the claims pods name.
			data = append(data, objects[i])
		}
	}
	audits, err := policytest.Audit(ctx, in.Tree, enforcing, slices.Sorted(maps.Keys(namespaces)), data, objects)
	if err != nil {
		return nil, err
	}
	a := &auditor{m: m, pl: pl, nodeByName: map[string]*inventory.Node{}, accelerators: acceleratorPrefixes(m), nodes: nodes, set: set, byWorkload: map[workloads.Ref]*workload{}}
	if in.Inventory != nil {
		for i := range in.Inventory.Nodes {
			a.nodeByName[in.Inventory.Nodes[i].Name] = &in.Inventory.Nodes[i]
		}
	}
	for i, o := range set.Objects {
		if audits[i].Error != "" {
			return nil, fmt.Errorf("%s: %s", workloads.RefOf(o), audits[i].Error)
		}
		a.add(o, audits[i])
	}
	a.quotas()
	r := a.report(in.Source, set.Warnings)
	r.Nodes = a.nodeChanges()
	for _, c := range r.Nodes {
		if c.Applied {
			r.Totals.Reconfigured++
		} else {
			r.Totals.Withheld++
		}
		r.Totals.Evicted += len(c.Evicted)
	}
	if r.Kueue = set.Kueue; r.Kueue != "" {
		r.Unaccounted = set.Unaccounted(KueueAccounting(m))
		r.Totals.Unaccounted = len(r.Unaccounted)
	}
	return r, nil
}

// KueueAccounting says which pods Kueue must account for in m's
// cluster: those holding accelerators (the resources the policies count,
// acceleratorPrefixes, or DRA claims) in the namespaces of a team with a
// profile that schedules through Kueue (compile.Model.QueueTeams), but
// for pods holding only claims of a profile that schedules by node.
func KueueAccounting(m *compile.Model) workloads.AccountOptions {
	queued := map[string]map[string]bool{} // namespace → profile → queued
	for i := range m.Profiles {
		p := &m.Profiles[i]
		for _, t := range m.QueueTeams(p) {
			for _, ns := range t.Namespaces {
				if queued[ns] == nil {
					queued[ns] = map[string]bool{}
				}
				queued[ns][p.Name] = true
			}
		}
	}
	prefixes := acceleratorPrefixes(m)
	return workloads.AccountOptions{
		Queued: func(ns, profile string, claimsOnly bool) bool {
			profiles, ok := queued[ns]
			if !ok {
				return false
			}
			return !claimsOnly || profiles[profile] || m.Profile(profile) == nil
		},
		Accelerator: func(r string) bool {
			return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(r, p) })
		},
		ProfileLabel: m.Cluster.LabelPrefix + "/profile",
	}
}

// enforcingTree is the tree rendered with every team and the cluster at
// deny: its mutators are what enforcement would do to each pod.
func enforcingTree(m *compile.Model, inv *inventory.Inventory) (render.Tree, error) {
	objs, err := render.Render(m.Enforced(), inv)
	if err != nil {
		return nil, err
	}
	return render.BuildTree(m.Cluster.Name, objs, render.Provenance{})
}

// syncedNodes are the inventory's nodes as the policies will read them
// once Gatekeeper syncs them after the tree is applied: accelc's type and
// pool labels (the tree's NodeFeatureRules put them on; a pool's only at
// its node stage deny, or where the node has it already) and the
// accelerator capacity — all the policies read of a Node (policies/lib:
// nodes). Nothing else of a node is sent, so that the replicas of a
// workload on nodes alike share one judgement.
func syncedNodes(pl *compile.Placed) map[string]map[string]any {
	m, inv := pl.Model, pl.Inventory
	out := map[string]map[string]any{}
	for i := range inv.Nodes {
		n := &inv.Nodes[i]
		labels := map[string]any{}
		if _, ok := m.Catalog.Get(n.AcceleratorType); ok {
			labels[m.Cluster.TypeLabel()] = n.AcceleratorType
		}
		if pool := pl.NodePool(n); pool != nil {
			if has, _ := n.Label(m.Cluster.PoolLabel()); pool.Reconfigured() || has == pool.Name {
				labels[m.Cluster.PoolLabel()] = pool.Name
			}
		}
		node := map[string]any{
			"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": n.Name, "labels": labels},
		}
		if n.Resource != "" {
			q := map[string]any{n.Resource: fmt.Sprint(n.Allocatable)}
			node["status"] = map[string]any{"capacity": q, "allocatable": q}
		}
		out[n.Name] = node
	}
	return out
}

// report sorts the findings into a Report.
func (a *auditor) report(source string, warnings []string) *Report {
	r := &Report{Cluster: a.m.Cluster.Name, Source: source, Warnings: warnings, Teams: []Team{}}
	teams := map[string]*Team{}
	nsOf := map[[2]string]int{} // (team, namespace) → index in the team's Namespaces
	for _, ref := range slices.SortedFunc(maps.Keys(a.byWorkload), func(x, y workloads.Ref) int {
		return cmp.Or(cmp.Compare(x.Namespace, y.Namespace), cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Name, y.Name))
	}) {
		w := a.byWorkload[ref]
		r.Totals.Workloads++
		r.Totals.Pods += w.pods
		f := Finding{Kind: ref.Kind, Name: ref.Name, Pods: w.pods, Devices: w.devices, Waits: w.waits, Audited: len(w.audit) > 0}
		for msg, action := range w.violations {
			f.Action = strongest(f.Action, action)
			f.Violations = append(f.Violations, msg)
		}
		slices.Sort(f.Violations)
		for msg := range w.audit {
			if _, ok := w.violations[msg]; !ok {
				f.AuditOnly = append(f.AuditOnly, msg)
			}
		}
		slices.Sort(f.AuditOnly)
		if f.Audited {
			r.Totals.Audited++
		}
		f.Changes = slices.Sorted(maps.Keys(w.changes))
		switch f.Action {
		case compile.Deny:
			r.Totals.Denied++
			if f.Devices > 0 {
				r.Totals.Stranded++
				r.Totals.StrandedDevices += f.Devices
			}
		case compile.Warn:
			r.Totals.Warned++
		case compile.DryRun:
			r.Totals.Reported++
		}
		if len(f.Changes) > 0 {
			r.Totals.Changed++
		}
		if f.Waits != "" {
			r.Totals.Waiting++
		}
		if f.Action == "" && !f.Audited && len(f.Changes) == 0 && f.Waits == "" {
			continue
		}
		teamName, stage := "", a.m.Stage(ref.Namespace)
		if t := a.m.TeamOf(ref.Namespace); t != nil {
			teamName = t.Name
		}
		t, ok := teams[teamName]
		if !ok {
			t = &Team{Name: teamName, Stage: a.m.Cluster.Enforcement}
			if tm := a.m.TeamOf(ref.Namespace); tm != nil {
				t.Stage = cmp.Or(tm.Enforcement, a.m.Cluster.Enforcement)
			}
			teams[teamName] = t
		}
		key := [2]string{teamName, ref.Namespace}
		i, ok := nsOf[key]
		if !ok {
			t.Namespaces = append(t.Namespaces, Namespace{Name: ref.Namespace, Stage: stage})
			i = len(t.Namespaces) - 1
			nsOf[key] = i
		}
		t.Namespaces[i].Workloads = append(t.Namespaces[i].Workloads, f)
	}
	for _, name := range slices.Sorted(maps.Keys(teams)) {
		if name != "" {
			r.Teams = append(r.Teams, *teams[name])
		}
	}
	if t, ok := teams[""]; ok {
		r.Teams = append(r.Teams, *t)
	}
	return r
}

// EvictsNow counts the running pods the node layer's changes at their
// pools' current stage (not those withheld until deny) would evict.
func (r *Report) EvictsNow() int {
	n := 0
	for _, c := range r.Nodes {
		if c.Applied {
			n += len(c.Evicted)
		}
	}
	return n
}

// Failed says whether the report holds a finding at or above the stage
// failOn names: deny (workloads that would be refused), warn (refused or
// warned about) or dryrun (any violation); "" fails on nothing. A pod
// that Kueue does not account for, and a running pod the node layer's
// applied changes would evict, fail at every stage: the first holds
// devices outside its team's quota now, the second would stop when the
// commit lands.
func (r *Report) Failed(failOn string) bool {
	if failOn != "" && (r.Totals.Unaccounted > 0 || r.EvictsNow() > 0) {
		return true
	}
	switch failOn {
	case compile.Deny:
		return r.Totals.Denied > 0
	case compile.Warn:
		return r.Totals.Denied+r.Totals.Warned > 0
	case compile.DryRun:
		return r.Totals.Denied+r.Totals.Warned+r.Totals.Reported > 0
	}
	return false
}
