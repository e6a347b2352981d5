package render_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// stagesCluster is a cluster in dryrun with one team moved to deny and one
// to warn.
const stagesCluster = `package c

cluster: {
	name: "staged"
	quotas: "resourcequota"
	podSecurity: "baseline"
}
profiles: l4: {displayName: "L4", acceleratorTypes: ["nvidia-l4-24gb"]}
teams: {
	ml: {namespaces: ["ml", "ml-dev"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 4, enforcement: "deny"}
	web: {namespaces: ["web"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 2, enforcement: "warn"}
	lab: {namespaces: ["lab"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 2}
}
`

// TestStages: each stage in use has its constraint over disjoint
// namespaces; mutations, Pod Security enforcement and quotas reach only
// the namespaces that deny.
func TestStages(t *testing.T) {
	tree := renderTree(t, stagesCluster)
	type constraint struct {
		Spec struct {
			EnforcementAction string
			Match             struct {
				Namespaces, ExcludedNamespaces []string
			}
			Parameters struct{ Forecast bool }
		}
	}
	read := func(path string) constraint {
		t.Helper()
		var c constraint
		require.Contains(t, tree, path)
		require.NoError(t, yaml.Unmarshal(tree[path], &c))
		return c
	}
	def := read("constraints/accelcadmission-accelc.yaml")
	assert.Equal(t, "dryrun", def.Spec.EnforcementAction)
	assert.Empty(t, def.Spec.Match.Namespaces, "the cluster's stage covers every namespace")
	assert.Subset(t, def.Spec.Match.ExcludedNamespaces, []string{"ml", "ml-dev", "web"}, "but the staged teams'")
	assert.NotContains(t, def.Spec.Match.ExcludedNamespaces, "lab")
	assert.True(t, def.Spec.Parameters.Forecast)
	deny := read("constraints/accelcadmission-accelc-deny.yaml")
	assert.Equal(t, "deny", deny.Spec.EnforcementAction)
	assert.Equal(t, []string{"ml", "ml-dev"}, deny.Spec.Match.Namespaces)
	assert.False(t, deny.Spec.Parameters.Forecast, "its pods are mutated")
	warn := read("constraints/accelcadmission-accelc-warn.yaml")
	assert.Equal(t, []string{"web"}, warn.Spec.Match.Namespaces)
	assert.True(t, warn.Spec.Parameters.Forecast)

	// Every mutator is confined to the namespaces that deny.
	var mutators int
	for _, p := range tree.Paths() {
		if !strings.HasPrefix(p, "mutations/") || strings.HasSuffix(p, "kustomization.yaml") {
			continue
		}
		var obj struct {
			Kind string
			Spec struct {
				Match struct{ Namespaces []string }
				// A MutatingAdmissionPolicyBinding's.
				MatchResources struct {
					NamespaceSelector struct {
						MatchExpressions []struct {
							Key, Operator string
							Values        []string
						}
					}
				}
			}
		}
		require.NoError(t, yaml.Unmarshal(tree[p], &obj), p)
		switch obj.Kind {
		case "MutatingAdmissionPolicy", "ConfigMap": // the policy, Gatekeeper's installation values
		case "MutatingAdmissionPolicyBinding":
			// Each skips the namespaces Gatekeeper ignores too.
			sel := obj.Spec.MatchResources.NamespaceSelector.MatchExpressions
			require.Len(t, sel, 2, p)
			assert.Equal(t, render.GatekeeperIgnoreLabel, sel[0].Key, p)
			assert.Equal(t, "DoesNotExist", sel[0].Operator, p)
			assert.Equal(t, "kubernetes.io/metadata.name", sel[1].Key, p)
			assert.Equal(t, "In", sel[1].Operator, p)
			assert.Equal(t, []string{"ml", "ml-dev"}, sel[1].Values, p)
		default:
			mutators++
			assert.NotEmpty(t, obj.Spec.Match.Namespaces, p)
			assert.Subset(t, []string{"ml", "ml-dev"}, obj.Spec.Match.Namespaces, p)
		}
	}
	assert.Positive(t, mutators)

	// Pod Security is enforced, and quotas refuse pods, only at deny.
	assert.Contains(t, string(tree["tenancy/namespace-ml.yaml"]), "pod-security.kubernetes.io/enforce: baseline")
	assert.NotContains(t, string(tree["tenancy/namespace-web.yaml"]), "pod-security.kubernetes.io/enforce")
	assert.Contains(t, string(tree["tenancy/namespace-web.yaml"]), "pod-security.kubernetes.io/warn: baseline")
	assert.Contains(t, tree, "queues/resourcequota-ml-accelc-accelerators.yaml")
	assert.NotContains(t, tree, "queues/resourcequota-web-accelc-accelerators.yaml")
	assert.NotContains(t, tree, "queues/resourcequota-lab-accelc-accelerators.yaml")
}

// TestStagesAtDeny: a cluster at deny with a team held back in dryrun
// excludes that team's namespaces from its mutators and policy bindings.
func TestStagesAtDeny(t *testing.T) {
	src := strings.Replace(stagesCluster, `name: "staged"`, `name: "staged"`+"\n\tenforcement: \"deny\"", 1)
	src = strings.Replace(src, `quota: "nvidia-l4-24gb": 2, enforcement: "warn"`, `quota: "nvidia-l4-24gb": 2, enforcement: "deny"`, 1)
	src = strings.Replace(src, `lab: {namespaces: ["lab"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 2}`,
		`lab: {namespaces: ["lab"], acceleratorTypes: ["nvidia-l4-24gb"], quota: "nvidia-l4-24gb": 2, enforcement: "dryrun"}`, 1)
	tree := renderTree(t, src)
	assert.Contains(t, tree, "constraints/accelcadmission-accelc-dryrun.yaml")
	assert.NotContains(t, tree, "constraints/accelcadmission-accelc-deny.yaml", "deny is the cluster's stage")
	for _, p := range tree.Paths() {
		if strings.HasPrefix(p, "mutations/mutatingadmissionpolicybinding-") {
			assert.Contains(t, string(tree[p]), "operator: NotIn", p)
			assert.Contains(t, string(tree[p]), "- lab", p)
		}
	}
	assert.Contains(t, string(tree["mutations/assignmetadata-accelc-l4-profile.yaml"]), "- lab", "excluded")
}

func renderTree(t *testing.T, src string) render.Tree {
	t.Helper()
	objs, err := render.Render(loadCUE(t, src), &inventory.Inventory{})
	require.NoError(t, err)
	tree, err := render.BuildTree("staged", objs, render.Provenance{})
	require.NoError(t, err)
	return tree
}

// TestNamespaceStage: one namespace of a team moves ahead of the team.
func TestNamespaceStage(t *testing.T) {
	src := strings.Replace(stagesCluster, `enforcement: "deny"}`, `namespaceEnforcement: "ml-dev": "deny"}`, 1)
	tree := renderTree(t, src)
	var c struct {
		Spec struct {
			EnforcementAction string
			Match             struct{ Namespaces []string }
		}
	}
	require.NoError(t, yaml.Unmarshal(tree["constraints/accelcadmission-accelc-deny.yaml"], &c))
	assert.Equal(t, []string{"ml-dev"}, c.Spec.Match.Namespaces)
	assert.Contains(t, tree, "queues/resourcequota-ml-dev-accelc-accelerators.yaml")
	assert.NotContains(t, tree, "queues/resourcequota-ml-accelc-accelerators.yaml", "ml itself is at the cluster's dryrun")
	assert.Contains(t, string(tree["tenancy/namespace-ml-dev.yaml"]), "pod-security.kubernetes.io/enforce")
	assert.NotContains(t, string(tree["tenancy/namespace-ml.yaml"]), "pod-security.kubernetes.io/enforce")
	assert.Contains(t, string(tree["mutations/assignmetadata-accelc-l4-profile.yaml"]), "- ml-dev")
}

// nodeStagesCluster has a MIG config on one listed A100 node and a
// time-slicing pool over every L4, each with its profile; STAGE is
// replaced by the cluster's stage, POOLS by more CUE.
const nodeStagesCluster = `package c

cluster: {
	name: "nodes"
	enforcement: "STAGE"
	mig: configs: "a100-3g": {acceleratorType: "nvidia-a100-80gb", nodes: ["a100-mig-1"], layout: "3g.40gb": 2}
	sharing: "l4-shared": {acceleratorType: "nvidia-l4-24gb", replicas: 4}
}
profiles: {
	"a100-3g": {displayName: "A100 3g.40gb", acceleratorTypes: ["nvidia-a100-80gb"], mig: "3g.40gb"}
	"l4-shared": {displayName: "Shared L4", pool: "l4-shared"}
}
teams: ml: {namespaces: ["ml"], profiles: ["a100-3g", "l4-shared"]}
POOLS
`

func nodeStagesTree(t *testing.T, stage, more string) render.Tree {
	t.Helper()
	src := strings.Replace(strings.Replace(nodeStagesCluster, "STAGE", stage, 1), "POOLS", more, 1)
	return renderTree(t, src)
}

// nodeLayer is the part of a tree that reconfigures nodes and says what
// they are: the NodeFeatureRule and the GPU Operator's ConfigMaps.
func nodeLayer(tree render.Tree) render.Tree {
	out := render.Tree{}
	for p, b := range tree {
		if strings.HasPrefix(p, "nodes/") || strings.HasPrefix(p, "sharing/") {
			out[p] = b
		}
	}
	return out
}

// TestNodeStages: a MIG config's label, a pool's label, taint and
// device-plugin config reach the nodes only at deny; under dryrun and
// warn only the type label does. The goldens hold the node layer at each
// stage (testdata/golden-nodestages).
func TestNodeStages(t *testing.T) {
	nfr := "nodes/nodefeaturerule-" + render.NodeFeatureRuleName + ".yaml"
	migCM := "sharing/configmap-" + render.MIGConfigMapName + ".yaml"
	pluginCM := "sharing/configmap-" + render.DevicePluginConfigMapName + ".yaml"
	for _, stage := range []string{"dryrun", "warn", "deny"} {
		tree := nodeStagesTree(t, stage, "")
		rule := string(tree[nfr])
		assert.Contains(t, rule, "accelerator.opendatahub.io/type: nvidia-a100-80gb", "%s: the type label only describes: every stage", stage)
		reconfigures := stage == "deny"
		assert.Equal(t, reconfigures, strings.Contains(rule, render.MIGConfigLabel+": a100-3g"), stage)
		assert.Equal(t, reconfigures, strings.Contains(rule, render.DevicePluginConfigLabel+": l4-shared"), stage)
		assert.Equal(t, reconfigures, strings.Contains(rule, "accelerator.opendatahub.io/pool"), stage)
		assert.Equal(t, reconfigures, strings.Contains(rule, "taints:"), stage)
		assert.Equal(t, reconfigures, tree[migCM] != nil, stage)
		assert.Equal(t, reconfigures, tree[pluginCM] != nil, stage)
		goldenTree(t, filepath.Join("../../testdata/golden-nodestages", stage), nodeLayer(tree))
	}

	// The node layer ahead of the policies: the cluster reports only,
	// its nodes are reconfigured.
	ahead := nodeStagesTree(t, "dryrun", `cluster: nodeEnforcement: "deny"`)
	assert.Contains(t, string(ahead[nfr]), render.MIGConfigLabel+": a100-3g")
	assert.Contains(t, string(ahead[nfr]), render.DevicePluginConfigLabel+": l4-shared")

	// One MIG config held back at a cluster that denies: the pool goes
	// on, the repartition waits.
	held := nodeStagesTree(t, "deny", `cluster: mig: configs: "a100-3g": enforcement: "dryrun"`)
	assert.NotContains(t, string(held[nfr]), render.MIGConfigLabel)
	assert.NotContains(t, held, migCM, "no config at deny: nothing for the MIG manager")
	assert.Contains(t, string(held[nfr]), render.DevicePluginConfigLabel+": l4-shared")
	assert.Contains(t, held, pluginCM)
	// The pool's device-plugin config is the one it has with every pool
	// at deny.
	assert.Equal(t, nodeLayer(nodeStagesTree(t, "deny", ""))[pluginCM], held[pluginCM])
}

// TestNodeStagesKarpenter: a Karpenter NodePool of a pool's type gives
// its new nodes the pool's label and taint only where the pool's node
// stage is deny; held back, they are born as the type's other nodes.
func TestNodeStagesKarpenter(t *testing.T) {
	scale := `cluster: autoscaling: karpenter: {nodeClass: name: "gpu", pools: l4: {acceleratorType: "nvidia-l4-24gb", limit: 8}}`
	for stage, want := range map[string]bool{"dryrun": false, "warn": false, "deny": true} {
		np := string(nodeStagesTree(t, stage, scale)["autoscaling/nodepool-accelc-l4.yaml"])
		require.NotEmpty(t, np, stage)
		assert.Contains(t, np, "accelerator.opendatahub.io/type: nvidia-l4-24gb", stage)
		assert.Equal(t, want, strings.Contains(np, "accelerator.opendatahub.io/pool: l4-shared"), "%s: the pool label\n%s", stage, np)
		assert.Equal(t, want, strings.Contains(np, "value: l4-shared"), "%s: the pool taint\n%s", stage, np)
	}
}
