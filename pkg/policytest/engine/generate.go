package engine

// The escape check's generator: random pods, workloads and updates over
// the cluster's vocabulary.

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/render"
)

// generate builds the i-th random pod (or a workload around one) from the
// ways a pod can be written: its profile by annotation, label, both or
// neither (or one that does not exist); containers of every kind asking
// for accelerator resources of any vendor, or none; device-visibility
// variables, envFrom, privileged, host paths and DRA claims; selectors,
// affinities, tolerations and node names aimed at the cluster's nodes;
// the runtime class; priority classes; the queue label.
func (e *EscapeCheck) generate(rng *rand.Rand, i int) map[string]any {
	m := e.model
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	chance := func(p float64) bool { return rng.Float64() < p }

	v := e.vocab
	types := slices.Clone(v.nodeTypes)
	for _, id := range v.classIDs {
		if chance(0.02) {
			types = append(types, id)
		}
	}
	profiles, pools, nodeNames := v.profiles, v.pools, v.nodeNames

	// Half start as a legitimate pod (a team's namespace, a profile the
	// team may use, its resource, the rest left to the mutators), with a
	// quarter of the odds of each hostile feature; the other half are
	// drawn freely.
	legit := chance(0.5)
	if legit {
		chance = func(p float64) bool { return rng.Float64() < p/4 }
	}
	md := map[string]any{"name": fmt.Sprintf("p%d", i), "namespace": pick(e.namespaces)}
	labels, annotations := map[string]any{}, map[string]any{}
	profile := pick(profiles)
	ref := rng.IntN(6)
	var own *compile.Profile
	if legit {
		ns, usable := e.teamProfiles(rng)
		if len(usable) > 0 {
			md["namespace"] = ns
			own = usable[rng.IntN(len(usable))]
			profile = own.Name
			ref = 1 + rng.IntN(3)
		}
	}
	switch ref {
	case 0: // none
	case 1, 2:
		annotations[render.ProfileAnnotation] = profile
	case 3:
		labels[m.Cluster.LabelPrefix+"/profile"] = profile
	case 4:
		annotations[render.ProfileAnnotation] = profile
		labels[m.Cluster.LabelPrefix+"/profile"] = profile
	case 5:
		annotations[render.ProfileAnnotation] = profile
		labels[m.Cluster.LabelPrefix+"/profile"] = pick(profiles)
	}
	if chance(0.3) {
		labels[render.QueueNameLabel] = pick([]string{profile, "other"})
	}
	if chance(0.1) && len(v.priorityClasses) > 0 {
		labels[render.WorkloadPriorityLabel] = pick(append([]string{"unknown"}, v.priorityClasses...))
	}
	if chance(0.1) {
		annotations[m.Cluster.LabelPrefix+"/team"] = pick([]string{"ml-research", "data-science", "model-serving"})
	}
	spec := map[string]any{}

	resources := func() map[string]any {
		if chance(0.35) {
			return nil
		}
		r := e.resources[rng.IntN(len(e.resources))]
		if p := m.Profile(profile); p != nil && chance(0.6) {
			r = p.ResourceName
		}
		q := any(int64(rng.IntN(3) + 1))
		if chance(0.05) {
			q = int64(rng.IntN(9))
		}
		// Limits alone, or requests with the same limits: the API server
		// refuses an extended resource requested without its limit.
		if chance(0.33) {
			return map[string]any{"requests": map[string]any{r: q}, "limits": map[string]any{r: q}}
		}
		return map[string]any{"limits": map[string]any{r: q}}
	}
	container := func(name string) map[string]any {
		c := map[string]any{"name": name, "image": pick([]string{"nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", "busybox"})}
		if r := resources(); r != nil {
			c["resources"] = r
		}
		if chance(0.08) {
			c["resources"] = map[string]any{"claims": []any{map[string]any{"name": "gpu"}}}
		}
		if chance(0.15) {
			v := map[string]any{"name": pick(visibilityEnv)}
			switch rng.IntN(4) {
			case 0:
				v["valueFrom"] = map[string]any{"configMapKeyRef": map[string]any{"name": "env", "key": "devices"}}
			default:
				v["value"] = pick([]string{"all", "0,1", "void", "none", "", "GPU-0"})
			}
			c["env"] = []any{v}
		}
		if chance(0.15) {
			c["envFrom"] = []any{map[string]any{"configMapRef": map[string]any{"name": "gpu-env"}}}
		}
		sc := map[string]any{}
		if chance(0.06) {
			sc["privileged"] = true
		}
		if chance(0.06) {
			// Capabilities beyond Pod Security baseline's, spelled
			// every way, and some of baseline's own.
			var add []any
			for j := rng.IntN(2) + 1; j > 0; j-- {
				add = append(add, pick([]string{"SYS_ADMIN", "CAP_SYS_ADMIN", "SYS_PTRACE", "ALL", "CAP_SYS_RAWIO", "sys_module", "NET_ADMIN", "BPF", "NET_BIND_SERVICE", "CHOWN", "cap_kill"}))
			}
			sc["capabilities"] = map[string]any{"add": add}
		}
		if chance(0.02) {
			sc["procMount"] = "Unmasked"
		}
		if len(sc) > 0 {
			c["securityContext"] = sc
		}
		return c
	}
	cs := []any{container("main")}
	if own != nil && own.DRA != nil {
		// A DRA profile's devices come by claim: mostly from its own
		// template, sometimes from another.
		cs[0].(map[string]any)["resources"] = map[string]any{"claims": []any{map[string]any{"name": "gpu"}}}
		tmpl := render.ResourceClaimTemplateName(own)
		if rng.Float64() < 0.25 {
			tmpl = "any-gpu"
		}
		spec["resourceClaims"] = []any{map[string]any{"name": "gpu", "resourceClaimTemplateName": tmpl}}
	} else if own != nil {
		n := own.GPU.Min + rng.IntN(2)
		if own.GPU.Max != nil {
			n = min(n, *own.GPU.Max)
		}
		cs[0].(map[string]any)["resources"] = map[string]any{"limits": map[string]any{own.ResourceName: int64(max(n, 1))}}
	}
	for j := rng.IntN(3); j > 0; j-- {
		cs = append(cs, container(fmt.Sprintf("side%d", j)))
	}
	spec["containers"] = cs
	if chance(0.15) {
		spec["initContainers"] = []any{container("init")}
	}
	if chance(0.05) {
		spec["ephemeralContainers"] = []any{container("debug")}
	}
	// A pod declares the claims its containers use (the API server
	// refuses one that does not), mostly: from a template of its own, its
	// profile's, or by name.
	if _, has := spec["resourceClaims"]; !has && (chance(0.06) || (usesClaim(spec) && rng.Float64() < 0.85)) {
		claim := map[string]any{"name": "gpu"}
		switch rng.IntN(3) {
		case 0:
			claim["resourceClaimTemplateName"] = "any-gpu"
		case 1:
			claim["resourceClaimTemplateName"] = profile
		default:
			claim["resourceClaimName"] = "made-earlier"
		}
		spec["resourceClaims"] = []any{claim}
	}
	if chance(0.1) {
		spec["volumes"] = []any{map[string]any{"name": "host", "hostPath": map[string]any{
			"path": pick([]string{"/dev/nvidia0", "/dev", "//dev/./dri", "/", "/var/run", "/data", "/home", "/data/../dev", "/run/nvidia/driver",
				"/run/containerd/containerd.sock", "/run/crio/crio.sock", "/run", "/run/docker.sock", "/var/run/containerd/containerd.sock",
				// What the node runs: the container toolkit's
				// configuration, the GPU Operator's install, the runtimes'
				// binaries and state; and data.
				"/etc/nvidia-container-runtime", "/usr/local/nvidia/toolkit", "/etc/containerd", "/usr/bin", "/opt/cni/bin",
				"/var/lib/containerd", "/home/kubernetes/bin/nvidia", "/etc/localtime", "/mnt/datasets"})}}}
		// Mounted, mostly, sometimes read-only, by any of the pod's
		// containers.
		if cs := containers(spec); chance(0.8) && len(cs) > 0 {
			c := cs[rng.IntN(len(cs))]
			mounts, _ := c["volumeMounts"].([]any)
			c["volumeMounts"] = append(mounts, map[string]any{"name": "host", "mountPath": "/host", "readOnly": chance(0.4)})
		}
	}
	for _, f := range []string{"hostPID", "hostIPC", "hostNetwork"} {
		if chance(0.03) {
			spec[f] = true
		}
	}
	if chance(0.05) {
		// Device requests the container runtime reads from the pod.
		annotations[pick([]string{"cdi.k8s.io/gpu", "nvidia.cdi.k8s.io/all", "io.kubernetes.cri-o.Devices", "cdi.k8s.io/vfio"})] = pick([]string{"nvidia.com/gpu=all", "/dev/nvidia0"})
	}
	if chance(0.08) {
		spec["runtimeClassName"] = pick(append([]string{"runc"}, m.Cluster.DeviceRuntimeClasses...))
	}
	if chance(0.2) && len(v.priorityClasses) > 0 {
		spec["priorityClassName"] = pick(v.priorityClasses)
	}

	// Placement.
	selectorKeys := v.selectorKeys
	if chance(0.35) {
		sel := map[string]any{}
		switch k := pick(selectorKeys); k {
		case m.Cluster.TypeLabel():
			sel[k] = pick(types)
		case m.Cluster.PoolLabel():
			if len(pools) > 0 {
				sel[k] = pick(pools)
			}
		case "kubernetes.io/hostname":
			sel[k] = pick(nodeNames)
		default:
			sel[k] = pick([]string{"true", "NVIDIA-H200", "NVIDIA-A100-SXM4-80GB"})
		}
		spec["nodeSelector"] = sel
	}
	if chance(0.35) {
		var terms []any
		for j := rng.IntN(3) + 1; j > 0; j-- {
			var exprs []any
			for k := rng.IntN(2) + 1; k > 0; k-- {
				op := pick([]string{"In", "In", "NotIn", "Exists", "DoesNotExist"})
				ex := map[string]any{"key": pick(selectorKeys[:2]), "operator": op}
				if op == "In" || op == "NotIn" {
					var vals []any
					for v := rng.IntN(2) + 1; v > 0; v-- {
						vals = append(vals, pick(append(types, pools...)))
					}
					ex["values"] = vals
				}
				exprs = append(exprs, ex)
			}
			term := map[string]any{"matchExpressions": exprs}
			if chance(0.2) {
				term = map[string]any{"matchFields": []any{map[string]any{"key": "metadata.name", "operator": "In", "values": []any{pick(nodeNames)}}}}
			}
			terms = append(terms, term)
		}
		spec["affinity"] = map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": terms}}}
	}
	if chance(0.5) {
		var tols []any
		for j := rng.IntN(3) + 1; j > 0; j-- {
			switch rng.IntN(5) {
			case 0:
				tols = append(tols, map[string]any{"operator": "Exists"})
			case 1:
				if p := m.Profile(profile); p != nil && len(p.Tolerations) > 0 {
					t := p.Tolerations[rng.IntN(len(p.Tolerations))]
					tols = append(tols, map[string]any{"key": t.Key, "operator": t.Operator, "value": t.Value, "effect": t.Effect})
				}
			default:
				if len(e.taintKeys) > 0 {
					tols = append(tols, map[string]any{"key": pick(e.taintKeys), "operator": "Exists"})
				}
			}
		}
		if len(tols) > 0 {
			spec["tolerations"] = tols
		}
	}
	if chance(0.1) {
		spec["nodeName"] = pick(nodeNames)
	}

	if len(labels) > 0 {
		md["labels"] = labels
	}
	if len(annotations) > 0 {
		md["annotations"] = annotations
	}
	// Some come as workloads, of every kind accelc judges, with Kueue's
	// labels on the workload itself.
	kueue := map[string]any{}
	if chance(0.15) {
		kueue[render.QueueNameLabel] = pick(append([]string{"other"}, profiles...))
	}
	if chance(0.1) && len(v.priorityClasses) > 0 {
		kueue[render.WorkloadPriorityLabel] = pick(append([]string{"unknown"}, v.priorityClasses...))
	}
	obj := e.wrap(rng, md, spec, kueue)
	if obj["kind"] == "Pod" && rng.Float64() < 0.15 {
		e.spoofOwner(rng, md)
	}
	return obj
}

// usesClaim reports whether a container of the spec uses a DRA claim.
func usesClaim(spec map[string]any) bool {
	for _, k := range []string{"containers", "initContainers", "ephemeralContainers"} {
		cs, _ := spec[k].([]any)
		for _, c := range cs {
			c, _ := c.(map[string]any)
			r, _ := c["resources"].(map[string]any)
			if claims, _ := r["claims"].([]any); len(claims) > 0 {
				return true
			}
		}
	}
	return false
}

func withLabel(md map[string]any, k, v string) map[string]any {
	out := map[string]any{}
	for key, val := range md {
		out[key] = val
	}
	labels := map[string]any{k: v}
	if l, ok := md["labels"].(map[string]any); ok {
		for key, val := range l {
			labels[key] = val
		}
	}
	out["labels"] = labels
	return out
}

// teamProfiles picks a team namespace and the enabled profiles its team
// may use.
func (e *EscapeCheck) teamProfiles(rng *rand.Rand) (string, []*compile.Profile) {
	m := e.model
	if len(m.Teams) == 0 {
		return "", nil
	}
	t := &m.Teams[rng.IntN(len(m.Teams))]
	if len(t.Namespaces) == 0 {
		return "", nil
	}
	var usable []*compile.Profile
	for i := range m.Profiles {
		if p := &m.Profiles[i]; p.Offered() && t.MayUse(p) {
			usable = append(usable, p)
		}
	}
	return t.Namespaces[rng.IntN(len(t.Namespaces))], usable
}

// vocabulary is what generate draws names from, gathered once per cluster.
type vocabulary struct {
	// nodeTypes are the inventory's types after a type no node has;
	// classIDs the catalog's, some of which each pod adds.
	nodeTypes, classIDs           []string
	profiles, pools, nodeNames    []string
	priorityClasses, selectorKeys []string
}

func newVocabulary(m *compile.Model, nodes []simNode) vocabulary {
	v := vocabulary{
		nodeTypes:    []string{"nvidia-does-not-exist"},
		profiles:     []string{"no-such-profile"},
		selectorKeys: []string{m.Cluster.TypeLabel(), m.Cluster.PoolLabel(), "nvidia.com/gpu.product", "kubernetes.io/hostname", "nvidia.com/gpu.present"},
	}
	for _, n := range nodes {
		if n.typ != "" {
			v.nodeTypes = append(v.nodeTypes, n.typ)
		}
		v.nodeNames = append(v.nodeNames, n.name)
	}
	for _, c := range m.Catalog.Classes() {
		v.classIDs = append(v.classIDs, c.ID)
	}
	for _, p := range m.Profiles {
		v.profiles = append(v.profiles, p.Name)
	}
	for _, p := range m.NodePools {
		v.pools = append(v.pools, p.Name)
	}
	for n := range m.Cluster.PriorityClasses {
		v.priorityClasses = append(v.priorityClasses, n)
	}
	slices.Sort(v.priorityClasses)
	return v
}

// update builds an UPDATE of an admitted object, as stored, the ways a
// user can change one that exists. A pod: Kueue's scheduling gate removed
// (from the pod as Kueue gates it, by Kueue or anyone else); or, bound
// to a node it could run on as the scheduler would have bound it, a
// controller owner reference named (by a controller or anyone), its
// profile annotation or label moved to another profile or dropped,
// Kueue's labels, accelc's attribution annotations, a toleration added,
// or an ephemeral container through the pods/ephemeralcontainers
// subresource. A workload whose
// template may change: a new template, generated afresh. A Job's template
// cannot change, and a Notebook is judged as itself on CREATE already:
// neither gets one.
func (e *EscapeCheck) update(rng *rand.Rand, i int, stored *unstructured.Unstructured) (Request, bool) {
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	old := stored.DeepCopy()
	switch old.GetKind() {
	case "Pod":
		if rng.IntN(6) == 0 {
			// Kueue's gate removed, by Kueue or by someone else.
			users := append([]string{DefaultUser, "system:serviceaccount:" + old.GetNamespace() + ":default", jobController}, e.kueue.users...)
			return e.ungate(rng, old, pick(users)), true
		}
		spec := mapOf(old.Object["spec"])
		bound := e.feasibleNodes(spec)
		if len(bound) == 0 {
			return Request{}, false
		}
		spec["nodeName"] = pick(bound)
		obj := old.DeepCopy()
		req := Request{Object: obj, OldObject: old, Operation: "UPDATE"}
		labels, annotations := obj.GetLabels(), obj.GetAnnotations()
		if labels == nil {
			labels = map[string]string{}
		}
		if annotations == nil {
			annotations = map[string]string{}
		}
		label := e.model.Cluster.LabelPrefix + "/profile"
		if rng.IntN(8) == 0 {
			// A controller owner named on a running pod, by its
			// controller or anyone.
			e.spoofOwner(rng, mapOf(obj.Object["metadata"]))
			req.User = e.requester(rng, obj.Object)
		}
		switch rng.IntN(7) {
		case 0:
			annotations[render.ProfileAnnotation] = pick(e.vocab.profiles)
		case 1:
			labels[label] = pick(e.vocab.profiles)
			annotations[render.ProfileAnnotation] = labels[label]
		case 2:
			delete(labels, label)
			delete(annotations, render.ProfileAnnotation)
		case 3:
			labels[render.QueueNameLabel] = pick(append([]string{"other"}, e.vocab.profiles...))
		case 4:
			labels[render.WorkloadPriorityLabel] = pick(append([]string{"unknown"}, e.vocab.priorityClasses...))
		case 5:
			annotations[e.model.Cluster.LabelPrefix+"/"+pick([]string{"type", "team"})] = pick(append(e.vocab.nodeTypes, "ml-research"))
		default:
			tol := map[string]any{"operator": "Exists"}
			if len(e.taintKeys) > 0 && rng.IntN(2) == 0 {
				tol["key"] = pick(e.taintKeys)
			}
			tols, _ := mapOf(obj.Object["spec"])["tolerations"].([]any)
			mapOf(obj.Object["spec"])["tolerations"] = append(tols, tol)
		}
		if rng.IntN(4) == 0 {
			// A debugging container, through the subresource.
			c := map[string]any{"name": "debug", "image": "busybox"}
			switch rng.IntN(3) {
			case 0:
				c["securityContext"] = map[string]any{"privileged": true}
			case 1:
				c["env"] = []any{map[string]any{"name": pick(visibilityEnv), "value": "all"}}
			}
			mapOf(obj.Object["spec"])["ephemeralContainers"] = []any{c}
			req.SubResource = "ephemeralcontainers"
		}
		obj.SetLabels(labels)
		obj.SetAnnotations(annotations)
		if len(labels) == 0 {
			delete(mapOf(obj.Object["metadata"]), "labels")
		}
		if len(annotations) == 0 {
			delete(mapOf(obj.Object["metadata"]), "annotations")
		}
		return req, true
	case "Job":
		// Its owner takes the queue label off while the Job waits
		// suspended (Kueue's webhook allows it), and may resume it.
		if old.GetLabels()[render.QueueNameLabel] == "" {
			return Request{}, false
		}
		obj := old.DeepCopy()
		labels := obj.GetLabels()
		delete(labels, render.QueueNameLabel)
		obj.SetLabels(labels)
		if rng.IntN(2) == 0 {
			_ = unstructured.SetNestedField(obj.Object, false, "spec", "suspend")
		}
		return Request{Object: obj, OldObject: old, Operation: "UPDATE", User: DefaultUser}, true
	case "Notebook":
		return Request{}, false
	}
	// A new template: another generated object of the same kind.
	for tries := 0; tries < 50; tries++ {
		next := &unstructured.Unstructured{Object: e.generate(rng, i)}
		if next.GetKind() != old.GetKind() {
			continue
		}
		next.SetName(old.GetName())
		next.SetNamespace(old.GetNamespace())
		return Request{Object: next, OldObject: old, Operation: "UPDATE"}, true
	}
	return Request{}, false
}

// claimVersions are the resource.k8s.io versions an API server may serve
// ResourceClaims in: v1beta1 names the class on the request itself, v1beta2
// and v1 inside exactly (or each of firstAvailable's subrequests).
var claimVersions = []string{"v1", "v1beta2", "v1beta1"}

// generateClaim builds the i-th random ResourceClaim or
// ResourceClaimTemplate, in any served version, with requests of the
// cluster's DeviceClasses and others: counts, every device of a node,
// admin access, alternatives, fields the policy does not read.
func (e *EscapeCheck) generateClaim(rng *rand.Rand, i int) map[string]any {
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	chance := func(p float64) bool { return rng.Float64() < p }
	version := pick(claimVersions)
	// Half start from what a team may claim: its namespace, its classes.
	// (and one class no cluster has).
	ns, classes := pick(e.namespaces), append(slices.Clone(e.deviceClasses), "no-such-class")
	if chance(0.5) {
		t := &e.model.Teams[rng.IntN(len(e.model.Teams))]
		if own := e.model.TeamDeviceClasses(t); len(own) > 0 && len(t.Namespaces) > 0 {
			ns, classes = pick(t.Namespaces), slices.Sorted(maps.Keys(own))
			chance = func(p float64) bool { return rng.Float64() < p/4 }
		}
	}
	request := func(name string, sub bool) map[string]any {
		r := map[string]any{"name": name}
		exact := map[string]any{"deviceClassName": pick(classes)}
		if chance(0.3) {
			exact["count"] = int64(rng.IntN(4) + 1)
		}
		if chance(0.08) {
			exact["allocationMode"] = "All"
			delete(exact, "count")
		}
		if chance(0.06) && !sub {
			exact["adminAccess"] = true
		}
		if chance(0.1) {
			exact["selectors"] = []any{map[string]any{"cel": map[string]any{"expression": "device.driver == 'gpu.nvidia.com'"}}}
		}
		if version == "v1beta1" || sub {
			for k, v := range exact {
				r[k] = v
			}
			return r
		}
		r["exactly"] = exact
		return r
	}
	var requests []any
	for j := rng.IntN(2) + 1; j > 0; j-- {
		name := fmt.Sprintf("r%d", j)
		switch {
		case version != "v1beta1" && chance(0.2):
			requests = append(requests, map[string]any{"name": name, "firstAvailable": []any{request("a", true), request("b", true)}})
		default:
			requests = append(requests, request(name, false))
		}
	}
	devices := map[string]any{"requests": requests}
	switch {
	case rng.Float64() < 0.06:
		// A claim that asks for no device.
		devices = map[string]any{"requests": []any{}}
	case rng.Float64() < 0.03:
		devices = map[string]any{}
	}
	if chance(0.03) {
		devices["unknownField"] = map[string]any{"x": "y"}
	}
	md := map[string]any{"name": fmt.Sprintf("c%d", i), "namespace": ns}
	if chance(0.5) {
		return map[string]any{"apiVersion": "resource.k8s.io/" + version, "kind": "ResourceClaim", "metadata": md, "spec": map[string]any{"devices": devices}}
	}
	return map[string]any{"apiVersion": "resource.k8s.io/" + version, "kind": "ResourceClaimTemplate", "metadata": md,
		"spec": map[string]any{"spec": map[string]any{"devices": devices}}}
}
