package render

import (
	"fmt"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// podAdmissionOf renders m and returns its accelc-pod-admission policy
// and bindings (nil where none is rendered).
func podAdmissionOf(t *testing.T, m *compile.Model) (*admissionregistrationv1.ValidatingAdmissionPolicy, []*admissionregistrationv1.ValidatingAdmissionPolicyBinding, []Object) {
	t.Helper()
	objs, err := Render(m, &inventory.Inventory{})
	require.NoError(t, err)
	var policy *admissionregistrationv1.ValidatingAdmissionPolicy
	var bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	for _, o := range objs {
		switch b := o.Body.(type) {
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			if b.Name == PodAdmissionPolicyName {
				policy = b
			}
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			if b.Spec.PolicyName == PodAdmissionPolicyName {
				bindings = append(bindings, b)
			}
		}
	}
	return policy, bindings, objs
}

// fleetOf is a 1.36 cluster of teams, two namespaces each, entitled to
// ten of the built-in catalog's types, and profiles, one type each in
// turn.
func fleetOf(t *testing.T, teams, profiles int, enforcement string) *compile.Model {
	t.Helper()
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	ids := cat.IDs()
	m := &compile.Model{Cluster: compile.Cluster{Name: "c", LabelPrefix: "accelc.io", KubernetesVersion: "1.36", Enforcement: enforcement, ProfileNamespace: "opendatahub"}, Catalog: cat}
	for i := range profiles {
		c, _ := cat.Get(ids[i%len(ids)])
		most := 8
		m.Profiles = append(m.Profiles, compile.Profile{Name: fmt.Sprintf("p%03d", i), Enabled: true, AcceleratorTypes: []string{c.ID}, Classes: []*catalog.Class{c},
			ResourceName: c.ResourceName, GPU: compile.GPURange{Min: 1, Default: 1, Max: &most},
			Tolerations: []compile.Toleration{{Key: c.ResourceName, Operator: "Exists", Effect: "NoSchedule"}}})
	}
	for i := range teams {
		m.Teams = append(m.Teams, compile.Team{Name: fmt.Sprintf("t%03d", i), Namespaces: []string{fmt.Sprintf("t%03d-a", i), fmt.Sprintf("t%03d-b", i)}, AcceleratorTypes: ids[i%7 : i%7+10]})
	}
	return m
}

// TestPodAdmissionPolicyFitsCEL: a fleet's entitlements are cut into
// variables the API server takes, and the render refuses one it would
// not.
func TestPodAdmissionPolicyFitsCEL(t *testing.T) {
	m := fleetOf(t, 800, 150, compile.Deny)
	policy, bindings, objs := podAdmissionOf(t, m)
	require.NotNil(t, policy)
	assert.Len(t, bindings, 150, "one binding a profile")
	teams := 0
	for _, v := range policy.Spec.Variables {
		assert.LessOrEqual(t, len(v.Expression), CELExpressionLimit, v.Name)
		if strings.HasPrefix(v.Name, "teams") {
			teams++
		}
	}
	assert.Greater(t, teams, 1, "1,600 namespaces' entitlements are more than one variable holds")
	for _, c := range policy.Spec.MatchConditions {
		assert.NotEqual(t, PodRulesCondition, c.Name, "the entitlements written in whole outgrow one expression: the rules stay the validation")
	}
	assert.NotEqual(t, "false", policy.Spec.Validations[0].Expression)
	require.NoError(t, checkCELSizes(m, objs))
	policy.Spec.Validations[0].MessageExpression = strings.Repeat("x", CELExpressionLimit+1)
	assert.ErrorContains(t, checkCELSizes(m, objs), "cluster c: ValidatingAdmissionPolicy accelc-pod-admission: spec.validations[0].messageExpression is 100001 code points")
}

// TestPodAdmissionScope: the policy judges pods only where the policies
// deny — every namespace but those at another stage and the excluded
// ones, or, in a cluster that does not deny, the namespaces staged to —
// and is not rendered where none denies; Gatekeeper's values skip the
// pods it judges with the same condition.
func TestPodAdmissionScope(t *testing.T) {
	selector := func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) []metav1.LabelSelectorRequirement {
		return b.Spec.MatchResources.NamespaceSelector.MatchExpressions
	}
	ignore := metav1.LabelSelectorRequirement{Key: GatekeeperIgnoreLabel, Operator: metav1.LabelSelectorOpDoesNotExist}

	m := fleetOf(t, 3, 2, compile.Deny)
	m.Cluster.ExcludedNamespaces = []string{"kube-system", "openshift-*"}
	m.Teams[1].Enforcement = compile.Warn
	policy, bindings, _ := podAdmissionOf(t, m)
	require.NotNil(t, policy)
	for _, b := range bindings {
		assert.Equal(t, []metav1.LabelSelectorRequirement{ignore, {Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", "t001-a", "t001-b"}}}, selector(b), b.Name)
		assert.Equal(t, admissionregistrationv1.DenyAction, *b.Spec.ParamRef.ParameterNotFoundAction)
		assert.Equal(t, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}, b.Spec.ValidationActions)
	}
	require.Len(t, policy.Spec.MatchConditions, 3)
	assert.Equal(t, `!(request.namespace.startsWith("openshift-"))`, policy.Spec.MatchConditions[1].Expression)
	assert.Equal(t, PodRulesCondition, policy.Spec.MatchConditions[2].Name, "the rules, last: a pod they do not break is not matched")
	assert.Equal(t, "false", policy.Spec.Validations[0].Expression)
	values, err := GatekeeperInstallValues(m)
	require.NoError(t, err)
	last := values.ValidatingWebhookMatchConditions[len(values.ValidatingWebhookMatchConditions)-1]
	assert.Equal(t, "pods-judged-by-"+PodAdmissionPolicyName, last.Name)
	assert.Equal(t, "!("+policy.Spec.MatchConditions[0].Expression+")", last.Expression, "Gatekeeper skips exactly the pods the policy judges")

	m = fleetOf(t, 3, 2, compile.Warn)
	m.Teams[2].Enforcement = compile.Deny
	_, bindings, _ = podAdmissionOf(t, m)
	require.NotEmpty(t, bindings)
	assert.Equal(t, []metav1.LabelSelectorRequirement{ignore, {Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{"t002-a", "t002-b"}}}, selector(bindings[0]))

	m = fleetOf(t, 3, 2, compile.Warn)
	policy, _, _ = podAdmissionOf(t, m)
	assert.Nil(t, policy, "no namespace denies: nothing to judge")

	m = fleetOf(t, 3, 2, compile.Deny)
	m.Cluster.KubernetesVersion = "1.34"
	policy, _, _ = podAdmissionOf(t, m)
	assert.Nil(t, policy, "before 1.36 Gatekeeper judges every pod")
	values, err = GatekeeperInstallValues(m)
	require.NoError(t, err)
	for _, c := range values.ValidatingWebhookMatchConditions {
		assert.NotContains(t, c.Name, PodAdmissionPolicyName)
	}
}

// TestMutatingPolicyScope: every MutatingAdmissionPolicy is bound where
// accelc-pod-admission is (the namespaces that deny, less the excluded
// ones and those Gatekeeper's webhooks ignore), and an excluded glob
// keeps it away by a match condition, its first; accelc's webhook before
// 1.36 and the offline mutations skip the same namespaces.
func TestMutatingPolicyScope(t *testing.T) {
	m := fleetOf(t, 3, 2, compile.Deny)
	m.Cluster.ExcludedNamespaces = []string{"kube-system", "openshift-*"}
	m.Teams[1].Enforcement = compile.Warn
	_, vapBindings, objs := podAdmissionOf(t, m)
	require.NotEmpty(t, vapBindings)
	want := vapBindings[0].Spec.MatchResources.NamespaceSelector
	notExcluded := admissionregistrationv1.MatchCondition{Name: "not-excluded", Expression: `!(request.namespace.startsWith("openshift-"))`}
	policies, bindings := 0, 0
	for _, o := range objs {
		switch b := o.Body.(type) {
		case *admissionregistrationv1.MutatingAdmissionPolicy:
			policies++
			require.GreaterOrEqual(t, len(b.Spec.MatchConditions), 2, b.Name)
			assert.Equal(t, notExcluded, b.Spec.MatchConditions[0], b.Name)
		case *admissionregistrationv1.MutatingAdmissionPolicyBinding:
			bindings++
			require.NotNil(t, b.Spec.MatchResources, b.Name)
			assert.Equal(t, want, b.Spec.MatchResources.NamespaceSelector, b.Name)
		}
	}
	assert.Greater(t, policies, 1, "the pod policy and the workloads' label policies")
	assert.Equal(t, policies, bindings)

	a := AdmissionMutationsOf(m)
	assert.Equal(t, want, a.NamespaceSelector)
	for ns, applies := range map[string]bool{"t000-a": true, "t002-b": true, "t001-a": false, "kube-system": false, "openshift-monitoring": false} {
		assert.Equal(t, applies, a.AppliesTo(ns), ns)
	}
	hook := ProfileWebhookConfiguration(m, &a, admissionregistrationv1.WebhookClientConfig{})
	require.NotEmpty(t, hook.Webhooks)
	for _, w := range hook.Webhooks {
		assert.Equal(t, want, w.NamespaceSelector, w.Name)
		assert.Equal(t, notExcluded, w.MatchConditions[0], w.Name)
	}
}
