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
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/workloads"
	"github.com/accelc/accelc/policies"
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

// workload is one workload's objects and findings as they are gathered.
type workload struct {
	ref  workloads.Ref
	pods int
	// devices are the accelerators its running pods hold.
	devices int
	// violations are met when its pods are made again, audit by its
	// objects as stored: message → action.
	violations, audit map[string]string
	changes           map[string]bool
	waits             string
}

type auditor struct {
	m *compile.Model
	// pl is m placed on the inventory: each node's pool and GPUs.
	pl         *compile.Placed
	nodeByName map[string]*inventory.Node
	// accelerators are acceleratorPrefixes, once per run.
	accelerators []string
	nodes        map[string]map[string]any
	set          *workloads.Set
	byWorkload   map[workloads.Ref]*workload
	// queued are the pods that would hold quota, with their workload.
	queued []queuedPod
}

type queuedPod struct {
	pod *unstructured.Unstructured
	w   *workload
	key string // the team's quota key
	n   int
}

func (a *auditor) workload(o *unstructured.Unstructured) *workload {
	ref := a.set.Workload(o)
	ref.APIVersion = ""
	w, ok := a.byWorkload[ref]
	if !ok {
		w = &workload{ref: ref, violations: map[string]string{}, audit: map[string]string{}, changes: map[string]bool{}}
		a.byWorkload[ref] = w
	}
	return w
}

// add gathers one object's audit into its workload.
func (a *auditor) add(o *unstructured.Unstructured, oa policytest.ObjectAudit) {
	w := a.workload(o)
	isPod := o.GetKind() == "Pod" && o.GroupVersionKind().Group == ""
	gather(w.audit, oa.Violations)
	if !isPod {
		gather(w.violations, oa.Recreated)
		return
	}
	w.pods++
	if finished(o) {
		return
	}
	w.devices += devices(o, a.accelerators)
	if oa.Enforced == nil {
		return
	}
	gather(w.violations, oa.Recreated)
	var enforced unstructured.Unstructured
	if err := json.Unmarshal(oa.Enforced, &enforced.Object); err != nil {
		return
	}
	for _, c := range a.changes(o, &enforced) {
		w.changes[c] = true
	}
	if key, n, ok := a.holdsQuota(o, &enforced); ok {
		a.queued = append(a.queued, queuedPod{pod: o, w: w, key: key, n: n})
	}
}

// gather adds violations to a message → action set, each message once
// (a workload's expansion repeats what its pods say) at its strongest
// action.
func gather(into map[string]string, vs []policytest.Violation) {
	for _, v := range vs {
		msg := v.Message
		if strings.HasPrefix(msg, "[Implied by ") {
			if i := strings.Index(msg, "] "); i > 0 {
				msg = msg[i+2:]
			}
		}
		into[msg] = strongest(into[msg], v.Action)
	}
}

// The enforcement actions from weakest to strongest.
var actions = []string{"", compile.DryRun, compile.Warn, compile.Deny}

func strongest(a, b string) string {
	if slices.Index(actions, a) >= slices.Index(actions, b) {
		return a
	}
	return b
}

// finished says whether a pod has run to its end: it holds nothing.
func finished(pod *unstructured.Unstructured) bool {
	phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
	return phase == "Succeeded" || phase == "Failed"
}

// changes says what accelc's mutations would change of a running pod.
func (a *auditor) changes(pod, enforced *unstructured.Unstructured) []string {
	var out []string
	team := a.m.TeamOf(pod.GetNamespace())
	queue := enforced.GetLabels()[render.QueueNameLabel]
	if queue != "" && pod.GetLabels()[render.QueueNameLabel] == "" {
		where := "LocalQueue " + queue
		if team != nil {
			where = team.Name + "." + queue
		}
		out = append(out, "would be queued in "+where)
	}
	was, _, _ := unstructured.NestedString(pod.Object, "spec", "priorityClassName")
	now, _, _ := unstructured.NestedString(enforced.Object, "spec", "priorityClassName")
	if now != was {
		if was == "" {
			was = "none"
		}
		out = append(out, fmt.Sprintf("would run at priority class %s (now %s)", now, was))
	}
	nodeName, _, _ := unstructured.NestedString(pod.Object, "spec", "nodeName")
	node, ok := a.nodes[nodeName]
	if !ok {
		return out
	}
	terms, found, _ := unstructured.NestedSlice(enforced.Object, "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	if !found || slices.ContainsFunc(terms, func(t any) bool { return termMatches(t, node) }) {
		return out
	}
	labels, _, _ := unstructured.NestedStringMap(node, "metadata", "labels")
	typ := labels[a.m.Cluster.TypeLabel()]
	if typ == "" {
		typ = "no accelerator type"
	}
	if allowed := requiredValues(terms, a.m.Cluster.TypeLabel()); len(allowed) > 0 {
		out = append(out, fmt.Sprintf("would move off its node's type (%s): it may run on %s", typ, strings.Join(allowed, ", ")))
	} else {
		out = append(out, fmt.Sprintf("would move off its node (%s): its required node affinity would not match it", typ))
	}
	return out
}

// termMatches says whether a node selector term selects the node by its
// labels (matchFields on the name too).
func termMatches(term any, node map[string]any) bool {
	t, _ := term.(map[string]any)
	labels, _, _ := unstructured.NestedStringMap(node, "metadata", "labels")
	name, _, _ := unstructured.NestedString(node, "metadata", "name")
	match := func(exprs any, value func(string) (string, bool)) bool {
		list, _ := exprs.([]any)
		for _, e := range list {
			em, _ := e.(map[string]any)
			k, _ := em["key"].(string)
			op, _ := em["operator"].(string)
			var values []string
			vs, _ := em["values"].([]any)
			for _, v := range vs {
				s, _ := v.(string)
				values = append(values, s)
			}
			v, has := value(k)
			switch op {
			case "In":
				if !has || !slices.Contains(values, v) {
					return false
				}
			case "NotIn":
				if has && slices.Contains(values, v) {
					return false
				}
			case "Exists":
				if !has {
					return false
				}
			case "DoesNotExist":
				if has {
					return false
				}
			default:
				// Gt and Lt: numbers accelc never writes; judged as not
				// matching only when the label is absent.
				if !has {
					return false
				}
			}
		}
		return true
	}
	if len(t) == 0 {
		return false
	}
	return match(t["matchExpressions"], func(k string) (string, bool) { v, ok := labels[k]; return v, ok }) &&
		match(t["matchFields"], func(k string) (string, bool) { return name, k == "metadata.name" })
}

// requiredValues are the values the terms require of key (In), sorted.
func requiredValues(terms []any, key string) []string {
	seen := map[string]bool{}
	for _, term := range terms {
		exprs, _, _ := unstructured.NestedSlice(term.(map[string]any), "matchExpressions")
		for _, e := range exprs {
			em, _ := e.(map[string]any)
			if em["key"] != key || em["operator"] != "In" {
				continue
			}
			vs, _ := em["values"].([]any)
			for _, v := range vs {
				if s, ok := v.(string); ok {
					seen[s] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// holdsQuota says whether a pod would hold its team's quota once its
// namespace denies — through Kueue where its queue label says so, else
// a team ResourceQuota on its accelerator requests — and which quota key
// and how many devices.
func (a *auditor) holdsQuota(pod, enforced *unstructured.Unstructured) (key string, n int, ok bool) {
	team := a.m.TeamOf(pod.GetNamespace())
	if team == nil || len(team.Quota) == 0 {
		return "", 0, false
	}
	if a.m.UsesKueue() && enforced.GetLabels()[render.QueueNameLabel] == "" {
		return "", 0, false
	}
	n = devices(pod, a.accelerators)
	if n == 0 {
		return "", 0, false
	}
	// The quota of the node it runs on, unless enforcement would move it:
	// then of the first type its affinity allows.
	typ := ""
	nodeName, _, _ := unstructured.NestedString(pod.Object, "spec", "nodeName")
	terms, constrained, _ := unstructured.NestedSlice(enforced.Object, "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	if node := a.nodeByName[nodeName]; node != nil && (!constrained || slices.ContainsFunc(terms, func(t any) bool { return termMatches(t, a.nodes[nodeName]) })) {
		typ = node.AcceleratorType
		if pool := a.pl.NodePool(node); pool != nil {
			if _, ok := team.Quota[pool.Name]; ok {
				return pool.Name, n, true
			}
		}
	} else if allowed := requiredValues(terms, a.m.Cluster.TypeLabel()); len(allowed) > 0 {
		typ = allowed[0]
		if p := a.m.Profile(profileOf(pod, a.m)); p != nil && len(p.AcceleratorTypes) > 0 && slices.Contains(allowed, p.AcceleratorTypes[0]) {
			typ = p.AcceleratorTypes[0]
		}
	}
	if typ == "" || typ == "unknown" || typ == "mixed" {
		if p := a.m.Profile(profileOf(pod, a.m)); p != nil && len(p.AcceleratorTypes) > 0 {
			typ = p.AcceleratorTypes[0]
		}
	}
	if typ == "" {
		return "", 0, false
	}
	return typ, n, true
}

// profileOf is the profile a pod names, by ODH's annotation or accelc's
// label.
func profileOf(pod *unstructured.Unstructured, m *compile.Model) string {
	if p := pod.GetAnnotations()[render.ProfileAnnotation]; p != "" {
		return p
	}
	return pod.GetLabels()[m.Cluster.LabelPrefix+"/profile"]
}

// acceleratorPrefixes are the resource names (and prefixes) the policies
// count as accelerators: theirs and every catalog class's.
func acceleratorPrefixes(m *compile.Model) []string {
	prefixes := slices.Clone(policies.BaseResourcePrefixes)
	if m.Catalog == nil {
		return prefixes
	}
	for _, c := range m.Catalog.Classes() {
		prefixes = append(prefixes, c.ResourceName)
	}
	return prefixes
}

// devices counts the accelerators a pod's containers ask for (limits,
// else requests), as the policies count them.
func devices(pod *unstructured.Unstructured, prefixes []string) int {
	isAccelerator := func(r string) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(r, p) })
	}
	total := 0
	containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
	for _, c := range containers {
		cm, _ := c.(map[string]any)
		for _, section := range []string{"limits", "requests"} {
			res, _, _ := unstructured.NestedMap(cm, "resources", section)
			found := false
			for r, q := range res {
				if isAccelerator(r) {
					total += quantity(q)
					found = true
				}
			}
			if found {
				break
			}
		}
	}
	return total
}

// quantity is a device count as a pod spec holds it: a number, or a
// Kubernetes quantity ("2"); 0 when it is neither.
func quantity(q any) int {
	switch v := q.(type) {
	case int64:
		return int(v)
	case float64:
		return int(v)
	case string:
		if parsed, err := resource.ParseQuantity(v); err == nil {
			return int(parsed.Value())
		}
	}
	return 0
}

// quotas walks each team's pods that would hold quota, oldest first, and
// marks the workloads of those beyond the team's quota as waiting.
func (a *auditor) quotas() {
	created := func(p *unstructured.Unstructured) time.Time { return p.GetCreationTimestamp().Time }
	slices.SortStableFunc(a.queued, func(x, y queuedPod) int {
		return cmp.Or(created(x.pod).Compare(created(y.pod)), cmp.Compare(x.pod.GetNamespace(), y.pod.GetNamespace()), cmp.Compare(x.pod.GetName(), y.pod.GetName()))
	})
	held := map[string]map[string]int{} // team → key → devices
	for _, q := range a.queued {
		team := a.m.TeamOf(q.pod.GetNamespace())
		if held[team.Name] == nil {
			held[team.Name] = map[string]int{}
		}
		quota := team.Quota[q.key]
		before := held[team.Name][q.key]
		held[team.Name][q.key] += q.n
		if before+q.n > quota && q.w.waits == "" {
			q.w.waits = fmt.Sprintf("would wait for quota: team %s's quota of %s is %d, and %d are held by workloads started before it (it asks for %d)",
				team.Name, q.key, quota, before, q.n)
		}
	}
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
