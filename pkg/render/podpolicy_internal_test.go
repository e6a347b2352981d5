package render

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// podMutator is a Gatekeeper mutator of pods in namespaces ns selecting
// the profile label's value profile ("" for no selector).
func podMutator(kind, name, location, profile string, ns []string, params mutatorParameters) Object {
	mt := match{Scope: "Namespaced", Kinds: []matchKinds{{APIGroups: []string{""}, Kinds: []string{"Pod"}}}, Namespaces: ns}
	if profile != "" {
		mt.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"accelc.io/profile": profile}}
	}
	return Object{Dir: "mutations", Body: &mutator{
		TypeMeta:   metav1.TypeMeta{APIVersion: "mutations.gatekeeper.sh/v1", Kind: kind},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       mutatorSpec{Match: mt, Location: location, Parameters: params},
	}}
}

// TestPodProfilePolicyRefusesWhatItCannotTranslate: a pod mutator of a
// shape the translation does not know stops the render with its name,
// rather than being left out of the policy (a pod mutated less on 1.36
// than Gatekeeper would).
func TestPodProfilePolicyRefusesWhatItCannotTranslate(t *testing.T) {
	m := &compile.Model{Cluster: compile.Cluster{Name: "c", LabelPrefix: "accelc.io"}}
	assign := mutatorParameters{Assign: &assignField{Value: "x"}}
	for _, c := range []struct {
		mu   Object
		want string
	}{
		{podMutator("Assign", "node-selector", `spec.nodeSelector."t"`, "p", nil, assign), "a location it has no operation for"},
		{podMutator("AssignMetadata", "finalizer", "metadata.finalizers", "p", nil, assign), "outside metadata.labels and metadata.annotations"},
		{podMutator("AssignImage", "image", "spec.containers[name: *].image", "p", nil, assign), "a kind other than"},
		{podMutator("ModifySet", "gates", "spec.schedulingGates", "p", nil, mutatorParameters{Operation: "merge", Values: &modifySetValues{}}), "anything but merging tolerations"},
		{podMutator("Assign", "affinity", requiredAffinityAt, "p", nil, mutatorParameters{Assign: &assignField{Value: "x"}, PathTests: []pathTest{{SubPath: requiredAffinityAt, Condition: "MustExist"}}}), "a path test other than MustNotExist"},
	} {
		name := c.mu.Body.(*mutator).Name
		assert.PanicsWithValue(t, panicMessage(t, c.mu), func() { podProfilePolicy(m, []Object{c.mu}) }, name)
		assert.Contains(t, panicMessage(t, c.mu), c.want, name)
		assert.Contains(t, panicMessage(t, c.mu), name, name)
	}
	// A mutator of another kind than Pod is not the policy's.
	job := podMutator("Assign", "job", `spec.nodeSelector."t"`, "p", nil, assign)
	job.Body.(*mutator).Spec.Match.Kinds = []matchKinds{{APIGroups: []string{"batch"}, Kinds: []string{"Job"}}}
	assert.Nil(t, podProfilePolicy(m, []Object{job}))
}

func panicMessage(t *testing.T, mu Object) (msg string) {
	t.Helper()
	defer func() { msg, _ = recover().(string) }()
	podProfilePolicy(&compile.Model{Cluster: compile.Cluster{Name: "c", LabelPrefix: "accelc.io"}}, []Object{mu})
	return ""
}

// TestPodProfilePolicyFirstWins: two mutators that may both write one
// label for a pod keep Gatekeeper's order, the first's value; two that
// select apart (other profiles, other namespaces) are not held back.
func TestPodProfilePolicyFirstWins(t *testing.T) {
	m := &compile.Model{Cluster: compile.Cluster{Name: "c", LabelPrefix: "accelc.io"}}
	label := func(name, profile string, ns []string, value string) Object {
		return podMutator("AssignMetadata", name, `metadata.labels."q"`, profile, ns, mutatorParameters{Assign: &assignField{Value: value}})
	}
	expr := func(objs ...Object) string { return mustExpression(t, podProfilePolicy(m, objs)) }
	overlapping := expr(label("a", "p", nil, "first"), label("b", "", []string{"team"}, "second"))
	assert.Contains(t, overlapping, `!(variables.profile == "p" && !(has(object.metadata.labels) && "q" in object.metadata.labels))`, "the second held back where the first writes")
	apart := expr(label("a", "p", nil, "first"), label("b", "r", nil, "second"))
	assert.NotContains(t, apart, "&& !(variables.profile", "other profiles select apart")
	teams := expr(label("a", "", []string{"x"}, "first"), label("b", "", []string{"y"}, "second"))
	assert.Equal(t, 0, strings.Count(teams, "&& !(variables.namespaces0 &&"), "other namespaces select apart")
}

// mustExpression is the JSON patch of the policy, then each variable as
// "name = expression", a line each.
func mustExpression(t *testing.T, objs []Object) string {
	t.Helper()
	for _, o := range objs {
		if mp, ok := o.Body.(*admissionregistrationv1.MutatingAdmissionPolicy); ok && mp.Name == PodProfilePolicyName {
			return policyCEL(mp)
		}
	}
	t.Fatal("no " + PodProfilePolicyName)
	return ""
}

func policyCEL(mp *admissionregistrationv1.MutatingAdmissionPolicy) string {
	out := []string{mp.Spec.Mutations[0].JSONPatch.Expression}
	for _, v := range mp.Spec.Variables {
		out = append(out, v.Name+" = "+v.Expression)
	}
	return strings.Join(out, "\n")
}

// variable is the policy's variable name's expression.
func variable(t *testing.T, mp *admissionregistrationv1.MutatingAdmissionPolicy, name string) string {
	t.Helper()
	for _, v := range mp.Spec.Variables {
		if v.Name == name {
			return v.Expression
		}
	}
	t.Fatalf("%s has no variable %s", mp.Name, name)
	return ""
}

// TestPodProfileLabelOnePolicy: on 1.36 a pod gets its profile label from
// ODH's annotation from accelc-pod-profile where pod mutators render it,
// and from accelc-profile-label only where none does; never from both.
func TestPodProfileLabelOnePolicy(t *testing.T) {
	names := func(objs []Object) []string {
		var out []string
		for _, o := range objs {
			if p, ok := o.Body.(*admissionregistrationv1.MutatingAdmissionPolicy); ok {
				out = append(out, p.Name)
			}
		}
		return out
	}
	cluster := compile.Cluster{Name: "c", LabelPrefix: "accelc.io", Enforcement: compile.Deny}
	// A team: its annotation is a pod mutator.
	withTeam := mutationObjects(&compile.Model{Cluster: cluster, Teams: []compile.Team{{Name: "t", Namespaces: []string{"ns"}, Enforcement: compile.Deny}}})
	assert.Contains(t, names(withTeam), PodProfilePolicyName)
	assert.NotContains(t, names(withTeam), ProfileLabelPolicyName)
	var pod *admissionregistrationv1.MutatingAdmissionPolicy
	for _, o := range withTeam {
		if p, ok := o.Body.(*admissionregistrationv1.MutatingAdmissionPolicy); ok && p.Name == PodProfilePolicyName {
			pod = p
		}
	}
	// The label from the annotation is the first of the label
	// operations, and the labels map is made for a pod that has none
	// where a label operation applies.
	ops := variable(t, pod, "labelOps0")
	assert.True(t, strings.HasPrefix(ops, `((!(has(object.metadata.labels) && "accelc.io/profile" in object.metadata.labels) && has(object.metadata.annotations) && "opendatahub.io/hardware-profile-name" in object.metadata.annotations) ? [{"op": dyn("add"), "path": dyn("/metadata/labels/accelc.io~1profile"), "value": dyn(object.metadata.annotations["opendatahub.io/hardware-profile-name"])}] : [])`), ops)
	expr := pod.Spec.Mutations[0].JSONPatch.Expression
	assert.True(t, strings.HasPrefix(expr, `((!has(object.metadata.labels)) && size(variables.labelOps0) > 0 ? [JSONPatch{op: "add", path: "/metadata/labels", value: {}}] : [])`), expr)

	// Nothing mutates pods: the small policy labels them.
	bare := mutationObjects(&compile.Model{Cluster: cluster})
	assert.Contains(t, names(bare), ProfileLabelPolicyName)
	assert.NotContains(t, names(bare), PodProfilePolicyName)
}

// TestPodProfilePolicyFitsCEL: for a cluster of many teams and profiles
// every expression of the pod policy stays within what the API server
// takes (the e2e TestPodProfilePolicy applies such a fleet's policy), and
// a policy that would not is refused at render with its name.
func TestPodProfilePolicyFitsCEL(t *testing.T) {
	m := &compile.Model{Cluster: compile.Cluster{Name: "c", LabelPrefix: "accelc.io", KubernetesVersion: "1.36", Enforcement: compile.Deny}}
	for i := range 150 {
		m.Profiles = append(m.Profiles, compile.Profile{Name: fmt.Sprintf("p%03d", i), Enabled: true, AcceleratorTypes: []string{fmt.Sprintf("type-%03d", i)},
			Tolerations: []compile.Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}}})
	}
	for i := range 800 {
		m.Teams = append(m.Teams, compile.Team{Name: fmt.Sprintf("t%03d", i), Namespaces: []string{fmt.Sprintf("t%03d-a", i), fmt.Sprintf("t%03d-b", i)}, Enforcement: compile.Deny})
	}
	objs := mutationObjects(m)
	var pod *admissionregistrationv1.MutatingAdmissionPolicy
	for _, o := range objs {
		if p, ok := o.Body.(*admissionregistrationv1.MutatingAdmissionPolicy); ok && p.Name == PodProfilePolicyName {
			pod = p
		}
	}
	if pod == nil {
		t.Fatal("no " + PodProfilePolicyName)
	}
	all := len(policyCEL(pod))
	assert.Greater(t, all, CELExpressionLimit, "the fleet's operations, together, are more than one expression takes")
	assert.NoError(t, checkCELSizes(m, objs))
	for _, v := range pod.Spec.Variables {
		assert.LessOrEqual(t, len(v.Expression), CELExpressionLimit, v.Name)
	}
	assert.LessOrEqual(t, len(pod.Spec.Mutations[0].JSONPatch.Expression), CELExpressionLimit)

	pod.Spec.Variables[0].Expression = strings.Repeat("x", CELExpressionLimit+1)
	err := checkCELSizes(m, objs)
	assert.ErrorContains(t, err, "cluster c: MutatingAdmissionPolicy accelc-pod-profile: spec.variables[0] (profile) is 100001 code points")
	assert.ErrorContains(t, err, "800 teams, 1600 namespaces and 150 profiles")
}

// TestOnlyPods: the mutating webhook is kept from pods by a selector no
// object meets only where pods are all its rules match; a rule of any
// other resource or group keeps the match condition, which skips pods
// alone.
func TestOnlyPods(t *testing.T) {
	rule := func(group string, resources ...string) admissionregistrationv1.RuleWithOperations {
		return admissionregistrationv1.RuleWithOperations{Rule: admissionregistrationv1.Rule{APIGroups: []string{group}, Resources: resources}}
	}
	assert.True(t, onlyPods([]admissionregistrationv1.RuleWithOperations{rule("", "pods")}))
	assert.False(t, onlyPods([]admissionregistrationv1.RuleWithOperations{rule("", "pods", "configmaps")}))
	assert.False(t, onlyPods([]admissionregistrationv1.RuleWithOperations{rule("", "pods"), rule("batch", "jobs")}))
	assert.False(t, onlyPods([]admissionregistrationv1.RuleWithOperations{rule("apps", "pods")}), "another group's pods")
}
