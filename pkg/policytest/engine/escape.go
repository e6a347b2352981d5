package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
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
	// kueue are who may make a Kueue-managed owner's pods and remove
	// Kueue's gate; queued are the teams whose devices Kueue shares out.
	kueue  kueueIdentities
	queued map[string]bool
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
	for _, n := range unknownVendorNodes() {
		e.nodes = append(e.nodes, n)
		data = append(data, syncedNode(n))
		for r := range n.offers {
			resources[r] = true
		}
		for _, t := range n.taints {
			taints[t.Key] = true
		}
	}
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
	// And the devices of every other vendor, as the simulated vendor
	// nodes offer them, and every resource a class of the catalog is
	// requested by or named by (huawei.com/Ascend910B3,
	// iluvatar.ai/BI-V100-vgpu): a pod that reaches one without a
	// profile is an escape.
	for _, r := range unknownVendorResources {
		resources[r] = true
	}
	for _, c := range m.Catalog.Classes() {
		resources[c.ResourceName] = true
		for _, r := range c.ResourceNames {
			resources[r] = true
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
	if e.kueue, err = readKueueIdentities(tree); err != nil {
		return nil, err
	}
	e.queued = map[string]bool{}
	for i := range m.Teams {
		e.queued[m.Teams[i].Name] = e.queuedTeam(&m.Teams[i])
	}
	return e, nil
}

// unknownVendorNodes are nodes of no type the catalog knows, each offering
// one of unknownVendorResources, every other one tainted with it: nothing
// may reach them.
func unknownVendorNodes() []simNode {
	var out []simNode
	for i, r := range unknownVendorResources {
		name := fmt.Sprintf("vendor-node-%d", i)
		n := simNode{name: name, typ: "unknown " + r, node: &inventory.Node{Name: name, Resource: r}, labels: map[string]string{}, offers: map[string]bool{r: true}}
		if i%2 == 1 {
			n.taints = []inventory.Taint{{Key: r, Effect: "NoSchedule"}}
		}
		out = append(out, n)
	}
	return out
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
	// Why says what the pod reaches and why it may not; Family is the
	// kind of attack it is (familyOf).
	Why, Family string
	// Pod is the pod as generated (a workload for those), and Admitted
	// as the mutators left it and the constraint admitted it, as YAML.
	Pod, Admitted string
}

// familyOf names the kind of attack an escape's Why describes, as the
// check's report counts them.
func familyOf(why string) string {
	for _, f := range []struct{ family, says string }{
		{"ownerReference spoof", "a kind Kueue manages"},
		{"pod Kueue's webhook skipped", "Kueue's pod webhook skipped"},
		{"Job Kueue's webhook skipped", "Kueue's job webhook skipped"},
		{"Job outside Kueue", "names no LocalQueue"},
		{"Kueue gate removal", "scheduling gate"},
		{"empty claim", "asks for no device"},
		{"unconfined DRA pod", "the pod of DRA profile"},
		{"CDI annotation", "annotation "},
		{"capability or host namespace", "capability "},
		{"capability or host namespace", "hostPID"},
		{"capability or host namespace", "hostIPC"},
		{"capability or host namespace", "hostNetwork"},
		{"capability or host namespace", "unmasked /proc"},
		{"host path under /run", "host path /run"},
		{"host path under /run", "host path /var/run"},
		{"unknown vendor's resource", "(unknown "},
		{"unknown vendor's resource", "may not use unknown "},
	} {
		if strings.Contains(why, f.says) {
			return f.family
		}
	}
	return "other"
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
	// Legitimate counts the legitimate pods and workloads generated, and
	// the controllers' UPDATEs of the admitted pods among them
	// (ControllerUpdates); FalseDenials are those denied (at the
	// workload or as their pod).
	Legitimate, ControllerUpdates int
	// BeforeEnforcement counts the controllers' UPDATEs, among
	// ControllerUpdates, of pods that ran before enforcement reached their
	// namespace (refused if made now).
	BeforeEnforcement int
	// OfRetiredProfiles counts those of pods that name a retired profile.
	OfRetiredProfiles int
	FalseDenials      []Escape
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
				if why == "" && admitted == v.d.Stored {
					// The request's own pod: who made or changed it.
					why = e.unaccounted(req, admitted.Object)
				}
			}
			if why != "" {
				raw, _ := yaml.Marshal(v.written)
				out, _ := yaml.Marshal(admitted.Object)
				rep.Escapes = append(rep.Escapes, Escape{Why: why, Family: familyOf(why), Pod: string(raw), Admitted: string(out)})
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
					rep.Escapes = append(rep.Escapes, Escape{Why: why, Family: familyOf(why), Pod: string(raw), Admitted: string(raw)})
				}
			}
			continue
		}
		obj := e.generate(rng, i)
		req := Request{Object: &unstructured.Unstructured{Object: obj}, User: e.requester(rng, obj)}
		// Now and then Kueue's webhook does not run on a new pod or Job:
		// it failed open, or the cluster's Kueue selects other
		// namespaces.
		req.KueueSkipped = (obj["kind"] == "Pod" || obj["kind"] == "Job") && rng.Float64() < 0.1
		v, admitted, err := check(i, req)
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
		if err := e.legitimate(ctx, rng, i, &rep); err != nil {
			return rep, err
		}
	}
	for i := 0; i < n/4; i++ {
		if err := e.beforeEnforcement(ctx, rng, i, &rep); err != nil {
			return rep, err
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
		d, err := e.mutator.Admit(ctx, e.reviewer, e.controllerRequest(v.d.Stored, p.Pod))
		if err != nil {
			return v, fmt.Errorf("admitting the pod of %s: %w", p.Where, err)
		}
		v.pods = append(v.pods, podVerdict{where: p.Where, d: d})
	}
	return v, nil
}

// jobMadeKinds are the workload kinds whose pods a Job makes (a CronJob's
// and a JobSet's through Jobs of their own), by "<group>/<Kind>".
var jobMadeKinds = map[string]bool{"batch/Job": true, "batch/CronJob": true, "jobset.x-k8s.io/JobSet": true, "trainer.kubeflow.org/TrainJob": true}

// controllerRequest is the CREATE of a pod a workload's controllers make:
// a Job's pods by the Job controller, owned by the Job (Kueue's pod
// webhook leaves them to the Job's Workload); any other's by DefaultUser
// with no owner, as a controller of a kind Kueue does not manage makes
// them.
func (e *EscapeCheck) controllerRequest(w, pod *unstructured.Unstructured) Request {
	ids := e.kueue.controllers["batch/Job"]
	if !jobMadeKinds[w.GroupVersionKind().Group+"/"+w.GetKind()] || len(ids) == 0 {
		return Request{Object: pod}
	}
	pod = pod.DeepCopy()
	pod.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: w.GetName(), UID: "00000000-0000-0000-0000-0000000000aa", Controller: ptr.To(true)}})
	return Request{Object: pod, User: ids[0]}
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
