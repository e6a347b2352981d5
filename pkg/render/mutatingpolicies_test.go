package render_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"
)

// The API server converts the object and encodes, patches and decodes
// it again for each mutation of a MutatingAdmissionPolicy, an empty
// patch included: every policy accelc renders for the examples is one
// mutation, and holds back by a match condition the objects it would
// not change; each compiles as the API server compiles a new policy.
func TestMutatingPoliciesOneMutationEach(t *testing.T) {
	for _, name := range exampleClusters(t) {
		tree := renderExample(t, name)
		seen := 0
		for _, p := range tree.Paths() {
			if !strings.HasPrefix(p, "mutations/mutatingadmissionpolicy-") {
				continue
			}
			var mp admissionregistrationv1.MutatingAdmissionPolicy
			require.NoError(t, yaml.UnmarshalStrict(tree[p], &mp), p)
			seen++
			assert.Len(t, mp.Spec.Mutations, 1, "%s: %s", name, p)
			assert.NotEmpty(t, mp.Spec.MatchConditions, "%s: %s", name, p)
			for _, err := range compileMutatingPolicy(&mp) {
				t.Errorf("%s: %s: %v", name, p, err)
			}
		}
		assert.NotZero(t, seen, name)
	}
}

// compileMutatingPolicy compiles a policy's variables, match conditions
// and JSON patches as the API server compiles a new policy's
// (k8s.io/apiserver's mutating compilePolicy, with the environment of
// expressions being written), and returns what did not compile.
func compileMutatingPolicy(mp *admissionregistrationv1.MutatingAdmissionPolicy) []error {
	mode := environment.NewExpressions
	opts := plugincel.OptionalVariableDeclarations{HasParams: mp.Spec.ParamKind != nil, HasAuthorizer: true}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, v := range mp.Spec.Variables {
		if r := compiler.CompileAndStoreVariable(&validating.Variable{Name: v.Name, Expression: v.Expression}, opts, mode); r.Error != nil {
			errs = append(errs, r.Error)
		}
	}
	var conditions []plugincel.ExpressionAccessor
	for i := range mp.Spec.MatchConditions {
		conditions = append(conditions, (*matchconditions.MatchCondition)(&mp.Spec.MatchConditions[i]))
	}
	errs = append(errs, compiler.CompileCondition(conditions, opts, mode).CompilationErrors()...)
	opts.HasPatchTypes = true
	for _, mu := range mp.Spec.Mutations {
		if mu.JSONPatch != nil {
			errs = append(errs, compiler.CompileMutatingEvaluator(&patch.JSONPatchCondition{Expression: mu.JSONPatch.Expression}, opts, mode).CompilationErrors()...)
		}
	}
	return errs
}

// The topology policies are a chain of every profile with a topology:
// with two such profiles each policy is still one mutation, behind its
// match condition, and compiles as the API server compiles it.
func TestTopologyPoliciesCompile(t *testing.T) {
	tree := renderSharing(t, strings.Replace(sharingSrc,
		`serve: {displayName: "Serve", acceleratorTypes: ["nvidia-a100-80gb"]}`,
		`serve: {displayName: "Serve", acceleratorTypes: ["nvidia-a100-80gb"]}
	block: {displayName: "Block", acceleratorTypes: ["nvidia-h200-141gb"], topology: preferred: "block"}`, 1))
	for _, name := range []string{"accelc-job-topology", "accelc-pod-topology"} {
		var mp admissionregistrationv1.MutatingAdmissionPolicy
		require.NoError(t, yaml.UnmarshalStrict(tree["mutations/mutatingadmissionpolicy-"+name+".yaml"], &mp), name)
		require.Len(t, mp.Spec.Mutations, 1, name)
		expr := mp.Spec.Mutations[0].JSONPatch.Expression
		assert.Contains(t, expr, "kueue.x-k8s.io/podset-required-topology", name)
		assert.Contains(t, expr, "kueue.x-k8s.io/podset-preferred-topology", name)
		assert.True(t, strings.HasSuffix(expr, " : []"), "%s: a chain ends with no patch: %s", name, expr)
		require.Len(t, mp.Spec.MatchConditions, 1, name)
		assert.Empty(t, compileMutatingPolicy(&mp), name)
	}
}
