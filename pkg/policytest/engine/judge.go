package engine

// The escape check's judge: whether a pod, claim or workload would reach
// an accelerator it is not entitled to.

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/render"
)

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
		if draClaim && n.node != nil && !profile.Generic() && !slices.Contains(profile.AcceleratorTypes, n.typ) {
			// Its claim confines the devices, not the node: on a node
			// of another type the pod reaches what else it holds there.
			return true, fmt.Sprintf("the pod of DRA profile %s may land on node %s (%s), which is not of the profile's types %s", profile.Name, n.name, n.typ, strings.Join(profile.AcceleratorTypes, ", "))
		}
		what, outside := e.reach(spec, md, n, draClaim)
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
var kueueWholeKinds = map[string]bool{"Job": true, "CronJob": true, "JobSet": true, "PyTorchJob": true, "MPIJob": true, "RayCluster": true, "RayJob": true,
	"LeaderWorkerSet": true, "AppWrapper": true, "TrainJob": true, "Deployment": true, "StatefulSet": true}

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
	// Kueue's job integration manages only a Job that names a LocalQueue,
	// and its pod webhook leaves a Job's pods to the Job: a Job of a
	// profile the team's queue shares out without one runs its pods
	// counted by no Workload.
	if labels[render.QueueNameLabel] == nil && w.GetKind() == "Job" && w.GroupVersionKind().Group == "batch" {
		for _, p := range profiles {
			if slices.Contains(e.model.QueueTeams(p), team) {
				return fmt.Sprintf("Job %s names no LocalQueue, though its pods are of profile %s, which Kueue shares out to team %s: Kueue's job integration leaves it, its pod webhook leaves its pods to the Job, and they run counted by no Workload", w.GetName(), p.Name, team.Name)
			}
		}
	}
	// A Job Kueue queues runs only once Kueue admits it: its job webhook
	// suspends it when it is made.
	if q := labels[render.QueueNameLabel]; q != nil && w.GetKind() == "Job" && w.GroupVersionKind().Group == "batch" {
		if suspended, _, _ := unstructured.NestedBool(w.Object, "spec", "suspend"); !suspended {
			for _, p := range profiles {
				if slices.Contains(e.model.QueueTeams(p), team) {
					return fmt.Sprintf("Kueue's job webhook skipped Job %s (it names LocalQueue %v but was admitted not suspended): its pods run counted by no Workload in team %s's queues", w.GetName(), q, team.Name)
				}
			}
		}
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
// devices or with admin access; and it must ask for a device (a claim of
// none confines nothing).
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
	requests := list(mapOf(spec["devices"])["requests"])
	if len(requests) == 0 {
		// It confines nothing: a pod holding it holds a claim, which
		// lets it past every rule that asks for one, and reaches what
		// its node and annotations give it.
		return true, fmt.Sprintf("a %s in namespace %s that asks for no device", obj["kind"], ns)
	}
	reaches := false
	counts := map[string]int{}
	for _, r := range requests {
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
	p := e.model.Profile(profileName(e.model, md))
	if p == nil || !p.Offered() {
		return nil
	}
	return p
}

// profileName is the profile a pod names, by ODH's annotation or
// accelc's label; "" for none.
func profileName(m *compile.Model, md map[string]any) string {
	name := ""
	if ann, ok := md["annotations"].(map[string]any); ok {
		name, _ = ann[render.ProfileAnnotation].(string)
	}
	if name == "" {
		if l, ok := md["labels"].(map[string]any); ok {
			name, _ = l[m.Cluster.LabelPrefix+"/profile"].(string)
		}
	}
	return name
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
func (e *EscapeCheck) reach(spec, md map[string]any, n simNode, draClaim bool) (string, bool) {
	if n.node == nil {
		return "", false
	}
	if why := nodeWide(spec, md); why != "" {
		return why, true
	}
	if claims, _ := spec["resourceClaims"].([]any); len(claims) > 0 && !draClaim {
		return "a DRA claim", true
	}
	for _, v := range list(spec["volumes"]) {
		p, ok := mapOf(v["hostPath"])["path"].(string)
		if !ok {
			continue
		}
		if deviceHostPath(p) {
			return "host path " + p, true
		}
		// What it writes on the node outlives it: the toolkit's
		// configuration, the runtimes, a link to /dev or the runtime's
		// socket that a later pod's host path follows.
		if c := writesVolume(spec, fmt.Sprint(v["name"])); c != "" {
			return "container " + c + "'s writable host path " + p, true
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

// nodeWide says how a pod reaches every device of the node it lands on,
// whatever it asked for ("" for no way): a CDI or CRI-O device annotation
// the runtime reads, a host namespace, a capability beyond Pod Security
// baseline's, an unmasked /proc.
func nodeWide(spec, md map[string]any) string {
	for _, k := range slices.Sorted(maps.Keys(mapOf(md["annotations"]))) {
		if strings.Contains(k, "cdi.k8s.io/") || k == "io.kubernetes.cri-o.Devices" {
			return "annotation " + k
		}
	}
	for _, f := range []string{"hostPID", "hostIPC", "hostNetwork"} {
		if spec[f] == true {
			return f
		}
	}
	for _, c := range containers(spec) {
		sc := mapOf(c["securityContext"])
		for _, cap := range stringList(mapOf(sc["capabilities"])["add"]) {
			if !baselineCapabilities[strings.TrimPrefix(strings.ToUpper(cap), "CAP_")] {
				return fmt.Sprintf("container %v's capability %s", c["name"], cap)
			}
		}
		if sc["procMount"] == "Unmasked" {
			return fmt.Sprintf("container %v's unmasked /proc", c["name"])
		}
	}
	return ""
}

// baselineCapabilities are those Pod Security's baseline level lets a
// container add: none of them reaches a device.
var baselineCapabilities = map[string]bool{"AUDIT_WRITE": true, "CHOWN": true, "DAC_OVERRIDE": true, "FOWNER": true, "FSETID": true, "KILL": true, "MKNOD": true, "NET_BIND_SERVICE": true, "SETFCAP": true, "SETGID": true, "SETPCAP": true, "SETUID": true, "SYS_CHROOT": true}

// deviceHostPath reports whether a host path holds device nodes or what
// hands them out (or climbs with ".."): the whole of /run (the container
// runtimes' sockets, /run/containerd/containerd.sock, /run/crio, hand out
// any device), as /var/run.
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
	for _, d := range [][]string{{"dev"}, {"proc"}, {"sys"}, {"run"}, {"var", "run"}, {"etc", "cdi"}, {"var", "lib", "kubelet"}} {
		n := min(len(segs), len(d))
		if slices.Equal(segs[:n], d[:n]) {
			return true
		}
	}
	return false
}

// writesVolume is the first container (init and ephemeral ones too) that
// mounts the volume without readOnly, "" if none does.
func writesVolume(spec map[string]any, volume string) string {
	for _, c := range containers(spec) {
		for _, m := range list(c["volumeMounts"]) {
			if m["name"] == volume && m["readOnly"] != true {
				return fmt.Sprint(c["name"])
			}
		}
	}
	return ""
}

// feasible reports whether kube-scheduler (or, with spec.nodeName, the

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
	domain, _, ok := strings.Cut(r, "/")
	return ok && slices.Contains(acceleratorDomains, domain)
}

// acceleratorDomains are the accelerator vendors' resource domains: every
// resource under one is a device.
var acceleratorDomains = []string{"nvidia.com", "amd.com", "habana.ai", "gpu.intel.com", "google.com", "cloud-tpus.google.com", "aws.amazon.com", "deviceclass.resource.kubernetes.io",
	"huawei.com", "qualcomm.com", "cambricon.com", "hygon.com", "metax-tech.com", "iluvatar.ai", "iluvatar.com", "mthreads.com", "enflame.com", "enflame-tech.com", "kunlunxin.com", "tenstorrent.com", "xilinx.com",
	"birentech.com", "vastaitech.com", "baidu.com"}

// unknownVendorResources are other vendors' device plugin resources,
// HAMi's per-chip and shared ones (huawei.com/Ascend910B3,
// iluvatar.ai/BI-V150-vgpu, birentech.com/gpu, vastaitech.com/va…),
// Intel's xe, and NVIDIA's whole-GPU and vGPU names (Confidential
// Containers, KubeVirt), that the check's simulated nodes offer beside the
// inventory's.
var unknownVendorResources = []string{"huawei.com/Ascend910", "huawei.com/Ascend910B3", "huawei.com/ascend-1980", "qualcomm.com/qaic",
	"nvidia.com/GH100_H200_141GB", "nvidia.com/GRID_T4-16Q", "cambricon.com/mlu", "cambricon.com/vmlu", "hygon.com/dcu", "hygon.com/dcunum",
	"metax-tech.com/gpu", "metax-tech.com/sgpu", "iluvatar.ai/gpu", "iluvatar.ai/BI-V150-vgpu", "mthreads.com/vgpu", "enflame.com/gcu",
	"enflame.com/drs-gcu", "kunlunxin.com/xpu", "kunlunxin.com/vxpu", "tenstorrent.com/n300", "tenstorrent.com/p150a", "xilinx.com/fpga-xilinx_u250",
	"gpu.intel.com/xe", "birentech.com/gpu", "vastaitech.com/va",
	// Vendors' own plugins' resources and their shares and partitions
	// (inventory's vendorShare): Iluvatar's iluvatar.com/gpu, Cambricon's
	// env-share, Hygon's MIG, Biren's SVI, Ascend's vNPUs, Moore Threads'
	// sGPU cores, Enflame's shares.
	"iluvatar.com/gpu", "cambricon.com/mlu370.share", "hygon.com/dcu-mig-2g-15gb", "birentech.com/1-4-gpu", "huawei.com/npu-core",
	"huawei.com/Ascend310P-2c", "mthreads.com/sgpu-core", "enflame.com/shared-gcu", "enflame-tech.com/gcu", "enflame.com/vgcu", "baidu.com/xpu"}
