package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// EscapeCheck is the semantic escape check: it generates random pods and
// workloads, runs each through a cluster's rendered mutators and admission
// constraint with Gatekeeper's own engine, and for every one admitted
// computes from the inventory the nodes kube-scheduler could place it on
// and the devices its containers could reach there. The invariant: every
// such device is one the device plugin handed the container, of a type the
// pod's team may use, reached through an enabled profile the team may use
// (a typed profile's own types), or, in a generic GPU namespace, of its
// team's types.
//
// What a container reaches on a node: the devices of the resource it
// asks for (the node must offer it); every device when it is privileged,
// mounts a device host path or sets a device-visibility variable; any
// device through a DRA claim. A variable that comes by envFrom or with the
// image reaches nothing: the node layer accelc renders (the container
// toolkit ignores it from unprivileged containers) stops it.
type EscapeCheck struct {
	model    *compile.Model
	reviewer *Reviewer
	mutator  *Mutator
	nodes    []simNode
	teamOf   map[string]*compile.Team
	// namespaces are where generated pods go: the teams', the generic
	// GPU namespaces and one that belongs to no team.
	namespaces []string
	taintKeys  []string
	resources  []string
	vocab      vocabulary
	// deviceClasses are the DeviceClasses the rendered tree makes and the
	// NVIDIA DRA driver's own where the cluster uses DRA.
	deviceClasses []string
	// Validator, when set, keeps only what Kubernetes' own validation
	// accepts: a generated object the API server would refuse never
	// reaches admission, so it is counted and not judged.
	Validator *Validator
}

type simNode struct {
	name, typ string
	node      *inventory.Node // nil for the CPU node
	labels    map[string]string
	taints    []inventory.Taint
	offers    map[string]bool
}

// NewEscapeCheck loads a rendered tree's constraint and mutators and the
// inventory's nodes, labelled and tainted as accelc's node rules make them.
func NewEscapeCheck(ctx context.Context, m *compile.Model, inv *inventory.Inventory, tree render.Tree) (*EscapeCheck, error) {
	e := &EscapeCheck{model: m, teamOf: map[string]*compile.Team{}}
	for i := range m.Teams {
		for _, ns := range m.Teams[i].Namespaces {
			e.teamOf[ns] = &m.Teams[i]
			e.namespaces = append(e.namespaces, ns)
		}
	}
	for _, ns := range m.Cluster.GenericGPUNamespaces {
		if !slices.Contains(e.namespaces, ns) {
			e.namespaces = append(e.namespaces, ns)
		}
	}
	e.namespaces = append(e.namespaces, "no-team")

	var err error
	if e.mutator, err = NewMutator(tree, e.namespaces); err != nil {
		return nil, err
	}
	var data []*unstructured.Unstructured
	taints := map[string]bool{}
	resources := map[string]bool{}
	for i := range inv.Nodes {
		n := &inv.Nodes[i]
		sn := simNode{name: n.Name, typ: n.AcceleratorType, node: n, labels: map[string]string{}, taints: n.Taints, offers: map[string]bool{}}
		if _, ok := m.Catalog.Get(n.AcceleratorType); ok {
			sn.labels[m.Cluster.TypeLabel()] = n.AcceleratorType
		}
		if n.Resource != "" {
			sn.offers[n.Resource] = true
		}
		if n.Vendor == "aws" {
			// The Neuron device plugin offers a node's devices and their
			// cores at once (older releases the devices under two names).
			for _, r := range neuronResources {
				sn.offers[r] = true
			}
		}
		for p := range n.MIGDevices {
			sn.offers["nvidia.com/mig-"+p] = true
		}
		if pool := m.PoolOf(n.Name, n.AcceleratorType); pool != nil {
			sn.labels[m.Cluster.PoolLabel()] = pool.Name
			if pool.Taint != nil && !slices.ContainsFunc(sn.taints, func(t inventory.Taint) bool { return t.Key == pool.Taint.Key }) {
				sn.taints = append(slices.Clone(sn.taints), inventory.Taint{Key: pool.Taint.Key, Value: pool.Taint.Value, Effect: pool.Taint.Effect})
			}
			if class, ok := m.Catalog.Get(pool.AcceleratorType); ok {
				// What the node offers once reconfigured, too.
				switch {
				case pool.Sharing == compile.ShareMIG && m.Cluster.MIGStrategy() == "mixed":
					for p := range pool.Layout {
						sn.offers["nvidia.com/mig-"+p] = true
					}
				case pool.Renamed:
					sn.offers[class.ResourceName+".shared"] = true
				default:
					sn.offers[class.ResourceName] = true
				}
			}
		}
		for r := range sn.offers {
			resources[r] = true
		}
		for _, t := range sn.taints {
			taints[t.Key] = true
		}
		e.nodes = append(e.nodes, sn)
		data = append(data, syncedNode(sn))
	}
	cpu := simNode{name: "cpu-node", labels: map[string]string{}, offers: map[string]bool{}}
	e.nodes = append(e.nodes, cpu)
	data = append(data, syncedNode(cpu))
	if e.reviewer, err = NewReviewer(ctx, tree, data...); err != nil {
		return nil, err
	}
	for k := range taints {
		e.taintKeys = append(e.taintKeys, k)
	}
	slices.Sort(e.taintKeys)
	for _, p := range m.Profiles {
		resources[p.ResourceName] = true
	}
	for _, r := range []string{"nvidia.com/gpu", "amd.com/gpu", "nvidia.com/mig-1g.10gb", "deviceclass.resource.kubernetes.io/gpu.nvidia.com", "gpu.intel.com/i915"} {
		resources[r] = true
	}
	// Hostile pods ask for the devices of every vendor the cluster's
	// catalog types its nodes with: TPU chips, Neuron devices and cores.
	for _, c := range m.Catalog.Classes() {
		switch c.Vendor {
		case "google":
			resources[c.ResourceName] = true
		case "aws":
			for _, r := range neuronResources {
				resources[r] = true
			}
		}
	}
	for r := range resources {
		e.resources = append(e.resources, r)
	}
	slices.Sort(e.resources)
	e.vocab = newVocabulary(m, e.nodes)
	for _, p := range tree.Paths() {
		if name, ok := strings.CutPrefix(p, "dra/deviceclass-"); ok {
			e.deviceClasses = append(e.deviceClasses, strings.TrimSuffix(name, ".yaml"))
		}
	}
	if m.Cluster.DRA != nil {
		e.deviceClasses = append(e.deviceClasses, "gpu.nvidia.com")
	}
	return e, nil
}

// syncedNode is the Node Gatekeeper would sync.
func syncedNode(n simNode) *unstructured.Unstructured {
	labels := map[string]any{}
	for k, v := range n.labels {
		labels[k] = v
	}
	capacity := map[string]any{"cpu": "64"}
	for r := range n.offers {
		capacity[r] = "8"
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Node",
		"metadata": map[string]any{"name": n.name, "labels": labels},
		"status":   map[string]any{"capacity": capacity},
	}}
	return u
}

// Escape is an admitted pod that breaks the invariant.
type Escape struct {
	// Why says what the pod reaches and why it may not.
	Why string
	// Pod is the pod as generated (a workload for those), and Admitted
	// as the mutators left it and the constraint admitted it, as YAML.
	Pod, Admitted string
}

// EscapeReport counts what a run generated.
type EscapeReport struct {
	Pods, Admitted, Reaching int
	// Workloads are the generated objects that were workloads, each
	// judged at the workload and as the pod its controller makes.
	Workloads int
	// Updates are the UPDATEs of admitted objects among Pods.
	Updates int
	// Claims are the ResourceClaims and ResourceClaimTemplates generated,
	// of every served version, and ClaimsAdmitted those admitted.
	Claims, ClaimsAdmitted int
	Escapes                []Escape
	// Disagreements are workloads admitted where the pod their controller
	// makes is denied, or denied where it is admitted.
	Disagreements []Escape
	// Legitimate counts the legitimate pods and workloads generated;
	// FalseDenials are those denied (at the workload or as their pod).
	Legitimate   int
	FalseDenials []Escape
	// Refused counts the generated objects Kubernetes' own validation
	// refuses (with a Validator), left out of the rest; InvalidLegitimate
	// are legitimate ones it refuses, a fault of the generator.
	Refused           int
	RefusedWhy        map[string]int
	InvalidLegitimate []Escape
}

// Run generates n pods and workloads from the seed and checks each (and,
// for some admitted ones, an UPDATE), and n legitimate ones, each of
// which must be admitted.
func (e *EscapeCheck) Run(ctx context.Context, seed uint64, n int) (EscapeReport, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var rep EscapeReport
	refuse := func(why string) {
		rep.Refused++
		if rep.RefusedWhy == nil {
			rep.RefusedWhy = map[string]int{}
		}
		rep.RefusedWhy[refusalKind(why)]++
	}
	check := func(i int, req Request) (verdict, bool, error) {
		if why, err := e.refused(req.Object.Object); err != nil {
			return verdict{}, false, err
		} else if why != "" {
			refuse(why)
			return verdict{}, false, nil
		}
		rep.Pods++
		if req.Operation == "UPDATE" {
			rep.Updates++
		}
		v, err := e.verdict(ctx, req)
		if err != nil {
			return v, false, fmt.Errorf("object %d: %w", i, err)
		}
		if len(v.pods) > 0 {
			rep.Workloads++
			if d, ok := v.disagreement(); ok {
				rep.Disagreements = append(rep.Disagreements, d)
			}
		}
		// What runs is the pod: the workload's controllers', judged on
		// the pod path, and the workload's own expansions.
		for _, admitted := range v.admitted() {
			rep.Admitted++
			reaches, why := e.judge(admitted.Object)
			if reaches {
				rep.Reaching++
				if why == "" && len(v.pods) > 0 && len(v.d.Messages) == 0 {
					why = e.kueueEscape(v.d.Stored)
				}
			}
			if why != "" {
				raw, _ := yaml.Marshal(v.written)
				out, _ := yaml.Marshal(admitted.Object)
				rep.Escapes = append(rep.Escapes, Escape{Why: why, Pod: string(raw), Admitted: string(out)})
			}
		}
		return v, len(v.d.Messages) == 0, nil
	}
	for i := 0; i < n; i++ {
		if rng.Float64() < 0.05 {
			// A claim: judged as written, in its version.
			obj := e.generateClaim(rng, i)
			rep.Claims++
			d, err := e.mutator.Admit(ctx, e.reviewer, Request{Object: &unstructured.Unstructured{Object: obj}})
			if err != nil {
				return rep, fmt.Errorf("claim %d: %w", i, err)
			}
			if len(d.Messages) == 0 {
				rep.ClaimsAdmitted++
				if _, why := e.judgeClaim(obj); why != "" {
					raw, _ := yaml.Marshal(obj)
					rep.Escapes = append(rep.Escapes, Escape{Why: why, Pod: string(raw), Admitted: string(raw)})
				}
			}
			continue
		}
		obj := e.generate(rng, i)
		v, admitted, err := check(i, Request{Object: &unstructured.Unstructured{Object: obj}})
		if err != nil {
			return rep, err
		}
		if !admitted || rng.Float64() >= 0.3 {
			continue
		}
		if req, ok := e.update(rng, i, v.d.Stored); ok {
			if _, _, err := check(i, req); err != nil {
				return rep, err
			}
		}
	}
	for i := 0; i < n; i++ {
		obj, ok := e.legitimateObject(rng, i)
		if !ok {
			continue
		}
		rep.Legitimate++
		if why, err := e.refused(obj); err != nil {
			return rep, err
		} else if why != "" {
			raw, _ := yaml.Marshal(obj)
			rep.InvalidLegitimate = append(rep.InvalidLegitimate, Escape{Why: why, Pod: string(raw)})
			continue
		}
		v, err := e.verdict(ctx, Request{Object: &unstructured.Unstructured{Object: obj}})
		if err != nil {
			return rep, fmt.Errorf("legitimate object %d: %w", i, err)
		}
		msgs := slices.Clone(v.d.Messages)
		var out []byte
		for _, p := range v.pods {
			msgs = append(msgs, p.d.Messages...)
			if len(p.d.Messages) > 0 && out == nil {
				out, _ = yaml.Marshal(p.d.Stored.Object)
			}
		}
		if len(msgs) > 0 {
			raw, _ := yaml.Marshal(v.written)
			if out == nil {
				out, _ = yaml.Marshal(v.d.Stored.Object)
			}
			rep.FalseDenials = append(rep.FalseDenials, Escape{Why: strings.Join(msgs, "; "), Pod: string(raw), Admitted: string(out)})
		}
	}
	return rep, nil
}

// refusalKind is the first error of a refusal without its indices and
// values: what kind of object Kubernetes refused.
func refusalKind(why string) string {
	first, _, _ := strings.Cut(strings.TrimPrefix(why, "["), ", ")
	first, _, _ = strings.Cut(first, ": Invalid value")
	return indexRE.ReplaceAllString(first, "[]")
}

var indexRE = regexp.MustCompile(`\[\d+\]`)

// refused says why Kubernetes' validation refuses obj ("" when it
// accepts it, or when there is no Validator). A kind that is not the
// API server's own (a Notebook, a PyTorchJob, whose CRDs check little) is
// validated as the pods its controllers make.
func (e *EscapeCheck) refused(obj map[string]any) (string, error) {
	if e.Validator == nil {
		return "", nil
	}
	u := &unstructured.Unstructured{Object: obj}
	if !builtinKinds[u.GetKind()] {
		for _, p := range ControllerPods(u) {
			if why, err := e.Validator.Validate(p.Pod.Object); err != nil || why != "" {
				return why, err
			}
		}
		return "", nil
	}
	return e.Validator.Validate(obj)
}

// builtinKinds are the kinds k8s-validate validates itself.
var builtinKinds = map[string]bool{"Pod": true, "Deployment": true, "StatefulSet": true, "ReplicaSet": true, "DaemonSet": true, "Job": true, "CronJob": true}

// verdict is what admission does with a request, and, for a workload,
// with each pod its controllers make from it as stored (labelled by the
// workload policy), admitted on the pod path.
type verdict struct {
	written map[string]any
	d       Decision
	pods    []podVerdict
}

type podVerdict struct {
	where string
	d     Decision
}

func (e *EscapeCheck) verdict(ctx context.Context, req Request) (verdict, error) {
	v := verdict{written: runtime.DeepCopyJSON(req.Object.Object)}
	var err error
	if v.d, err = e.mutator.Admit(ctx, e.reviewer, req); err != nil {
		raw, _ := yaml.Marshal(v.written)
		return v, fmt.Errorf("admitting: %w\n%s", err, raw)
	}
	for _, p := range ControllerPods(v.d.Stored) {
		d, err := e.mutator.Admit(ctx, e.reviewer, Request{Object: p.Pod})
		if err != nil {
			return v, fmt.Errorf("admitting the pod of %s: %w", p.Where, err)
		}
		v.pods = append(v.pods, podVerdict{where: p.Where, d: d})
	}
	return v, nil
}

// admitted are the pods admission lets run: the pod, a workload's
// expansions where the workload is admitted, and its controllers' pods
// where each is.
func (v verdict) admitted() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	if len(v.d.Messages) == 0 {
		if v.d.Stored.GetKind() == "Pod" {
			out = append(out, v.d.Stored)
		}
		out = append(out, v.d.Expanded...)
	}
	for _, p := range v.pods {
		if len(p.d.Messages) == 0 {
			out = append(out, p.d.Stored)
		}
	}
	return out
}

// disagreement reports a workload admitted where a pod its controllers
// make is denied, or denied, for what its pods hold, where every pod is
// admitted. (Kueue's labels on the workload itself are the workload's
// own: its pods do not carry them.)
func (v verdict) disagreement() (Escape, bool) {
	raw, _ := yaml.Marshal(v.written)
	own := "entitlement: " + v.d.Stored.GetKind() + " " + v.d.Stored.GetName() + ": "
	podLevel := slices.DeleteFunc(slices.Clone(v.d.Messages), func(m string) bool { return strings.HasPrefix(m, own) })
	var denied []podVerdict
	for _, p := range v.pods {
		if len(p.d.Messages) > 0 {
			denied = append(denied, p)
		}
	}
	switch {
	case len(v.d.Messages) == 0 && len(denied) > 0:
		pod, _ := yaml.Marshal(denied[0].d.Stored.Object)
		return Escape{Why: fmt.Sprintf("the %s is admitted but the pod its controller makes from %s is denied: %s", v.written["kind"], denied[0].where, strings.Join(denied[0].d.Messages, "; ")), Pod: string(raw), Admitted: string(pod)}, true
	case len(podLevel) > 0 && len(denied) == 0:
		pod, _ := yaml.Marshal(v.pods[0].d.Stored.Object)
		return Escape{Why: fmt.Sprintf("the %s is denied (%s) but every pod its controllers make is admitted", v.written["kind"], strings.Join(podLevel, "; ")), Pod: string(raw), Admitted: string(pod)}, true
	}
	return Escape{}, false
}

// judge says whether an admitted pod reaches devices, and why that breaks
// the invariant ("" when it does not).
func (e *EscapeCheck) judge(pod map[string]any) (bool, string) {
	spec, _ := pod["spec"].(map[string]any)
	md, _ := pod["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	team := e.teamOf[ns]
	generic := slices.Contains(e.model.Cluster.GenericGPUNamespaces, ns)
	profile := e.profileOf(md)

	// A claim from its DRA profile's ResourceClaimTemplate reaches the
	// devices of the template's DeviceClass, of the profile's types, on
	// whatever node holds one: the claims policy governed the template,
	// so what is left to check is that the team may use the profile.
	draClaim := ownDRAClaims(spec, profile)
	if draClaim {
		switch {
		case team == nil:
			return true, fmt.Sprintf("a claim of profile %s in namespace %s, which belongs to no team", profile.Name, ns)
		case !team.MayUse(profile):
			return true, fmt.Sprintf("a claim of profile %s, which team %s may not use", profile.Name, team.Name)
		}
	}
	reaches := draClaim
	for _, n := range e.nodes {
		if !e.feasible(spec, n) {
			continue
		}
		what, outside := e.reach(spec, n, draClaim)
		if what == "" {
			continue
		}
		reaches = true
		switch {
		case outside:
			return true, fmt.Sprintf("%s on node %s (%s) sees devices the device plugin did not hand it", what, n.name, n.typ)
		case generic && team == nil:
			// A generic GPU namespace of no team: the admins' declared
			// allowance.
		case team == nil:
			return true, fmt.Sprintf("%s on node %s (%s), and namespace %s belongs to no team", what, n.name, n.typ, ns)
		case !slices.Contains(team.AcceleratorTypes, n.typ):
			return true, fmt.Sprintf("%s on node %s: team %s may not use %s", what, n.name, team.Name, n.typ)
		case generic && profile == nil:
			// A generic namespace's pod without a profile, on the team's types.
		case profile == nil:
			return true, fmt.Sprintf("%s on node %s (%s) without an enabled profile", what, n.name, n.typ)
		case !team.MayUse(profile):
			return true, fmt.Sprintf("%s on node %s (%s) through profile %s, which team %s may not use", what, n.name, n.typ, profile.Name, team.Name)
		case !profile.Generic() && !slices.Contains(profile.AcceleratorTypes, n.typ):
			return true, fmt.Sprintf("%s on node %s: profile %s does not run on %s", what, n.name, profile.Name, n.typ)
		}
	}
	if reaches && team != nil && profile != nil {
		if why := e.kueueLabels(mapOf(md["labels"]), team, []*compile.Profile{profile}); why != "" {
			return true, "the pod " + why
		}
	}
	return reaches, ""
}

// kueueLabels says how Kueue labels that reach devices through profiles
// break the invariant ("" when they do not): the queue must be the
// profiles' LocalQueue where they schedule through Kueue, and the
// priority class the profile's own, or (a profile without one) a class
// no higher than the team's tier.
func (e *EscapeCheck) kueueLabels(labels map[string]any, team *compile.Team, profiles []*compile.Profile) string {
	m := e.model
	for _, p := range profiles {
		if q, ok := labels[render.QueueNameLabel].(string); ok && len(m.QueueTeams(p)) > 0 && q != render.LocalQueueName(p) {
			return fmt.Sprintf("is queued in %s, not profile %s's LocalQueue %s", q, p.Name, render.LocalQueueName(p))
		}
		c, ok := labels[render.WorkloadPriorityLabel].(string)
		if !ok {
			continue
		}
		if p.PriorityClassName != "" {
			if c != p.PriorityClassName {
				return fmt.Sprintf("is ranked by Kueue at %s, not profile %s's class %s", c, p.Name, p.PriorityClassName)
			}
			continue
		}
		tier, ok := m.Cluster.PriorityClasses[team.Priority]
		if team.Priority == "" || !ok {
			continue
		}
		if got, ok := m.Cluster.PriorityClasses[c]; !ok || got.Value > tier.Value {
			return fmt.Sprintf("is ranked by Kueue at %s, above team %s's tier %s", c, team.Name, team.Priority)
		}
	}
	return ""
}

// kueueWholeKinds are the kinds Kueue admits as one workload, reading
// its queue and priority from the workload's own labels (Kueue has no
// integration for ReplicaSets or DaemonSets: their pods are judged by
// their own labels).
var kueueWholeKinds = map[string]bool{"Job": true, "CronJob": true, "JobSet": true, "PyTorchJob": true, "RayCluster": true, "Deployment": true, "StatefulSet": true}

// kueueEscape judges an admitted workload's own Kueue labels against the
// profiles its templates name.
func (e *EscapeCheck) kueueEscape(w *unstructured.Unstructured) string {
	team := e.teamOf[w.GetNamespace()]
	if team == nil || !kueueWholeKinds[w.GetKind()] {
		return ""
	}
	labels := mapOf(mapOf(w.Object["metadata"])["labels"])
	if w.GetKind() == "CronJob" {
		labels, _, _ = unstructured.NestedMap(w.Object, "spec", "jobTemplate", "metadata", "labels")
	}
	var profiles []*compile.Profile
	for _, p := range ControllerPods(w) {
		if prof := e.profileOf(mapOf(p.Pod.Object["metadata"])); prof != nil {
			profiles = append(profiles, prof)
		}
	}
	if why := e.kueueLabels(labels, team, profiles); why != "" {
		return fmt.Sprintf("the %s %s", w.GetKind(), why)
	}
	return ""
}

// judgeClaim says whether an admitted ResourceClaim or
// ResourceClaimTemplate reaches devices, and why that breaks the
// invariant ("" when it does not), read here from the object in any of
// the versions, independently of the policy: each request (or
// alternative) of a DeviceClass the cluster has must be of a class its
// namespace's team may claim, within the count its profiles hand out
// (all its requests of the class together), never all of a node's
// devices or with admin access.
func (e *EscapeCheck) judgeClaim(obj map[string]any) (bool, string) {
	md := mapOf(obj["metadata"])
	ns, _ := md["namespace"].(string)
	spec := mapOf(obj["spec"])
	if obj["kind"] == "ResourceClaimTemplate" {
		spec = mapOf(spec["spec"])
	}
	var limits map[string]int
	team := e.teamOf[ns]
	if team != nil {
		limits = e.model.TeamDeviceClasses(team)
	}
	reaches := false
	counts := map[string]int{}
	for _, r := range list(mapOf(spec["devices"])["requests"]) {
		alternatives := list(r["firstAvailable"])
		if exact := mapOf(r["exactly"]); exact != nil {
			alternatives = append(alternatives, exact)
		}
		if class, ok := r["deviceClassName"].(string); ok && class != "" {
			alternatives = append(alternatives, r)
		}
		// One alternative of firstAvailable is allocated: the request
		// holds the most any of them asks for.
		most := map[string]int{}
		for _, a := range alternatives {
			class, _ := a["deviceClassName"].(string)
			if !slices.Contains(e.deviceClasses, class) {
				continue // no such class: it reaches nothing
			}
			reaches = true
			n := 1
			if c, ok := a["count"].(int64); ok {
				n = int(c)
			}
			most[class] = max(most[class], n)
			limit, may := limits[class]
			switch {
			case team == nil:
				return true, fmt.Sprintf("a claim of DeviceClass %s in namespace %s, which belongs to no team", class, ns)
			case !may:
				return true, fmt.Sprintf("a claim of DeviceClass %s, which team %s may not claim", class, team.Name)
			case a["allocationMode"] == "All":
				return true, fmt.Sprintf("a claim of every %s device of a node", class)
			case a["adminAccess"] == true:
				return true, fmt.Sprintf("a claim of %s devices with admin access", class)
			case counts[class]+most[class] > limit:
				return true, fmt.Sprintf("a claim of %d %s devices; team %s's profiles hand out %d", counts[class]+most[class], class, team.Name, limit)
			}
		}
		for class, n := range most {
			counts[class] += n
		}
	}
	return reaches, ""
}

// profileOf is the enabled profile the pod goes through, or nil.
func (e *EscapeCheck) profileOf(md map[string]any) *compile.Profile {
	name := ""
	if ann, ok := md["annotations"].(map[string]any); ok {
		name, _ = ann[render.ProfileAnnotation].(string)
	}
	if name == "" {
		if l, ok := md["labels"].(map[string]any); ok {
			name, _ = l[e.model.Cluster.LabelPrefix+"/profile"].(string)
		}
	}
	p := e.model.Profile(name)
	if p == nil || !p.Enabled {
		return nil
	}
	return p
}

// ownDRAClaims reports whether the pod goes through a DRA profile and
// every claim it holds, and every claim its containers use, is the one
// made from that profile's ResourceClaimTemplate.
func ownDRAClaims(spec map[string]any, p *compile.Profile) bool {
	if p == nil || p.DRA == nil {
		return false
	}
	claims := list(spec["resourceClaims"])
	if len(claims) == 0 {
		return false
	}
	names := map[string]bool{}
	for _, c := range claims {
		if c["resourceClaimTemplateName"] != render.ResourceClaimTemplateName(p) || c["resourceClaimName"] != nil {
			return false
		}
		names[fmt.Sprint(c["name"])] = true
	}
	for _, c := range containers(spec) {
		for _, r := range list(mapOf(c["resources"])["claims"]) {
			if !names[fmt.Sprint(r["name"])] {
				return false
			}
		}
	}
	return true
}

// reach says what the pod's containers reach on the node ("" for
// nothing), and whether that is outside what the device plugin allocates
// (a container that sees every device of the node, or a DRA claim no
// profile governs). A CPU node has no device to reach.
func (e *EscapeCheck) reach(spec map[string]any, n simNode, draClaim bool) (string, bool) {
	if n.node == nil {
		return "", false
	}
	if claims, _ := spec["resourceClaims"].([]any); len(claims) > 0 && !draClaim {
		return "a DRA claim", true
	}
	for _, v := range list(spec["volumes"]) {
		if p, ok := mapOf(v["hostPath"])["path"].(string); ok && deviceHostPath(p) {
			return "host path " + p, true
		}
	}
	requested := ""
	for _, c := range containers(spec) {
		name := fmt.Sprint(c["name"])
		if sc, ok := c["securityContext"].(map[string]any); ok && sc["privileged"] == true {
			return "privileged container " + name, true
		}
		for _, env := range list(c["env"]) {
			if slices.Contains(visibilityEnv, fmt.Sprint(env["name"])) {
				if _, from := env["valueFrom"]; from || !slices.Contains([]string{"", "void", "none"}, fmt.Sprint(env["value"])) {
					return fmt.Sprintf("container %s's %s", name, env["name"]), true
				}
			}
		}
		if cl := list(mapOf(c["resources"])["claims"]); len(cl) > 0 && !draClaim {
			return "container " + name + "'s DRA claim", true
		}
		if r := accelRequests(c); len(r) > 0 && requested == "" {
			requested = fmt.Sprintf("container %s's %s", name, strings.Join(r, ", "))
		}
	}
	return requested, false
}

// neuronResources are the Neuron device plugin's resources: devices
// (aws.amazon.com/neuron, older releases also aws.amazon.com/neurondevice)
// and cores.
var neuronResources = []string{"aws.amazon.com/neuron", "aws.amazon.com/neurondevice", "aws.amazon.com/neuroncore"}

// visibilityEnv are the variables with which a container runtime hands
// devices to a container.
var visibilityEnv = []string{"NVIDIA_VISIBLE_DEVICES", "NVIDIA_MIG_CONFIG_DEVICES", "NVIDIA_MIG_MONITOR_DEVICES", "AMD_VISIBLE_DEVICES", "HABANA_VISIBLE_DEVICES", "AWS_NEURON_VISIBLE_DEVICES"}

// deviceHostPath reports whether a host path holds device nodes or what
// hands them out (or climbs with ".."), as the policy judges it.
func deviceHostPath(p string) bool {
	var segs []string
	for _, s := range strings.Split(p, "/") {
		if s != "" && s != "." {
			segs = append(segs, s)
		}
	}
	if slices.Contains(segs, "..") {
		return true
	}
	for _, d := range [][]string{{"dev"}, {"proc"}, {"sys"}, {"run", "nvidia"}, {"run", "cdi"}, {"var", "run"}, {"etc", "cdi"}, {"var", "lib", "kubelet"}} {
		n := min(len(segs), len(d))
		if slices.Equal(segs[:n], d[:n]) {
			return true
		}
	}
	return false
}

// feasible reports whether kube-scheduler (or, with spec.nodeName, the
// kubelet) could run the pod on the node: selector, required affinity,
// taints and the accelerator resources it asks for.
func (e *EscapeCheck) feasible(spec map[string]any, n simNode) bool {
	for _, c := range containers(spec) {
		for _, r := range accelRequests(c) {
			if !n.offers[r] {
				return false
			}
		}
	}
	if name, ok := spec["nodeName"].(string); ok && name != "" {
		if name != n.name {
			return false
		}
		// The scheduler is bypassed: only NoExecute taints evict.
		return tolerates(spec, n.taints, "NoExecute")
	}
	for k, v := range mapOf(spec["nodeSelector"]) {
		if got, ok := n.label(k); !ok || got != v {
			return false
		}
	}
	aff := mapOf(mapOf(mapOf(spec["affinity"])["nodeAffinity"])["requiredDuringSchedulingIgnoredDuringExecution"])
	if terms := list(aff["nodeSelectorTerms"]); aff != nil && len(terms) > 0 {
		if !slices.ContainsFunc(terms, func(t map[string]any) bool { return termMatches(t, n) }) {
			return false
		}
	}
	return tolerates(spec, n.taints, "NoSchedule") && tolerates(spec, n.taints, "NoExecute")
}

func (n simNode) label(k string) (string, bool) {
	if v, ok := n.labels[k]; ok {
		return v, true
	}
	if k == "kubernetes.io/hostname" {
		return n.name, true
	}
	if n.node != nil {
		return n.node.Label(k)
	}
	return "", false
}

func termMatches(t map[string]any, n simNode) bool {
	exprs, fields := list(t["matchExpressions"]), list(t["matchFields"])
	if len(exprs) == 0 && len(fields) == 0 {
		return false // an empty term matches no node
	}
	for _, ex := range exprs {
		v, ok := n.label(fmt.Sprint(ex["key"]))
		if !requirement(fmt.Sprint(ex["operator"]), v, ok, stringList(ex["values"])) {
			return false
		}
	}
	for _, f := range fields {
		if fmt.Sprint(f["key"]) != "metadata.name" || !requirement(fmt.Sprint(f["operator"]), n.name, true, stringList(f["values"])) {
			return false
		}
	}
	return true
}

func requirement(op, v string, ok bool, values []string) bool {
	switch op {
	case "In":
		return ok && slices.Contains(values, v)
	case "NotIn":
		return !ok || !slices.Contains(values, v)
	case "Exists":
		return ok
	case "DoesNotExist":
		return !ok
	case "Gt", "Lt":
		if !ok || len(values) != 1 {
			return false
		}
		a, err1 := strconv.Atoi(v)
		b, err2 := strconv.Atoi(values[0])
		return err1 == nil && err2 == nil && (op == "Gt" && a > b || op == "Lt" && a < b)
	}
	return false
}

// tolerates reports whether the pod tolerates every taint of the effect.
func tolerates(spec map[string]any, taints []inventory.Taint, effect string) bool {
	tols := list(spec["tolerations"])
	for _, t := range taints {
		if t.Effect != effect {
			continue
		}
		if !slices.ContainsFunc(tols, func(tol map[string]any) bool {
			key, _ := tol["key"].(string)
			op, _ := tol["operator"].(string)
			eff, _ := tol["effect"].(string)
			if eff != "" && eff != t.Effect {
				return false
			}
			if key == "" {
				return op == "Exists"
			}
			if key != t.Key {
				return false
			}
			val, _ := tol["value"].(string)
			return op == "Exists" || val == t.Value
		}) {
			return false
		}
	}
	return true
}

// accelRequests are the accelerator resources a container asks for, in
// requests or limits, with a non-zero amount.
func accelRequests(c map[string]any) []string {
	var out []string
	res := mapOf(c["resources"])
	for _, section := range []string{"limits", "requests"} {
		for r, q := range mapOf(res[section]) {
			if isAccelerator(r) && fmt.Sprint(q) != "0" && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return out
}

// isAccelerator is the checker's own model of a device resource, wider on
// purpose than the policies' prefixes (any resource of an accelerator
// vendor's domain), so that a gap in the policy's list shows as an escape.
func isAccelerator(r string) bool {
	for _, p := range []string{"nvidia.com/", "amd.com/", "habana.ai/", "gpu.intel.com/", "google.com/", "cloud-tpus.google.com/", "aws.amazon.com/", "deviceclass.resource.kubernetes.io/"} {
		if strings.HasPrefix(r, p) {
			return true
		}
	}
	return false
}

func containers(spec map[string]any) []map[string]any {
	var out []map[string]any
	for _, k := range []string{"containers", "initContainers", "ephemeralContainers"} {
		out = append(out, list(spec[k])...)
	}
	return out
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func list(v any) []map[string]any {
	var out []map[string]any
	l, _ := v.([]any)
	for _, e := range l {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func stringList(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, e := range l {
		out = append(out, fmt.Sprint(e))
	}
	return out
}
