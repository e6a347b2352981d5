//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/policytest/engine"
	"github.com/accelc/accelc/pkg/render"
)

// TestPodProfilePolicy: on Kubernetes 1.36 the API server itself gives a
// new pod what Gatekeeper's pod mutators would (the rendered
// accelc-pod-profile MutatingAdmissionPolicy, translated from them), so
// that Gatekeeper's mutating webhook is sent no pod. For every example,
// every offered profile and every team namespace (and one no team has,
// and one the cluster excludes), pods written as users and Open Data Hub
// write them — the profile by label or only by ODH's annotation; with
// their own required affinity (a term on another key, a term of
// matchFields only, a term with a type of their own), tolerations (one
// of the profile's, one of their own), a priority class, a preference, a
// team annotation — are made (server-side dry run, so no node is needed)
// through the real API server with the example's two pod policies, and
// each comes back exactly as Gatekeeper's own mutation code leaves it
// offline (engine.Mutator, which accelc test uses): its labels,
// annotations, affinity, tolerations and priority.
func TestPodProfilePolicy(t *testing.T) {
	s := newSuite(t)
	if s.older() {
		t.Skipf("Kubernetes %s serves no MutatingAdmissionPolicy: Gatekeeper's mutating webhook mutates pods there", s.k8sVersion)
	}
	s.cp = controlplane.Start(t)
	s.connect(t)
	for _, example := range []string{"hetero-prod", "gpu-pools", "small-lab", "tpu-trainium"} {
		t.Run(example, func(t *testing.T) {
			out := s.render(t, example, "pod-policy")
			m, err := compile.Load(s.clusterPath(example))
			if err != nil {
				t.Fatal(err)
			}
			tree, err := render.LoadTree(out)
			if err != nil {
				t.Fatal(err)
			}
			checkPodPolicy(t, s, example, m, tree, out, nil, 0)
		})
	}
	// A fleet of 500 teams (1,000 namespaces) and 100 profiles: one
	// expression of every operation would outgrow the API server's
	// limit on a CEL expression (100,000 code points) and the policy be
	// refused, so no pod mutated.
	t.Run("fleet", func(t *testing.T) {
		m := fleetModel(t, 500, 100)
		tree, err := render.Cluster(m, &inventory.Inventory{})
		if err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		if err := tree.Write(out); err != nil {
			t.Fatal(err)
		}
		// Every fiftieth team's first namespace, every tenth profile.
		var namespaces []string
		for i := 0; i < len(m.Teams); i += 50 {
			namespaces = append(namespaces, m.Teams[i].Namespaces[0])
		}
		checkPodPolicy(t, s, "fleet", m, tree, out, namespaces, 10)
	})
}

// checkPodPolicy applies the tree's pod policy and priority classes (from
// out, where it is written), then makes each pod shape in each namespace
// (the teams' by default) and in one no team has and one the cluster
// excludes, and compares what comes back with what Gatekeeper's mutators
// do offline, and one pod of 5,000 tolerations and 500 terms the same
// way. every > 1 takes every such profile only.
func checkPodPolicy(t *testing.T, s *suite, example string, m *compile.Model, tree render.Tree, out string, namespaces []string, every int) {
	t.Helper()
	if _, ok := tree["mutations/mutatingadmissionpolicy-"+render.PodProfilePolicyName+".yaml"]; !ok {
		t.Fatalf("%s: no %s rendered for Kubernetes 1.36", example, render.PodProfilePolicyName)
	}
	if namespaces == nil {
		for _, team := range m.Teams {
			namespaces = append(namespaces, team.Namespaces...)
		}
	}
	namespaces = slices.Sorted(slices.Values(namespaces))
	elsewhere := "no-team-" + example
	namespaces = append(namespaces, elsewhere)
	if len(m.Cluster.ExcludedNamespaces) > 0 && !strings.Contains(m.Cluster.ExcludedNamespaces[0], "*") {
		namespaces = append(namespaces, m.Cluster.ExcludedNamespaces[0])
	}
	s.ensureNamespaces(t, namespaces...)
	for _, p := range tree.Paths() {
		if strings.HasPrefix(p, "priorities/priorityclass-") ||
			strings.HasPrefix(p, "mutations/mutatingadmissionpolicy-"+render.PodProfilePolicyName+".") ||
			strings.HasPrefix(p, "mutations/mutatingadmissionpolicybinding-"+render.PodProfilePolicyName+".") {
			s.mustKubectl(t, "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(out, p))
		}
	}
	mutator, err := engine.NewMutator(tree, namespaces)
	if err != nil {
		t.Fatal(err)
	}
	label := m.Cluster.LabelPrefix + "/profile"
	var profiles []*compile.Profile
	for i := range m.Profiles {
		if m.Profiles[i].Offered() && (every <= 1 || i%every == 0) {
			profiles = append(profiles, &m.Profiles[i])
		}
	}
	shapes := podShapes(label, profiles, m.Cluster.TypeLabel())
	// The policies reach the API server's admission a moment after
	// they are made: wait until the first profile's pod named by
	// ODH's annotation, in the first namespace, is mutated by
	// both.
	probe := shapes[4].pod.DeepCopy()
	probe.Name, probe.Namespace = "probe", namespaces[0]
	want := mutatedFields(t, offline(t, mutator, probe))
	deadline := time.Now().Add(30 * time.Second)
	for {
		created, err := s.client.CoreV1().Pods(probe.Namespace).Create(t.Context(), probe.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil && cmp.Equal(want, mutatedFields(t, created)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pod policies did not take effect in 30s: %v %s", err, cmp.Diff(want, mutatedFields(t, created)))
		}
		time.Sleep(200 * time.Millisecond)
	}
	checked := 0
	for _, ns := range namespaces {
		for _, c := range shapes {
			pod := c.pod.DeepCopy()
			pod.Name, pod.Namespace = c.name, ns
			live, err := s.client.CoreV1().Pods(ns).Create(t.Context(), pod.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				t.Errorf("%s/%s (%s): %v", ns, c.name, c.what, err)
				continue
			}
			if diff := cmp.Diff(mutatedFields(t, offline(t, mutator, pod)), mutatedFields(t, live)); diff != "" {
				t.Errorf("%s/%s (%s): the API server's policy and Gatekeeper's mutators disagree (-offline +live):\n%s", ns, c.name, c.what, diff)
				continue
			}
			checked++
		}
	}
	t.Logf("%s: %d pods in %d namespaces came back from the API server as Gatekeeper's mutators leave them", example, checked, len(namespaces))
	// A pod made huge to run the policy out of its CEL cost budget (its
	// failure would refuse the pod; a partial patch must never pass):
	// 5,000 tolerations of its own and 500 required terms, each of which
	// must still be confined to the profile's types.
	huge := shapes[3].pod.DeepCopy()
	huge.Name, huge.Namespace = "huge", namespaces[0]
	var terms []corev1.NodeSelectorTerm
	for i := range 5000 {
		huge.Spec.Tolerations = append(huge.Spec.Tolerations, corev1.Toleration{Key: fmt.Sprintf("example.com/own-%d", i), Operator: corev1.TolerationOpExists})
		if i%10 == 0 {
			terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: fmt.Sprintf("example.com/zone-%d", i), Operator: corev1.NodeSelectorOpExists}}})
		}
	}
	huge.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	if live, err := s.client.CoreV1().Pods(huge.Namespace).Create(t.Context(), huge.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("%s/huge (5,000 tolerations, 500 terms): %v", huge.Namespace, err)
	} else if diff := cmp.Diff(mutatedFields(t, offline(t, mutator, huge)), mutatedFields(t, live)); diff != "" {
		t.Errorf("%s/huge (5,000 tolerations, 500 terms): the API server's policy and Gatekeeper's mutators disagree (-offline +live):\n%s", huge.Namespace, diff)
	}
	// A namespace Gatekeeper's webhooks ignore (its label) is
	// ignored by the policy that stands in for its mutating one.
	ignored := "gk-ignored-" + example
	if _, err := s.client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: ignored, Labels: map[string]string{render.GatekeeperIgnoreLabel: "true"},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := shapes[3].pod.DeepCopy()
	pod.Name = "ignored"
	live, err := s.client.CoreV1().Pods(ignored).Create(t.Context(), pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(mutatedFields(t, pod), mutatedFields(t, live)); diff != "" {
		t.Errorf("%s/%s: a pod in a namespace Gatekeeper ignores was mutated (-written +live):\n%s", ignored, pod.Name, diff)
	}
	excluded := ""
	if len(m.Cluster.ExcludedNamespaces) > 0 && !strings.Contains(m.Cluster.ExcludedNamespaces[0], "*") {
		excluded = m.Cluster.ExcludedNamespaces[0]
	}
	checkWorkloadPolicyScope(t, s, m, tree, out, ignored, excluded)
	// An ODH annotation that cannot be a label value (a hand-written
	// pod's typo, or a try to get past the label's selectors) is
	// refused, not admitted without the label the mutators key on.
	bad := shapes[0].pod.DeepCopy()
	bad.Name = "bad-annotation"
	bad.Annotations = map[string]string{render.ProfileAnnotation: "not a label value!"}
	_, err = s.client.CoreV1().Pods(namespaces[0]).Create(t.Context(), bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "metadata.labels") {
		t.Errorf("%s/%s: a pod whose ODH annotation is no label value: got %v, want the API server to refuse the label as invalid", namespaces[0], bad.Name, err)
	}
}

// podShape is a pod as a user or Open Data Hub writes it.
type podShape struct {
	name, what string
	pod        *corev1.Pod
}

// podShapes are, for each profile, the pods TestPodProfilePolicy makes,
// and a pod naming no profile.
func podShapes(label string, profiles []*compile.Profile, typeLabel string) []podShape {
	base := func(labels, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/train:1"}}},
		}
	}
	out := []podShape{
		{name: "plain", what: "no profile", pod: base(nil, nil)},
		// An empty profile label exists to Gatekeeper's selectors (the
		// team's priority label selects Exists).
		{name: "empty-label", what: "an empty profile label", pod: base(map[string]string{label: ""}, nil)},
		{name: "empty-odh", what: "an empty ODH annotation", pod: base(nil, map[string]string{render.ProfileAnnotation: ""})},
	}
	for _, p := range profiles {
		byLabel := func() *corev1.Pod { return base(map[string]string{label: p.Name}, nil) }
		out = append(out,
			podShape{name: p.Name + "-label", what: "the profile's label only", pod: byLabel()},
			podShape{name: p.Name + "-odh", what: "Open Data Hub's annotation only", pod: base(nil, map[string]string{render.ProfileAnnotation: p.Name})})
		terms := byLabel()
		terms.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}},
			{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"node-1"}}}},
			{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: typeLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{"own-choice"}}}},
		}}}}
		out = append(out, podShape{name: p.Name + "-own-affinity", what: "its own required terms", pod: terms})
		own := byLabel()
		own.Spec.Tolerations = []corev1.Toleration{{Key: "example.com/own", Operator: corev1.TolerationOpExists}}
		if len(p.Tolerations) > 0 {
			t := p.Tolerations[0]
			own.Spec.Tolerations = append(own.Spec.Tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOperator(t.Operator), Value: t.Value, Effect: corev1.TaintEffect(t.Effect), TolerationSeconds: t.TolerationSeconds})
		}
		own.Annotations = map[string]string{"accelerator.opendatahub.io/team": "someone-else", render.ProfileAnnotation: p.Name}
		own.Labels["kueue.x-k8s.io/queue-name"] = "own-queue"
		own.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
			{Weight: 5, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}},
		}}, PodAffinity: &corev1.PodAffinity{}}
		out = append(out, podShape{name: p.Name + "-own-fields", what: "its own tolerations, queue, team, preference", pod: own})
	}
	return out
}

// offline is the pod as Gatekeeper's mutators (and accelc's other
// admission mutations) leave it, offline.
func offline(t *testing.T, mutator *engine.Mutator, pod *corev1.Pod) *corev1.Pod {
	t.Helper()
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		t.Fatal(err)
	}
	got, err := mutator.MutateObject(&unstructured.Unstructured{Object: u})
	if err != nil {
		t.Fatal(err)
	}
	var out corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// mutatedFields are the fields the pod mutators write, as JSON, leaving
// out what other admission plugins add (the DefaultTolerationSeconds
// plugin's tolerations; the Priority plugin's value and policy of a pod
// without a class).
func mutatedFields(t *testing.T, pod *corev1.Pod) map[string]string {
	t.Helper()
	tolerations := slices.DeleteFunc(slices.Clone(pod.Spec.Tolerations), func(tol corev1.Toleration) bool {
		return tol.TolerationSeconds != nil && *tol.TolerationSeconds == 300 &&
			(tol.Key == corev1.TaintNodeNotReady || tol.Key == corev1.TaintNodeUnreachable)
	})
	if len(tolerations) == 0 {
		tolerations = nil
	}
	labels, annotations := pod.Labels, pod.Annotations
	if len(labels) == 0 {
		labels = nil
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	fields := map[string]any{
		"labels":            labels,
		"annotations":       annotations,
		"affinity":          pod.Spec.Affinity,
		"tolerations":       tolerations,
		"priorityClassName": pod.Spec.PriorityClassName,
	}
	if pod.Spec.PriorityClassName != "" {
		fields["priority"] = pod.Spec.Priority
		fields["preemptionPolicy"] = pod.Spec.PreemptionPolicy
	}
	out := map[string]string{}
	for k, v := range fields {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(b)
	}
	return out
}

// fleetModel is a cluster of teams, two namespaces each, entitled to ten
// of the built-in catalog's types, and profiles, one type each in turn,
// on Kubernetes 1.36.
func fleetModel(t testing.TB, teams, profiles int) *compile.Model {
	t.Helper()
	cat, err := catalog.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	ids := cat.IDs()
	m := &compile.Model{
		Cluster: compile.Cluster{Name: "fleet", LabelPrefix: "accelerator.opendatahub.io", ProfileNamespace: "opendatahub",
			KubernetesVersion: "1.36", Enforcement: compile.Deny, ExcludedNamespaces: []string{"kube-system"}},
		Catalog: cat,
	}
	for i := range profiles {
		c, _ := cat.Get(ids[i%len(ids)])
		most := 8
		m.Profiles = append(m.Profiles, compile.Profile{
			Name: fmt.Sprintf("profile-%03d", i), DisplayName: fmt.Sprintf("Profile %d", i), Enabled: true,
			AcceleratorTypes: []string{c.ID}, Classes: []*catalog.Class{c}, ResourceName: c.ResourceName,
			GPU:         compile.GPURange{Min: 1, Default: 1, Max: &most},
			Tolerations: []compile.Toleration{{Key: c.ResourceName, Operator: "Exists", Effect: "NoSchedule"}},
		})
	}
	for i := range teams {
		m.Teams = append(m.Teams, compile.Team{
			Name: fmt.Sprintf("team-%03d", i), Namespaces: []string{fmt.Sprintf("team-%03d-a", i), fmt.Sprintf("team-%03d-b", i)},
			AcceleratorTypes: ids[i%7 : i%7+10],
		})
	}
	return m
}

// checkWorkloadPolicyScope applies the tree's other
// MutatingAdmissionPolicies (the workloads' profile label, the job
// queue, the topology) and checks, through the API server by dry run,
// that they are bound where the pod policy is: a Deployment whose
// template names a profile only by ODH's annotation gets the profile
// label in a team namespace, a Job of a queued profile its queue there,
// and both are left as written in a namespace Gatekeeper ignores and in
// one the cluster excludes.
func checkWorkloadPolicyScope(t *testing.T, s *suite, m *compile.Model, tree render.Tree, out, ignored, excluded string) {
	t.Helper()
	for _, p := range tree.Paths() {
		if strings.HasPrefix(p, "mutations/mutatingadmissionpolicy") && !strings.Contains(p, render.PodProfilePolicyName+".") {
			s.mustKubectl(t, "apply", "--server-side", "--force-conflicts", "-f", filepath.Join(out, p))
		}
	}
	label := m.Cluster.LabelPrefix + "/profile"
	var profile *compile.Profile
	for i := range m.Profiles {
		if m.Profiles[i].Offered() {
			profile = &m.Profiles[i]
			break
		}
	}
	if profile == nil || len(m.Teams) == 0 {
		t.Fatal("the cluster offers no profile to a team")
	}
	team := m.Teams[0].Namespaces[0]
	a := render.AdmissionMutationsOf(m)
	var queued *render.GangLabels
	if g := a.JobQueues["batch/Job"]; len(g) > 0 {
		queued = &g[0]
	}
	template := func(profile string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "scope"}, Annotations: map[string]string{render.ProfileAnnotation: profile}},
			Spec:       corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "registry.example/train:1"}}},
		}
	}
	deployment := func(ns string) (map[string]string, error) {
		tmpl := template(profile.Name)
		tmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "scope", Namespace: ns},
			Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "scope"}}, Template: tmpl},
		}
		live, err := s.client.AppsV1().Deployments(ns).Create(t.Context(), d, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return nil, err
		}
		return live.Spec.Template.Labels, nil
	}
	job := func(ns string) (map[string]string, error) {
		j := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "scope", Namespace: ns}, Spec: batchv1.JobSpec{Template: template(queued.Profile)}}
		live, err := s.client.BatchV1().Jobs(ns).Create(t.Context(), j, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return nil, err
		}
		return live.Labels, nil
	}
	// The policies reach the API server's admission a moment after they
	// are made.
	deadline := time.Now().Add(30 * time.Second)
	for {
		labels, err := deployment(team)
		if err == nil && labels[label] == profile.Name {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: a Deployment naming profile %s by ODH's annotation got no profile label on its template in 30s: %v %v", team, profile.Name, labels, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if queued != nil {
		ns := queued.Namespaces[0]
		labels, err := job(ns)
		if err != nil || labels[render.QueueNameLabel] != queued.Labels[render.QueueNameLabel] {
			t.Errorf("%s: a Job of queued profile %s: labels %v (%v), want its queue %s", ns, queued.Profile, labels, err, queued.Labels[render.QueueNameLabel])
		}
	}
	for _, ns := range []string{ignored, excluded} {
		if ns == "" {
			continue
		}
		if labels, err := deployment(ns); err != nil || labels[label] != "" {
			t.Errorf("%s: a Deployment naming its profile by ODH's annotation, in a namespace accelc does not govern: template labels %v (%v), want them as written", ns, labels, err)
		}
	}
	if queued == nil {
		return
	}
	// A team namespace an admin has Gatekeeper ignore: its Jobs get no
	// queue either (the queue's parts name the team namespaces, so only
	// the binding can keep it out).
	ns := queued.Namespaces[0]
	s.ensureNamespaces(t, ns)
	setIgnore := func(value *string) {
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{render.GatekeeperIgnoreLabel: value}}})
		if _, err := s.client.CoreV1().Namespaces().Patch(t.Context(), ns, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	on := "true"
	setIgnore(&on)
	defer setIgnore(nil)
	deadline = time.Now().Add(30 * time.Second)
	for {
		labels, err := job(ns)
		if err == nil && labels[render.QueueNameLabel] == "" && labels[render.WorkloadPriorityLabel] == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%s, labelled %s: a Job of queued profile %s still gets Kueue's labels %v (%v) after 30s, want none", ns, render.GatekeeperIgnoreLabel, queued.Profile, labels, err)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
}
