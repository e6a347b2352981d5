package render_test

import (
	"slices"
	"testing"

	"github.com/google/cel-go/cel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/policies"
)

// treeValues reads the Gatekeeper Helm values of a rendered tree.
func treeValues(t *testing.T, tree render.Tree) render.GatekeeperHelmValues {
	t.Helper()
	var cm corev1.ConfigMap
	require.NoError(t, yaml.Unmarshal(tree["mutations/configmap-"+render.GatekeeperValuesName+".yaml"], &cm))
	var v render.GatekeeperHelmValues
	require.NoError(t, yaml.UnmarshalStrict([]byte(cm.Data["values.yaml"]), &v))
	return v
}

// ruleCovers reports whether a rule of rules sends the operation on the
// resource of the group.
func ruleCovers(rules []admissionregistrationv1.RuleWithOperations, op admissionregistrationv1.OperationType, group, res string) bool {
	return slices.ContainsFunc(rules, func(r admissionregistrationv1.RuleWithOperations) bool {
		return slices.Contains(r.Operations, op) && slices.Contains(r.APIGroups, group) &&
			(slices.Contains(r.Resources, res) || slices.Contains(r.Resources, "*"))
	})
}

// TestGatekeeperValuesCoverConstraints: in every example, Gatekeeper's
// validating webhook receives CREATE and UPDATE of every kind the
// admission constraint matches, and pods' ephemeral containers; its
// mutating webhook receives CREATE of every kind a rendered mutator
// matches; neither receives any other kind but Gatekeeper's own; the audit
// runs every minute over the constraints' kinds.
func TestGatekeeperValuesCoverConstraints(t *testing.T) {
	resources := map[[2]string]string{{"", "Pod"}: "pods", {"resource.k8s.io", "ResourceClaim"}: "resourceclaims", {"resource.k8s.io", "ResourceClaimTemplate"}: "resourceclaimtemplates"}
	for _, w := range render.WorkloadKinds {
		resources[[2]string{w.Group, w.Kind}] = w.Resource
	}
	for _, name := range exampleClusters(t) {
		t.Run(name, func(t *testing.T) {
			tree := renderExample(t, name)
			v := treeValues(t, tree)
			assert.Equal(t, 60, v.AuditInterval)
			assert.True(t, v.AuditMatchKindOnly)
			want := map[string]bool{"pods/ephemeralcontainers": true}
			for _, k := range policies.AdmissionKinds {
				for _, g := range k.APIGroups {
					for _, kind := range k.Kinds {
						res, ok := resources[[2]string{g, kind}]
						require.True(t, ok, "%s/%s", g, kind)
						want[res] = true
						for _, op := range []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update} {
							assert.True(t, ruleCovers(v.ValidatingWebhookCustomRules, op, g, res), "%s of %s/%s (%s) is not sent to the validating webhook", op, g, kind, res)
						}
					}
				}
			}
			assert.True(t, ruleCovers(v.ValidatingWebhookCustomRules, admissionregistrationv1.Update, "", "pods/ephemeralcontainers"))
			for _, r := range v.ValidatingWebhookCustomRules {
				for _, res := range r.Resources {
					if res == "*" {
						for _, g := range r.APIGroups {
							assert.Regexp(t, `\.gatekeeper\.sh$`, g, "every resource of group %q goes to the validating webhook", g)
						}
						continue
					}
					assert.True(t, want[res], "the validating webhook receives %s, which no constraint matches", res)
				}
			}
			// Every mutator the tree renders is reached.
			for p, data := range tree {
				var mu struct {
					Kind string
					Spec struct {
						Match struct {
							Kinds []struct {
								APIGroups []string `json:"apiGroups"`
								Kinds     []string
							}
						}
					}
				}
				require.NoError(t, yaml.Unmarshal(data, &mu), p)
				if !slices.Contains([]string{"Assign", "AssignMetadata", "ModifySet"}, mu.Kind) {
					continue
				}
				for _, k := range mu.Spec.Match.Kinds {
					for _, g := range k.APIGroups {
						for _, kind := range k.Kinds {
							assert.True(t, ruleCovers(v.MutatingWebhookCustomRules, admissionregistrationv1.Create, g, resources[[2]string{g, kind}]), "%s: %s/%s", p, g, kind)
						}
					}
				}
			}
			for _, r := range v.MutatingWebhookCustomRules {
				assert.Equal(t, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, r.Operations)
				assert.NotContains(t, r.Resources, "*")
			}
		})
	}
}

// TestGatekeeperValuesKeepKueueGate evaluates the validating webhook's
// matchConditions (CEL, over requests as the API server gives them, which
// leave out an empty group and subresource): Kueue's manager's UPDATEs of
// a pod and UPDATEs that change nothing the policies read are kept from
// Gatekeeper; a gate lifted by anyone else, a label changed, an ephemeral
// container added (even by Kueue), and every CREATE are sent.
func TestGatekeeperValuesKeepKueueGate(t *testing.T) {
	v := treeValues(t, renderExample(t, "hetero-prod"))
	env, err := cel.NewEnv(cel.Variable("object", cel.DynType), cel.Variable("oldObject", cel.DynType), cel.Variable("request", cel.DynType))
	require.NoError(t, err)
	var programs []cel.Program
	for _, c := range v.ValidatingWebhookMatchConditions {
		ast, iss := env.Compile(c.Expression)
		require.NoError(t, iss.Err(), c.Name)
		p, err := env.Program(ast)
		require.NoError(t, err, c.Name)
		programs = append(programs, p)
	}
	const kueue = "system:serviceaccount:kueue-system:kueue-controller-manager"
	gated := map[string]any{
		"metadata": map[string]any{"name": "p", "labels": map[string]any{"kueue.x-k8s.io/queue-name": "gpu"}, "finalizers": []any{"kueue.x-k8s.io/managed"}},
		"spec":     map[string]any{"schedulingGates": []any{map[string]any{"name": "kueue.x-k8s.io/admission"}}, "containers": []any{map[string]any{"name": "c"}}},
	}
	ungated := map[string]any{
		"metadata": gated["metadata"],
		"spec":     map[string]any{"nodeSelector": map[string]any{"t": "x"}, "containers": []any{map[string]any{"name": "c"}}},
	}
	finalized := map[string]any{"metadata": map[string]any{"name": "p", "labels": map[string]any{"kueue.x-k8s.io/queue-name": "gpu"}}, "spec": gated["spec"]}
	relabelled := map[string]any{"metadata": map[string]any{"name": "p", "labels": map[string]any{"kueue.x-k8s.io/queue-name": "other"}}, "spec": gated["spec"]}
	request := func(op, user, sub string) map[string]any {
		r := map[string]any{"operation": op, "resource": map[string]any{"version": "v1", "resource": "pods"}, "userInfo": map[string]any{"username": user}}
		if sub != "" {
			r["subResource"] = sub
		}
		return r
	}
	for _, c := range []struct {
		name     string
		req      map[string]any
		obj, old map[string]any
		sent     bool
	}{
		{"Kueue lifts its gate", request("UPDATE", kueue, ""), ungated, gated, false},
		{"a user lifts Kueue's gate", request("UPDATE", "mallory", ""), ungated, gated, true},
		{"the Job controller lifts Kueue's gate", request("UPDATE", "system:serviceaccount:kube-system:job-controller", ""), ungated, gated, true},
		{"a finalizer removed", request("UPDATE", "anyone", ""), finalized, gated, false},
		{"a label changed", request("UPDATE", "anyone", ""), relabelled, gated, true},
		{"an ephemeral container, by Kueue's identity", request("UPDATE", kueue, "ephemeralcontainers"), gated, gated, true},
		{"a pod made", request("CREATE", "anyone", ""), gated, nil, true},
	} {
		sent := true
		for i, p := range programs {
			out, _, err := p.Eval(map[string]any{"request": c.req, "object": c.obj, "oldObject": c.old})
			require.NoError(t, err, "%s: %s", c.name, v.ValidatingWebhookMatchConditions[i].Name)
			sent = sent && out.Value() == true
		}
		assert.Equal(t, c.sent, sent, c.name)
	}
}
