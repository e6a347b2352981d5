//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/accelc/accelc/pkg/render"
)

const (
	// attackLabel marks every object an attack makes, valued with the
	// attack's object name, so that the last step finds what is left.
	attackLabel = "accelc-e2e/attack"
	// attackTeamNS is the team namespace the attacks run in: ml-research
	// may use H200s and A100s, by profile, through Kueue.
	attackTeamNS = "ml-research"
	// attackGenericNS is hetero-prod's generic GPU namespace: pods there
	// may ask for GPUs with no profile, as before accelc.
	attackGenericNS = "legacy-batch"
	// podSecurity is how the API server's Pod Security admission, which
	// runs before the validating webhooks, refuses a pod: accelc renders
	// the namespaces' Pod Security labels, so it may refuse first.
	podSecurity = "violates PodSecurity"
	// vendorNode advertises device plugin resources of vendors whose
	// names the policies once did not know.
	vendorNode = "vendor-node-01"
)

// TestAttacks tries the seven ways past accelc that issue 44 found, on
// the whole cluster of TestStory (hetero-prod on KWOK with Gatekeeper,
// Kueue, Flux and nfd-master, plus the story's DRA profile a100-claim),
// committed at enforcement deny. Every request is made as devUser, a
// team's member (a client certificate bound to the rights a namespace
// member has), never as the admin. Each must be refused with accelc's
// message, or by a neighbour the step names that refuses first (Pod
// Security admission, at the level accelc renders for the namespace); the
// last step checks that nothing any attack made runs. One cluster serves
// every attack: it is the suite's most expensive start.
func TestAttacks(t *testing.T) {
	begin := time.Now()
	a := &attacks{st: startWholeCluster(t)}
	if !t.Run("deny", a.atDeny) {
		t.FailNow()
	}
	t.Run("1-kueue-told-to-look-away", a.kueueLooksAway)
	t.Run("2-claim-that-confines-nothing", a.claimConfinesNothing)
	t.Run("3-cdi-annotations", a.cdiAnnotations)
	t.Run("4-node-paths-in-a-generic-namespace", a.nodePaths)
	t.Run("5-excluded-names-nobody-uses", a.unusedExclusions)
	t.Run("6-unknown-vendors", a.unknownVendors)
	t.Run("7-named-claim-on-a-queued-profile", a.namedClaim)
	t.Run("8-kueue-webhook-skipped", a.kueueWebhookSkipped)
	t.Run("9-team-exempts-its-namespace", a.exemptsItsNamespace)
	t.Run("nothing-runs", a.nothingRuns)
	t.Logf("TestAttacks: %s in all, the cluster's start included", time.Since(begin).Round(time.Second))
}

// attacks is the cluster under attack and what the attacks left in it.
type attacks struct {
	st *story
	// gated is the pod of attack 1 that Kueue gated: it exists by
	// right (its creation is no attack) and must stay gated.
	gated string
	// confined are the attacks' pods admitted because accelc's mutation
	// confined them to their profile's types, where they cannot run.
	confined []string
	// claims are the attacks' ResourceClaims that may exist (a valid
	// claim the pod of attack 7 names).
	claims []string
}

// atDeny: the nodes join and KWOK runs them, the teams' namespaces and
// the generic GPU namespace exist, and the first commit (hetero-prod at
// deny, with the DRA profile) is applied by Flux and taken by Gatekeeper.
func (a *attacks) atDeny(t *testing.T) {
	st, s := a.st, a.st.s
	nodes := s.createNodes(t, filepath.Join(st.cluster, "inventory.json"), nil)
	st.waitNodesReady(t, nodes)
	s.ensureNamespaces(t, "ml-research", "serving-prod", "ds-notebooks", attackGenericNS)
	st.setEnforcement(t, "deny")
	st.commit(t, "the first commit (enforcement deny)")
	st.constraintsAt(t, "deny")
	if _, ok := a.profile("a100-claim"); !ok {
		t.Fatal("the tree has no HardwareProfile a100-claim (the story's DRA profile)")
	}
}

// kueueLooksAway, finding 1: Kueue's pod integration skips a pod whose
// controller is a kind its job integrations manage, trusting the Job's
// Workload to account for it. A user's CPU-only Job with a queue label is
// such an owner; the pod that names it asks for 8 H200s. And a user may
// not take Kueue's admission gate off a pod Kueue has not admitted.
func (a *attacks) kueueLooksAway(t *testing.T) {
	st, c, ctx := a.st, a.st.c, t.Context()
	// The LocalQueue of the profile the pods use (hetero-prod's teams
	// queue by profile), else the team's.
	queue := c.entitlements[attackTeamNS].queue
	if p, _ := a.profile("premium-gpu"); p.queue != "" {
		queue = p.queue
	}
	if queue == "" {
		t.Fatalf("neither profile premium-gpu nor namespace %s has a Kueue LocalQueue", attackTeamNS)
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "cpu-only", Namespace: attackTeamNS,
			Labels: map[string]string{render.QueueNameLabel: queue, attackLabel: "cpu-only"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "main", Image: "registry.example/attack:1",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}},
		}}},
	}
	if st.s.older() {
		// Before 1.36 what joins a profile's queue is the profile's
		// (docs/policies.md, "Before Kubernetes 1.36"): a CPU-only Job in
		// premium-gpu's queue asks for none of its GPUs, and is refused.
		// Kueue skips the pods of a Job whatever its labels, so the owner
		// the attack names is the same Job outside the queue.
		_, err := c.dev.BatchV1().Jobs(attackTeamNS).Create(ctx, job, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || !strings.Contains(err.Error(), "needs at least 1") {
			t.Fatalf("Kubernetes %s: a CPU-only Job in LocalQueue %s: want it refused for asking for none of the profile's GPUs, got %v", st.s.k8sVersion, queue, err)
		}
		t.Logf("Kubernetes %s: a CPU-only Job in LocalQueue %s is the profile's, and refused: %s", st.s.k8sVersion, queue, firstLine(err.Error()))
		delete(job.Labels, render.QueueNameLabel)
	}
	made, err := c.dev.BatchV1().Jobs(attackTeamNS).Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the user's CPU-only Job (labels %v; the owner the attack names): %v", job.Labels, err)
	}
	pod := a.profilePod(t, "owned-by-cpu-job", "premium-gpu", "8")
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: made.Name, UID: made.UID, Controller: ptr.To(true)}}
	a.createPod(t, "a pod of 8 H200s whose controller ownerReference is the user's CPU-only Job "+made.Name, pod,
		regexp.MustCompile(`entitlement: .*Kueue does not queue`))

	// A pod of the group of two that Kueue waits for (only one is ever
	// made), so Kueue keeps its gate on.
	grouped := a.profilePod(t, "gated", "premium-gpu", "1")
	grouped.Labels["kueue.x-k8s.io/pod-group-name"] = "attack-group"
	// Its LocalQueue, which the mutation would add, written so that
	// Kueue's webhook gates it whatever order the webhooks run in.
	grouped.Labels[render.QueueNameLabel] = queue
	grouped.Annotations = map[string]string{"kueue.x-k8s.io/pod-group-total-count": "2"}
	made2, err := c.dev.CoreV1().Pods(attackTeamNS).Create(ctx, grouped, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a pod of profile premium-gpu in a pod group: %v", err)
	}
	a.gated = made2.Name
	if !gated(made2) {
		t.Fatalf("Kueue's webhook did not gate pod %s (gates %v): nothing to take off", made2.Name, made2.Spec.SchedulingGates)
	}
	errUngated := errors.New("Kueue has taken its gate off already")
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		live, err := c.dev.CoreV1().Pods(attackTeamNS).Get(ctx, made2.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !gated(live) {
			return errUngated
		}
		live.Spec.SchedulingGates = slices.DeleteFunc(live.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == kueueGate })
		_, err = c.dev.CoreV1().Pods(attackTeamNS).Update(ctx, live, metav1.UpdateOptions{})
		return err
	})
	if errors.Is(err, errUngated) {
		t.Fatalf("pod %s: %v, before the user could; the attack needs a pod Kueue keeps waiting", made2.Name, err)
	}
	a.refused(t, "the user taking Kueue's gate "+kueueGate+" off their pod "+made2.Name, err,
		regexp.MustCompile(`entitlement: .*scheduling gate kueue\.x-k8s\.io/admission`))
	live, gerr := st.s.client.CoreV1().Pods(attackTeamNS).Get(ctx, made2.Name, metav1.GetOptions{})
	if gerr != nil {
		t.Fatal(gerr)
	}
	if !gated(live) || live.Spec.NodeName != "" {
		t.Errorf("pod %s after the attempt: gates %v, node %q; want Kueue's gate on and no node", live.Name, live.Spec.SchedulingGates, live.Spec.NodeName)
	}
}

// claimConfinesNothing, finding 2: a ResourceClaim or template that asks
// for no device is refused; a pod of the DRA profile is confined to the
// profile's types like any profile's, so one that aims at a V100 node
// (with the profile's GPU toleration, its claim from the profile's
// template) is refused.
func (a *attacks) claimConfinesNothing(t *testing.T) {
	c, ctx := a.st.c, t.Context()
	noDevice := regexp.MustCompile(`claims: .*asks for no device`)
	claim := &resourcev1.ResourceClaim{ObjectMeta: a.meta("asks-for-nothing")}
	_, err := c.dev.ResourceV1().ResourceClaims(attackTeamNS).Create(ctx, claim, metav1.CreateOptions{})
	if a.refused(t, "a ResourceClaim with no requests", err, noDevice) {
		a.absent(t, "ResourceClaim", func(ctx context.Context) error {
			_, err := a.st.s.client.ResourceV1().ResourceClaims(attackTeamNS).Get(ctx, claim.Name, metav1.GetOptions{})
			return err
		})
	}
	tmpl := &resourcev1.ResourceClaimTemplate{ObjectMeta: a.meta("template-of-nothing")}
	_, err = c.dev.ResourceV1().ResourceClaimTemplates(attackTeamNS).Create(ctx, tmpl, metav1.CreateOptions{})
	if a.refused(t, "a ResourceClaimTemplate with no requests", err, noDevice) {
		a.absent(t, "ResourceClaimTemplate", func(ctx context.Context) error {
			_, err := a.st.s.client.ResourceV1().ResourceClaimTemplates(attackTeamNS).Get(ctx, tmpl.Name, metav1.GetOptions{})
			return err
		})
	}

	p, _ := a.profile("a100-claim")
	v100 := a.nodeOfType(t, "nvidia-v100-16gb")
	pod := a.profilePod(t, "claim-on-v100", p.name, "")
	pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To(p.claimTemplate)}}
	pod.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	pod.Spec.Tolerations = p.tolerations
	pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{v100}}},
		}}},
	}}
	// accelc's mutation adds the profile's types to every term the pod
	// writes (as for any typed profile); the validation refuses a pod
	// whose terms still do not confine it.
	what := fmt.Sprintf("a pod of DRA profile %s (claim from template %s) with its own node affinity for V100 node %s", p.name, p.claimTemplate, v100)
	made, err := a.st.c.dev.CoreV1().Pods(attackTeamNS).Create(t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		a.refused(t, what, err, regexp.MustCompile(`profilescheduling: hardware profile "a100-claim" allows nvidia-a100-80gb`))
		return
	}
	if !confinedTo(made, a.st.c.typeLabel, p.types) {
		t.Errorf("%s: admitted under deny, and not confined to the profile's types %v: affinity %s", what, p.types, jsonString(made.Spec.Affinity))
		return
	}
	a.confined = append(a.confined, made.Name)
	t.Logf("%s: admitted, confined by accelc's mutation (every term of its required node affinity now also asks for %s In %v), so it can never be bound to %s", what, a.st.c.typeLabel, p.types, v100)
}

// confinedTo reports whether every term of the pod's required node
// affinity asks for label key In a subset of types and "mixed" (a node
// holding two models, which the policies count among a claim profile's
// types: it holds the claim's class too).
func confinedTo(pod *corev1.Pod, key string, types []string) bool {
	types = append(slices.Clone(types), "mixed")
	if pod.Spec.Affinity == nil || pod.Spec.Affinity.NodeAffinity == nil || pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	for _, term := range terms {
		if !slices.ContainsFunc(term.MatchExpressions, func(e corev1.NodeSelectorRequirement) bool {
			return e.Key == key && e.Operator == corev1.NodeSelectorOpIn && len(e.Values) > 0 &&
				!slices.ContainsFunc(e.Values, func(v string) bool { return !slices.Contains(types, v) })
		}) {
			return false
		}
	}
	return len(terms) > 0
}

// cdiAnnotations, finding 3: the annotations a container runtime reads
// as device requests (CDI's, CRI-O's), on a pod that asks for no
// accelerator and names no profile.
func (a *attacks) cdiAnnotations(t *testing.T) {
	for _, an := range []struct{ name, key, value string }{
		{"cdi-annotation", "cdi.k8s.io/attack", "nvidia.com/gpu=all"},
		{"nvidia-cdi-annotation", "nvidia.cdi.k8s.io/attack", "nvidia.com/gpu=all"},
		{"crio-devices", "io.kubernetes.cri-o.Devices", "/dev/nvidia0"},
	} {
		pod := a.pod(an.name, attackTeamNS, nil)
		pod.Annotations = map[string]string{an.key: an.value}
		a.createPod(t, fmt.Sprintf("a CPU pod with annotation %s: %s", an.key, an.value), pod,
			regexp.MustCompile(`deviceaccess: .*`+regexp.QuoteMeta(an.key)))
	}
}

// nodePaths, finding 4: in the generic GPU namespace (GPUs without a
// profile, as before accelc), what reaches every device of a node:
// CAP_SYS_ADMIN, hostPID with SYS_PTRACE, the container runtime's socket
// under /run, the container toolkit's install mounted writable. Pod
// Security admission refuses first where accelc renders the namespace's
// level.
func (a *attacks) nodePaths(t *testing.T) {
	oneGPU := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
	gpuTol := []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	sysAdmin := a.pod("cap-sys-admin", attackGenericNS, oneGPU)
	sysAdmin.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"CAP_SYS_ADMIN"}}}
	ptrace := a.pod("hostpid-ptrace", attackGenericNS, oneGPU)
	ptrace.Spec.HostPID = true
	ptrace.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"SYS_PTRACE"}}}
	socket := a.pod("runtime-socket", attackGenericNS, oneGPU)
	const sock = "/run/containerd/containerd.sock"
	socket.Spec.Volumes = []corev1.Volume{{Name: "runtime", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: sock}}}}
	socket.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "runtime", MountPath: sock}}
	// The GPU Operator's install of the NVIDIA container toolkit: its
	// configuration decides which devices every later container gets.
	toolkit := a.pod("toolkit-writable", attackGenericNS, oneGPU)
	const toolkitDir = "/usr/local/nvidia/toolkit"
	toolkit.Spec.Volumes = []corev1.Volume{{Name: "toolkit", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: toolkitDir}}}}
	toolkit.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "toolkit", MountPath: "/toolkit"}}
	for _, x := range []struct {
		what string
		pod  *corev1.Pod
	}{
		{"a GPU pod with capability CAP_SYS_ADMIN", sysAdmin},
		{"a GPU pod with hostPID and capability SYS_PTRACE", ptrace},
		{"a GPU pod with hostPath " + sock, socket},
		{"a GPU pod writing hostPath " + toolkitDir, toolkit},
	} {
		x.pod.Spec.Tolerations = gpuTol
		a.createPod(t, x.what+" in generic GPU namespace "+attackGenericNS, x.pod, regexp.MustCompile(`deviceaccess: `), podSecurity)
		// Where no Pod Security level is set (namespace default, of no
		// team), accelc's own rule refuses the same pod, made without a
		// GPU, whoever makes it: the cluster's admin here.
		bare := x.pod.DeepCopy()
		bare.Namespace = "default"
		bare.Spec.Containers[0].Resources = corev1.ResourceRequirements{}
		a.createPodAs(t, a.st.s.client, strings.Replace(x.what, "a GPU pod", "a CPU pod", 1)+" in namespace default, which sets no Pod Security level", bare,
			regexp.MustCompile(`deviceaccess: .*(adds capability|shares the node's PID namespace|mounts host path /run|mounts host path /usr/local/nvidia/toolkit writable)`))
	}
}

// unusedExclusions, finding 5: an excluded namespace that the cluster
// does not have is one a user who may create namespaces could make,
// ungoverned. The admin excludes the namespace older GPU Operators ran in
// (gpu-operator-resources), which this cluster does not have; accelc vet,
// reading the cluster live, refuses it (exit 1, naming it).
func (a *attacks) unusedExclusions(t *testing.T) {
	st, s, ctx := a.st, a.st.s, t.Context()
	const unused = "gpu-operator-resources"
	if _, err := s.client.CoreV1().Namespaces().Get(ctx, unused, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("namespace %s: %v, want it absent from the cluster", unused, err)
	}
	var excluded []string
	for _, r := range st.c.objs {
		if r.group() == "constraints.gatekeeper.sh" {
			excluded, _, _ = unstructured.NestedStringSlice(r.obj.Object, "spec", "match", "excludedNamespaces")
		}
	}
	quoted := make([]string, 0, len(excluded)+1)
	for _, ns := range append(excluded, unused) {
		quoted = append(quoted, fmt.Sprintf("%q", ns))
	}
	const file = "excluded-namespaces.cue"
	st.write(t, file, "package cluster\n\ncluster: excludedNamespaces: ["+strings.Join(quoted, ", ")+"]\n")
	defer func() { must(t, os.Remove(filepath.Join(st.cluster, file))) }()
	stdout, stderr, err := run(ctx, s.root, s.accelc, "vet", st.cluster, "--live", "--kubeconfig", s.cp.Kubeconfig())
	switch code := exitCode(err); {
	case code != 1:
		t.Errorf("accelc vet --live with excluded namespace %s, which the cluster does not have: exit %d, want 1\n%s%s", unused, code, stdout, stderr)
	case !strings.Contains(stdout+stderr, unused):
		t.Errorf("accelc vet --live exits 1 but does not name excluded namespace %s, which the cluster does not have:\n%s%s", unused, stdout, stderr)
	default:
		for line := range strings.SplitSeq(stdout+stderr, "\n") {
			if strings.Contains(line, unused) {
				t.Logf("accelc vet --live refuses excluded namespace %s, which the cluster does not have: %s", unused, strings.TrimSpace(line))
				break
			}
		}
	}
}

// unknownVendors, finding 6: a node advertises device plugin resources
// under GPU vendors' domains that are not the usual names (a whole H200
// as Confidential Containers and KubeVirt advertise it, Huawei's Ascend,
// Qualcomm's AI 100); a pod in a team namespace asks for each with no
// profile.
func (a *attacks) unknownVendors(t *testing.T) {
	st, s := a.st, a.st.s
	resources := []string{"nvidia.com/GH100_H200_141GB", "huawei.com/Ascend910", "qualcomm.com/qaic"}
	inv := filepath.Join(s.work, "vendor-node.json")
	must(t, os.WriteFile(inv, []byte(vendorNodeJSON(vendorNode, resources)), 0o644))
	s.createNodes(t, inv, nil)
	st.waitNodesReady(t, []string{vendorNode})
	for _, r := range resources {
		name := strings.ToLower(strings.NewReplacer("/", "-", ".", "-", "_", "-").Replace(r))
		pod := a.pod(name, attackTeamNS, corev1.ResourceList{corev1.ResourceName(r): resource.MustParse("1")})
		a.createPod(t, "a pod with no profile asking for one "+r+" (node "+vendorNode+" advertises 8)", pod, regexp.MustCompile(`profilerequired: `))
	}
}

// namedClaim, finding 7: a pod of a DRA profile that schedules through
// Kueue naming a ResourceClaim (one the team may make, of the profile's
// class): Kueue never admits it, so admission refuses it with the reason
// instead of leaving it gated forever.
func (a *attacks) namedClaim(t *testing.T) {
	c, ctx := a.st.c, t.Context()
	p, _ := a.profile("a100-claim")
	if p.queue == "" {
		t.Fatalf("HardwareProfile %s schedules through no Kueue queue", p.name)
	}
	claim := &resourcev1.ResourceClaim{ObjectMeta: a.meta("named-a100"), Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
		Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
			DeviceClassName: "nvidia-a100-80gb", AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: 1,
		}}},
	}}}
	if _, err := c.dev.ResourceV1().ResourceClaims(attackTeamNS).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a ResourceClaim of one A100 in %s, which the team may make: %v", attackTeamNS, err)
	}
	a.claims = append(a.claims, claim.Name)
	pod := a.profilePod(t, "names-a-claim", p.name, "")
	pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To(claim.Name)}}
	pod.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	// The policy judges a named claim by Gatekeeper's synced copy: wait
	// until a dry run no longer says it has none.
	err := poll(ctx, gatekeeperTimeout, func(ctx context.Context) (bool, string, error) {
		_, err := c.dev.CoreV1().Pods(attackTeamNS).Create(ctx, pod.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "which Gatekeeper has not synced") {
			return false, err.Error(), nil
		}
		return true, "", nil
	})
	if err != nil {
		t.Fatalf("Gatekeeper never synced ResourceClaim %s: %v", claim.Name, err)
	}
	a.createPod(t, fmt.Sprintf("a pod of queued DRA profile %s (LocalQueue %s) naming ResourceClaim %s", p.name, p.queue, claim.Name), pod,
		regexp.MustCompile(`deviceaccess: .*never admits a pod with a named ResourceClaim`))
}

// kueueWebhookSkipped: accelc trusts Kueue's webhooks to gate every pod
// and suspend every Job that names a LocalQueue. Where they do not run (a
// cluster's Kueue configured apart from accelc's fragment, a webhook
// failing open), such a pod or Job would run at once, counted by no
// Workload. The step makes Kueue's pod and job webhooks skip objects of a
// label (their objectSelector, as a cluster admin could); then the user's
// pod and Job of premium-gpu, which name its LocalQueue, carry that label:
// they reach Gatekeeper ungated and running and must be refused. The
// webhooks are restored afterwards.
func (a *attacks) kueueWebhookSkipped(t *testing.T) {
	s := a.st.s
	const skip = "accelc-e2e/kueue-skips"
	a.skipKueueWebhook(t, "mpod.kb.io", skip)
	a.skipKueueWebhook(t, "mjob.kb.io", skip)
	p, _ := a.profile("premium-gpu")

	pod := a.profilePod(t, "kueue-skipped", "premium-gpu", "1")
	pod.Labels[skip] = "true"
	pod.Labels[render.QueueNameLabel] = p.queue
	a.refused(t, fmt.Sprintf("a pod of profile premium-gpu naming LocalQueue %s that Kueue's pod webhook skipped", p.queue),
		a.createSkipped(t, func(ctx context.Context) (bool, error) {
			made, err := a.st.c.dev.CoreV1().Pods(attackTeamNS).Create(ctx, pod, metav1.CreateOptions{})
			if err != nil {
				return false, err
			}
			if !gated(made) {
				return false, fmt.Errorf("pod %s was admitted without Kueue's gate (gates %v): Kueue will never count it", made.Name, made.Spec.SchedulingGates)
			}
			return true, s.client.CoreV1().Pods(attackTeamNS).Delete(ctx, made.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		}),
		regexp.MustCompile(`entitlement: .*reached admission without Kueue's scheduling gate`))
	a.absent(t, "pod "+pod.Name, func(ctx context.Context) error {
		_, err := s.client.CoreV1().Pods(attackTeamNS).Get(ctx, pod.Name, metav1.GetOptions{})
		return err
	})

	tmpl := a.profilePod(t, "kueue-skipped-job", "premium-gpu", "1")
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "kueue-skipped-job", Namespace: attackTeamNS,
			Labels: map[string]string{render.QueueNameLabel: p.queue, skip: "true", attackLabel: "kueue-skipped-job"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: tmpl.Labels},
			Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: tmpl.Spec.Containers},
		}},
	}
	a.refused(t, fmt.Sprintf("a Job of profile premium-gpu naming LocalQueue %s that Kueue's job webhook skipped", p.queue),
		a.createSkipped(t, func(ctx context.Context) (bool, error) {
			made, err := a.st.c.dev.BatchV1().Jobs(attackTeamNS).Create(ctx, job, metav1.CreateOptions{})
			if err != nil {
				return false, err
			}
			if made.Spec.Suspend == nil || !*made.Spec.Suspend {
				return false, fmt.Errorf("job %s was admitted running: Kueue will never count its pods", made.Name)
			}
			return true, s.client.BatchV1().Jobs(attackTeamNS).Delete(ctx, made.Name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationForeground)})
		}),
		regexp.MustCompile(`entitlement: .*reached admission not suspended`))
	a.absent(t, "job "+job.Name, func(ctx context.Context) error {
		_, err := s.client.BatchV1().Jobs(attackTeamNS).Get(ctx, job.Name, metav1.GetOptions{})
		return err
	})
}

// skipKueueWebhook makes Kueue's webhook of that name skip objects with
// the label, until the test ends.
func (a *attacks) skipKueueWebhook(t *testing.T, webhook, label string) {
	t.Helper()
	ctx := t.Context()
	hooks := a.st.s.client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	list, err := hooks.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	name, at := "", -1
	var orig *metav1.LabelSelector
	for _, cfg := range list.Items {
		for i, h := range cfg.Webhooks {
			if h.Name == webhook {
				name, at, orig = cfg.Name, i, h.ObjectSelector
			}
		}
	}
	if name == "" {
		t.Fatalf("no MutatingWebhookConfiguration has Kueue's webhook %s", webhook)
	}
	set := func(ctx context.Context, sel *metav1.LabelSelector) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cfg, err := hooks.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			cfg.Webhooks[at].ObjectSelector = sel
			_, err = hooks.Update(ctx, cfg, metav1.UpdateOptions{})
			return err
		})
	}
	if err := set(ctx, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: label, Operator: metav1.LabelSelectorOpDoesNotExist}}}); err != nil {
		t.Fatalf("making Kueue's webhook %s skip label %s: %v", webhook, label, err)
	}
	t.Cleanup(func() {
		if err := set(context.Background(), orig); err != nil {
			t.Errorf("restoring Kueue's webhook %s: %v", webhook, err)
		}
	})
}

// createSkipped tries create until the API server's webhook configuration
// cache sees the change: until then Kueue's webhook runs, and create
// (which deletes what it made) says so. It returns the refusal, or an
// error saying what was admitted.
func (a *attacks) createSkipped(t *testing.T, create func(context.Context) (kueueRan bool, err error)) error {
	t.Helper()
	var got error
	_ = poll(t.Context(), 60*time.Second, func(ctx context.Context) (bool, string, error) {
		ran, err := create(ctx)
		if !ran {
			got = err
			return true, "", nil
		}
		if err != nil {
			return false, err.Error(), nil
		}
		// The name is free again before the next try.
		time.Sleep(2 * time.Second)
		return false, "Kueue's webhook still runs", nil
	})
	if got == nil {
		t.Fatal("Kueue's webhook kept running on the labelled object: the webhook change never took effect")
	}
	return got
}

// exemptsItsNamespace: every accelc policy skips a namespace labelled
// admission.gatekeeper.sh/ignore, as Gatekeeper's webhooks do. A team
// admin who may edit their own namespace (as a tenancy operator lets
// them) labels it so, and an admin makes a new namespace so labelled;
// Gatekeeper's check-ignore-label webhook, which its chart registers and
// accelc's values keep failing closed, refuses the label on any namespace
// Gatekeeper does not exempt, and the team namespace's pods stay judged.
func (a *attacks) exemptsItsNamespace(t *testing.T) {
	s, ctx := a.st.s, t.Context()
	const teamAdmin = "ml-research-admin"
	s.bindUser(t, teamAdmin, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: []string{attackTeamNS}, Verbs: []string{"get", "update", "patch"}}})
	admin, err := kubernetes.NewForConfig(s.cp.UserRESTConfig(t, teamAdmin))
	if err != nil {
		t.Fatal(err)
	}
	// refusedByGatekeeper checks that the label was refused by
	// Gatekeeper's check-ignore-label webhook.
	refusedByGatekeeper := func(what string, err error) {
		t.Helper()
		switch {
		case err == nil:
			t.Errorf("%s: admitted under deny: Gatekeeper and every accelc policy skip that namespace's pods", what)
		case !strings.Contains(err.Error(), "check-ignore-label.gatekeeper.sh") || !strings.Contains(err.Error(), "Only exempt namespace"):
			t.Errorf("%s: refused, but not by Gatekeeper's check-ignore-label webhook: %v", what, err)
		default:
			t.Logf("%s: refused by Gatekeeper's check-ignore-label webhook: %s", what, firstLine(err.Error()))
		}
	}
	label := []byte(`{"metadata": {"labels": {"` + render.GatekeeperIgnoreLabel + `": "false"}}}`)
	// The binding reaches the API server's authorizer within moments; a
	// webhook's denial is a 403 too, but not RBAC's.
	_ = poll(ctx, 20*time.Second, func(ctx context.Context) (bool, string, error) {
		_, err = admin.CoreV1().Namespaces().Patch(ctx, attackTeamNS, types.MergePatchType, label, metav1.PatchOptions{})
		rbac := apierrors.IsForbidden(err) && !strings.Contains(err.Error(), "admission webhook")
		return !rbac, fmt.Sprint(err), nil
	})
	// Any value exempts: the selectors ask only that the label exist.
	refusedByGatekeeper(fmt.Sprintf("team admin labels namespace %s %s=false", attackTeamNS, render.GatekeeperIgnoreLabel), err)
	ns, err := s.client.CoreV1().Namespaces().Get(ctx, attackTeamNS, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ns.Labels[render.GatekeeperIgnoreLabel]; ok {
		t.Errorf("namespace %s carries %s after its refusal", attackTeamNS, render.GatekeeperIgnoreLabel)
	}
	_, err = s.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: "attack-born-exempt", Labels: map[string]string{attackLabel: "attack-born-exempt", render.GatekeeperIgnoreLabel: "true"},
	}}, metav1.CreateOptions{})
	refusedByGatekeeper("the cluster admin makes namespace attack-born-exempt with "+render.GatekeeperIgnoreLabel, err)
	// Still governed: a GPU pod that names no profile is refused.
	pod := a.pod("exempt-namespace-v100", attackTeamNS, corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")})
	pod.Spec.NodeSelector = map[string]string{a.st.c.typeLabel: "nvidia-v100-16gb"}
	a.createPod(t, "a V100 pod naming no profile in "+attackTeamNS+" after the label was refused", pod, regexp.MustCompile(`(profilerequired|entitlement): `))
}

// nothingRuns: of everything the attacks made, only the user's CPU-only
// Job, the gated pod of attack 1 (still gated, on no node) and the valid
// claim of attack 7 exist. A pod that does exist was admitted, and the
// step says what Kubernetes did with it.
func (a *attacks) nothingRuns(t *testing.T) {
	s, ctx := a.st.s, t.Context()
	sel := metav1.ListOptions{LabelSelector: attackLabel}
	var pods []corev1.Pod
	// Admitted pods are given a moment to show where they run.
	_ = poll(ctx, 20*time.Second, func(ctx context.Context) (bool, string, error) {
		list, err := s.client.CoreV1().Pods("").List(ctx, sel)
		if err != nil {
			return false, err.Error(), nil
		}
		pods = list.Items
		for _, p := range pods {
			if p.Name != a.gated && !slices.Contains(a.confined, p.Name) && p.Status.Phase != corev1.PodRunning {
				return false, "", nil
			}
		}
		return true, "", nil
	})
	for _, p := range pods {
		if p.Name == a.gated {
			if !gated(&p) || p.Spec.NodeName != "" {
				t.Errorf("pod %s/%s: gates %v, node %q, phase %s: Kueue's gate is off, and Kueue never admitted a group it waits for", p.Namespace, p.Name, p.Spec.SchedulingGates, p.Spec.NodeName, p.Status.Phase)
			}
			continue
		}
		if slices.Contains(a.confined, p.Name) && p.Spec.NodeName == "" {
			continue
		}
		t.Errorf("pod %s/%s of an attack exists: phase %s on node %q (gates %v)", p.Namespace, p.Name, p.Status.Phase, p.Spec.NodeName, p.Spec.SchedulingGates)
	}
	claims, err := s.client.ResourceV1().ResourceClaims("").List(ctx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range claims.Items {
		if !slices.Contains(a.claims, cl.Name) {
			t.Errorf("ResourceClaim %s/%s of an attack exists", cl.Namespace, cl.Name)
		}
	}
	if !t.Failed() {
		t.Logf("nothing of the attacks runs: of their pods only %s (gated by Kueue) and %v (confined by the mutation where they fit no node) exist, on no node; of their claims only %v", a.gated, a.confined, a.claims)
	}
}

// createPod creates the pod as devUser and wants it refused (see
// refused); a refused pod must not exist.
func (a *attacks) createPod(t *testing.T, what string, pod *corev1.Pod, want *regexp.Regexp, neighbours ...string) {
	t.Helper()
	a.createPodAs(t, a.st.c.dev, what, pod, want, neighbours...)
}

// createPodAs is createPod by the given client's user.
func (a *attacks) createPodAs(t *testing.T, as kubernetes.Interface, what string, pod *corev1.Pod, want *regexp.Regexp, neighbours ...string) {
	t.Helper()
	_, err := as.CoreV1().Pods(pod.Namespace).Create(t.Context(), pod, metav1.CreateOptions{})
	if a.refused(t, what, err, want, neighbours...) {
		a.absent(t, "pod "+pod.Name, func(ctx context.Context) error {
			_, err := a.st.s.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			return err
		})
	}
}

// refused checks the answer to an attack's request: Gatekeeper's denial
// with accelc's message matching want, or a refusal by one of the
// neighbours named (text the refusal holds) before Gatekeeper judged it.
// It logs which, fails t otherwise, and reports whether it was refused.
func (a *attacks) refused(t *testing.T, what string, err error, want *regexp.Regexp, neighbours ...string) bool {
	t.Helper()
	if err == nil {
		t.Errorf("%s: admitted under deny", what)
		return false
	}
	msg := err.Error()
	if denial, ok := accelcDenied(msg); ok {
		for line := range strings.SplitSeq(denial, "\n") {
			if want.MatchString(line) {
				t.Logf("%s: refused by accelc: %s", what, strings.TrimSpace(line))
				return true
			}
		}
		t.Errorf("%s: denied by Gatekeeper, but with no message matching %q: %s", what, want, denial)
		return false
	}
	for _, n := range neighbours {
		if strings.Contains(msg, n) {
			t.Logf("%s: refused first by %q, before Gatekeeper judged it: %s", what, n, firstLine(msg))
			return true
		}
	}
	t.Errorf("%s: refused, but not by accelc (want a message matching %q): %v", what, want, err)
	return false
}

// absent checks that the object an attack asked for is not in the
// cluster (get answers it).
func (a *attacks) absent(t *testing.T, what string, get func(context.Context) error) {
	t.Helper()
	if err := get(t.Context()); !apierrors.IsNotFound(err) {
		t.Errorf("%s is in the cluster after its refusal (%v)", what, err)
	}
}

// meta is an attack object's metadata in the team namespace.
func (a *attacks) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: attackTeamNS, Labels: map[string]string{attackLabel: name}}
}

// pod is a pod as a user writes it: one container, the limits given.
func (a *attacks) pod(name, ns string, limits corev1.ResourceList) *corev1.Pod {
	m := a.meta(name)
	m.Namespace = ns
	return &corev1.Pod{ObjectMeta: m, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "main", Image: "registry.example/attack:1",
		Resources: corev1.ResourceRequirements{Limits: limits},
	}}}}
}

// profilePod is a pod of the profile in the team namespace, named by its
// label, asking for gpus of the profile's resource ("": none, for a
// profile that hands out devices by claim).
func (a *attacks) profilePod(t *testing.T, name, profile, gpus string) *corev1.Pod {
	t.Helper()
	p, ok := a.profile(profile)
	if !ok {
		t.Fatalf("the tree has no HardwareProfile %s", profile)
	}
	var limits corev1.ResourceList
	if gpus != "" {
		limits = corev1.ResourceList{p.resource: resource.MustParse(gpus)}
	}
	pod := a.pod(name, attackTeamNS, limits)
	pod.Labels[p.labelKey] = p.name
	return pod
}

func (a *attacks) profile(name string) (profile, bool) {
	for _, p := range a.st.c.profiles {
		if p.name == name {
			return p, true
		}
	}
	return profile{}, false
}

// nodeOfType is the first node, by name, of the type.
func (a *attacks) nodeOfType(t *testing.T, typ string) string {
	t.Helper()
	var names []string
	for n, nt := range a.st.c.nodeTypes {
		if nt == typ {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		t.Fatalf("the cluster has no node of type %s", typ)
	}
	sort.Strings(names)
	return names[0]
}

// vendorNodeJSON is a node list of one untainted node advertising 8 of
// each resource.
func vendorNodeJSON(node string, resources []string) string {
	capacity := `"cpu": "64", "memory": "512Gi", "pods": "110"`
	for _, r := range resources {
		capacity += fmt.Sprintf(`, %q: "8"`, r)
	}
	return fmt.Sprintf(`{"apiVersion": "v1", "kind": "List", "items": [{
  "apiVersion": "v1", "kind": "Node",
  "metadata": {"name": %q, "labels": {"kubernetes.io/hostname": %q, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}},
  "status": {"capacity": {%s}, "conditions": [{"type": "Ready", "status": "True"}]}
}]}`, node, node, capacity)
}
