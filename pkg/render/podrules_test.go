package render_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	celgo "github.com/google/cel-go/cel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/policytest/engine"
	"github.com/accelc/accelc/pkg/render"
)

// celExpr is a CEL expression as the admission plugin's compiler takes it.
type celExpr struct{ name, expression string }

func (e celExpr) GetExpression() string      { return e.expression }
func (e celExpr) ReturnTypes() []*celgo.Type { return []*celgo.Type{celgo.AnyType} }
func (e celExpr) GetName() string            { return e.name }

// TestPodRulesCondition: accelc-pod-admission's rules written as a match
// condition (render.PodRulesCondition, the variables bound or written
// in) compile where the API server compiles a match condition, without
// the policy's variables, and hold exactly where the same rules over the
// variables fail. The second form is the policy's message expression,
// one message a rule that fails, so empty where none does. For every
// example, on the escape check's generated pods as accelc's mutations
// leave them, each judged against its profile as rendered and as the
// dashboard can change it (disabled, retired with and without a
// replacement, its types and counts edited).
func TestPodRulesCondition(t *testing.T) {
	env := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	opts := plugincel.OptionalVariableDeclarations{HasParams: true, HasAuthorizer: true}
	for _, name := range exampleClusters(t) {
		t.Run(name, func(t *testing.T) {
			res, err := accelc.Cluster(context.Background(), filepath.Join(examplesDir, name), accelc.Options{Stages: accelc.Rendered})
			require.NoError(t, err)
			var policy admissionregistrationv1.ValidatingAdmissionPolicy
			require.NoError(t, yaml.Unmarshal(res.Tree["policies/validatingadmissionpolicy-"+render.PodAdmissionPolicyName+".yaml"], &policy))
			var judged, rules string
			for _, c := range policy.Spec.MatchConditions {
				switch c.Name {
				case render.PodRulesCondition:
					rules = c.Expression
				case render.PodJudgedCondition:
					judged = c.Expression
				}
			}
			require.NotEmpty(t, judged)
			require.NotEmpty(t, rules, "the rules are a match condition")
			assert.Equal(t, "false", policy.Spec.Validations[0].Expression, "a pod that matches breaks a rule")
			stateless := plugincel.NewCompiler(env).CompileCELExpression(celExpr{expression: rules}, opts, environment.NewExpressions)
			require.Nil(t, stateless.Error, "the API server compiles a match condition without the policy's variables")

			conditions := compileOverVariables(t, &policy, judged, rules)
			message := compileOverVariables(t, &policy, policy.Spec.Validations[0].MessageExpression)

			profiles := map[string][]*unstructured.Unstructured{}
			for _, p := range res.Tree.Paths() {
				if strings.HasPrefix(p, "profiles/hardwareprofile-") {
					var u unstructured.Unstructured
					require.NoError(t, yaml.Unmarshal(res.Tree[p], &u.Object))
					profiles[u.GetName()] = profileEdits(&u, res.Model.Cluster.LabelPrefix+"/")
				}
			}
			check, err := engine.NewEscapeCheck(context.Background(), res.Model, res.Inventory, res.Tree)
			require.NoError(t, err)
			requests := check.GeneratedPods(1, 400)
			var namespaces []string
			for _, r := range requests {
				namespaces = append(namespaces, r.Object.GetNamespace())
			}
			mutator, err := engine.NewMutator(res.Tree, namespaces)
			require.NoError(t, err)
			evaluated, breaking, passing := 0, 0, 0
			for _, r := range requests {
				pod, err := mutator.MutateObject(r.Object)
				require.NoError(t, err)
				mutator.KueueWebhooks(pod)
				setPriority(pod, res.Model.Cluster.PriorityClasses)
				params := profiles[pod.GetLabels()[res.Model.Cluster.LabelPrefix+"/profile"]]
				for _, param := range params {
					match, msg, ok := judge(t, conditions, message, pod, r.User, param)
					if !ok {
						continue
					}
					evaluated++
					if match {
						breaking++
					} else if param == params[0] {
						passing++
					}
					require.Equal(t, msg != "", match, "%s/%s under profile %s as %v: the condition says it breaks a rule: %v; the message: %q",
						pod.GetNamespace(), pod.GetName(), param.GetName(), param.GetAnnotations(), match, msg)
				}
			}
			t.Logf("%d pods under their profiles judged, %d breaking a rule; %d admitted under their profile as rendered", evaluated, breaking, passing)
			assert.Positive(t, breaking)
			assert.Positive(t, passing)
		})
	}
}

// setPriority gives a pod the spec.priority the Priority admission
// plugin resolves before any policy sees it: its class's value, else the
// global default's, else 0.
func setPriority(pod *unstructured.Unstructured, classes map[string]compile.PriorityClass) {
	if _, set, _ := unstructured.NestedInt64(pod.Object, "spec", "priority"); set {
		return
	}
	name, _, _ := unstructured.NestedString(pod.Object, "spec", "priorityClassName")
	value := 0
	if c, ok := classes[name]; ok {
		value = c.Value
	} else {
		for _, c := range classes {
			if c.GlobalDefault {
				value = c.Value
			}
		}
	}
	_ = unstructured.SetNestedField(pod.Object, int64(value), "spec", "priority")
}

// profileEdits are a HardwareProfile as rendered and as the dashboard
// can change it live.
func profileEdits(p *unstructured.Unstructured, prefix string) []*unstructured.Unstructured {
	out := []*unstructured.Unstructured{p}
	edit := func(f func(a map[string]string, spec map[string]any)) {
		c := p.DeepCopy()
		a := c.GetAnnotations()
		if a == nil {
			a = map[string]string{}
		}
		spec, _, _ := unstructured.NestedMap(c.Object, "spec")
		f(a, spec)
		c.SetAnnotations(a)
		_ = unstructured.SetNestedMap(c.Object, spec, "spec")
		out = append(out, c)
	}
	edit(func(a map[string]string, _ map[string]any) { a["opendatahub.io/disabled"] = "true" })
	edit(func(a map[string]string, _ map[string]any) { a[prefix+render.AnnotationRetired] = "" })
	edit(func(a map[string]string, _ map[string]any) { a[prefix+render.AnnotationRetired] = "other" })
	edit(func(a map[string]string, _ map[string]any) { a[prefix+render.AnnotationTypes] = "nvidia-h200-141gb" })
	edit(func(_ map[string]string, spec map[string]any) {
		ids, _, _ := unstructured.NestedSlice(spec, "identifiers")
		for _, id := range ids {
			if id, ok := id.(map[string]any); ok && id["resourceType"] == "Accelerator" {
				id["minCount"] = int64(2)
				id["maxCount"] = "4"
			}
		}
		_ = unstructured.SetNestedSlice(spec, ids, "identifiers")
	})
	return out
}

// compileOverVariables compiles expressions as the API server compiles a
// policy's: over its variables, its parameter and the authorizer declared.
func compileOverVariables(t *testing.T, policy *admissionregistrationv1.ValidatingAdmissionPolicy, exprs ...string) plugincel.ConditionEvaluator {
	t.Helper()
	opts := plugincel.OptionalVariableDeclarations{HasParams: true, HasAuthorizer: true}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	require.NoError(t, err)
	var vars []plugincel.NamedExpressionAccessor
	for _, v := range policy.Spec.Variables {
		vars = append(vars, celExpr{v.Name, v.Expression})
	}
	compiler.CompileAndStoreVariables(vars, opts, environment.StoredExpressions)
	var accessors []plugincel.ExpressionAccessor
	for _, e := range exprs {
		accessors = append(accessors, celExpr{expression: e})
	}
	return compiler.CompileCondition(accessors, opts, environment.StoredExpressions)
}

// judge evaluates the policy's match conditions on a pod's creation by
// user under the profile param, as the API server does: whether the pod
// breaks a rule, and the policy's message; ok is false where the pod is
// not judged there (Gatekeeper is sent it).
func judge(t *testing.T, conditions, message plugincel.ConditionEvaluator, pod *unstructured.Unstructured, username string, param *unstructured.Unstructured) (match bool, msg string, ok bool) {
	t.Helper()
	results, _, err := evaluatePodCreate(conditions, pod, username, param, int64(celconfig.RuntimeCELCostBudgetMatchConditions))
	require.NoError(t, err)
	require.NoError(t, results[0].Error, "%s/%s: whether the policy judges it", pod.GetNamespace(), pod.GetName())
	if results[0].EvalResult.Value() != true {
		return false, "", false
	}
	require.NoError(t, results[1].Error, "%s/%s: the rules", pod.GetNamespace(), pod.GetName())
	messages, _, err := evaluatePodCreate(message, pod, username, param, int64(celconfig.RuntimeCELCostBudget))
	require.NoError(t, err)
	require.NoError(t, messages[0].Error, "%s/%s: the message", pod.GetNamespace(), pod.GetName())
	return results[1].EvalResult.Value() == true, messages[0].EvalResult.Value().(string), true
}

// evaluatePodCreate runs compiled expressions on a pod's creation by user ("" an
// ordinary one) under the profile param within budget, as the API server
// does: the results, the budget left.
func evaluatePodCreate(e plugincel.ConditionEvaluator, pod *unstructured.Unstructured, username string, param *unstructured.Unstructured, budget int64) ([]plugincel.EvaluationResult, int64, error) {
	if username == "" {
		username = "alice"
	}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	attr := admission.NewAttributesRecord(pod, nil, gvk, pod.GetNamespace(), pod.GetName(), gvr, "", admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: username})
	versioned := &admission.VersionedAttributes{Attributes: attr, VersionedObject: pod, VersionedKind: gvk}
	request := plugincel.CreateAdmissionRequest(attr, metav1.GroupVersionResource(gvr), metav1.GroupVersionKind(gvk))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: pod.GetNamespace()}}
	return e.ForInput(context.Background(), versioned, request, plugincel.OptionalVariableBindings{VersionedParams: param}, ns, budget)
}

// TestPodRulesConditionCost: the rules, bound up front as a match
// condition, stay within the API server's limits on a large pod a team
// could write (100 containers of six extended resources each, 100
// tolerations under hetero-prod's premium-gpu: under a fifth of the
// per-expression limit), and a pod ten times that is refused, the rules
// stopped at the limit, not admitted.
func TestPodRulesConditionCost(t *testing.T) {
	res, err := accelc.Cluster(context.Background(), filepath.Join(examplesDir, "hetero-prod"), accelc.Options{Stages: accelc.Rendered})
	require.NoError(t, err)
	var policy admissionregistrationv1.ValidatingAdmissionPolicy
	require.NoError(t, yaml.Unmarshal(res.Tree["policies/validatingadmissionpolicy-"+render.PodAdmissionPolicyName+".yaml"], &policy))
	var param unstructured.Unstructured
	require.NoError(t, yaml.Unmarshal(res.Tree["profiles/hardwareprofile-premium-gpu.yaml"], &param.Object))
	var exprs []string
	for _, c := range policy.Spec.MatchConditions {
		exprs = append(exprs, c.Expression)
	}
	conditions := compileOverVariables(t, &policy, exprs...)
	prefix := res.Model.Cluster.LabelPrefix + "/"
	large := func(n int) *unstructured.Unstructured {
		var tolerations, containers []any
		for i := range n {
			tolerations = append(tolerations, map[string]any{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"})
			limits := map[string]any{"cpu": "1"}
			for j := range 5 {
				limits[fmt.Sprintf("example.com/r%d", j)] = "1"
			}
			if i == 0 {
				limits["nvidia.com/gpu"] = "1"
			}
			containers = append(containers, map[string]any{"name": fmt.Sprintf("c%d", i), "image": "registry.example/x:1", "resources": map[string]any{"limits": limits}})
		}
		tolerations = append(tolerations, map[string]any{"key": prefix + "pool", "operator": "Equal", "value": "premium", "effect": "NoSchedule"})
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "large", "namespace": "ml-research",
				"labels":      map[string]any{prefix + "profile": "premium-gpu", "kueue.x-k8s.io/queue-name": "premium-gpu", "kueue.x-k8s.io/priority-class": "training"},
				"annotations": map[string]any{prefix + "team": "ml-research", prefix + "type": "nvidia-h200-141gb", prefix + "types": "nvidia-h200-141gb"}},
			"spec": map[string]any{"priority": int64(0), "schedulingGates": []any{map[string]any{"name": "kueue.x-k8s.io/admission"}},
				"nodeSelector": map[string]any{prefix + "type": "nvidia-h200-141gb"}, "tolerations": tolerations, "containers": containers}}}
	}
	budget := int64(celconfig.RuntimeCELCostBudgetMatchConditions)
	results, left, err := evaluatePodCreate(conditions, large(100), "", &param, budget)
	require.NoError(t, err)
	for _, r := range results {
		require.NoError(t, r.Error)
	}
	assert.Equal(t, false, results[len(results)-1].EvalResult.Value(), "the large pod breaks no rule")
	assert.Less(t, budget-left, int64(celconfig.PerCallLimit/5), "the conditions' cost on the large pod")
	t.Logf("100 containers, 100 tolerations: %d cost units", budget-left)
	results, _, err = evaluatePodCreate(conditions, large(1000), "", &param, budget)
	if err == nil {
		err = results[len(results)-1].Error
	}
	require.Error(t, err, "ten times larger: the rules stop at the limit, and the policy, failing closed, refuses the pod")
}
