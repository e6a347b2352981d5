package render_test

import (
	"context"
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
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/accelc"
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
				case "judged-here-not-by-gatekeeper":
					judged = c.Expression
				}
			}
			require.NotEmpty(t, judged)
			require.NotEmpty(t, rules, "the rules are a match condition")
			assert.Equal(t, "false", policy.Spec.Validations[0].Expression, "a pod that matches breaks a rule")
			stateless := plugincel.NewCompiler(env).CompileCELExpression(celExpr{expression: rules}, opts, environment.NewExpressions)
			require.Nil(t, stateless.Error, "the API server compiles a match condition without the policy's variables")

			compiler, err := plugincel.NewCompositedCompiler(env)
			require.NoError(t, err)
			var vars []plugincel.NamedExpressionAccessor
			for _, v := range policy.Spec.Variables {
				vars = append(vars, celExpr{v.Name, v.Expression})
			}
			compiler.CompileAndStoreVariables(vars, opts, environment.StoredExpressions)
			conditions := compiler.CompileCondition([]plugincel.ExpressionAccessor{celExpr{expression: judged}, celExpr{expression: rules}}, opts, environment.StoredExpressions)
			message := compiler.CompileCondition([]plugincel.ExpressionAccessor{celExpr{expression: policy.Spec.Validations[0].MessageExpression}}, opts, environment.StoredExpressions)

			profiles := map[string][]*unstructured.Unstructured{}
			priorities, globalDefault := map[string]int64{}, int64(0)
			for _, p := range res.Tree.Paths() {
				var u unstructured.Unstructured
				switch {
				case strings.HasPrefix(p, "profiles/hardwareprofile-"):
					require.NoError(t, yaml.Unmarshal(res.Tree[p], &u.Object))
					profiles[u.GetName()] = profileEdits(&u, res.Model.Cluster.LabelPrefix+"/")
				case strings.HasPrefix(p, "priorities/priorityclass-"):
					require.NoError(t, yaml.Unmarshal(res.Tree[p], &u.Object))
					value, _, _ := unstructured.NestedInt64(u.Object, "value")
					priorities[u.GetName()] = value
					if d, _, _ := unstructured.NestedBool(u.Object, "globalDefault"); d {
						globalDefault = value
					}
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
			kueued := map[string]bool{}
			for _, ns := range render.KueueNamespaces(res.Model) {
				kueued[ns] = true
			}
			evaluated, breaking, passing := 0, 0, 0
			for _, r := range requests {
				pod, err := mutator.MutateObject(r.Object)
				require.NoError(t, err)
				// Kueue's pod webhook, as the escape check's engine has it: a
				// new pod with a LocalQueue label in a namespace Kueue
				// manages, whose controller is not a Job, is gated.
				if kueued[pod.GetNamespace()] && pod.GetLabels()["kueue.x-k8s.io/queue-name"] != "" && !ownedByJob(pod) {
					gates, _, _ := unstructured.NestedSlice(pod.Object, "spec", "schedulingGates")
					_ = unstructured.SetNestedSlice(pod.Object, append(gates, map[string]any{"name": "kueue.x-k8s.io/admission"}), "spec", "schedulingGates")
				}
				// The Priority admission plugin's value, before any policy.
				if _, set, _ := unstructured.NestedInt64(pod.Object, "spec", "priority"); !set {
					class, _, _ := unstructured.NestedString(pod.Object, "spec", "priorityClassName")
					value, ok := priorities[class]
					if !ok {
						value = globalDefault
					}
					_ = unstructured.SetNestedField(pod.Object, value, "spec", "priority")
				}
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

// ownedByJob says a pod's controller is a batch Job.
func ownedByJob(pod *unstructured.Unstructured) bool {
	for _, o := range pod.GetOwnerReferences() {
		if o.Controller != nil && *o.Controller && strings.HasPrefix(o.APIVersion, "batch/") && o.Kind == "Job" {
			return true
		}
	}
	return false
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

// judge evaluates the policy's match conditions on a pod's creation by
// user under the profile param, as the API server does: whether the pod
// breaks a rule, and the policy's message; ok is false where the pod is
// not judged there (Gatekeeper is sent it).
func judge(t *testing.T, conditions, message plugincel.ConditionEvaluator, pod *unstructured.Unstructured, username string, param *unstructured.Unstructured) (match bool, msg string, ok bool) {
	t.Helper()
	if username == "" {
		username = "alice"
	}
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	attr := admission.NewAttributesRecord(pod, nil, gvk, pod.GetNamespace(), pod.GetName(), gvr, "", admission.Create, &metav1.CreateOptions{}, false, &user.DefaultInfo{Name: username})
	versioned := &admission.VersionedAttributes{Attributes: attr, VersionedObject: pod, VersionedKind: gvk}
	request := plugincel.CreateAdmissionRequest(attr, metav1.GroupVersionResource(gvr), metav1.GroupVersionKind(gvk))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: pod.GetNamespace()}}
	bindings := plugincel.OptionalVariableBindings{VersionedParams: param}
	results, _, err := conditions.ForInput(context.Background(), versioned, request, bindings, ns, 1<<30)
	require.NoError(t, err)
	if results[0].Error != nil || results[0].EvalResult.Value() != true {
		return false, "", false
	}
	require.NoError(t, results[1].Error, "%s/%s: the rules", pod.GetNamespace(), pod.GetName())
	messages, _, err := message.ForInput(context.Background(), versioned, request, bindings, ns, 1<<30)
	require.NoError(t, err)
	require.NoError(t, messages[0].Error, "%s/%s: the message", pod.GetNamespace(), pod.GetName())
	return results[1].EvalResult.Value() == true, messages[0].EvalResult.Value().(string), true
}
