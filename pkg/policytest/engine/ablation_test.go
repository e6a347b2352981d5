package engine_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/policytest/engine"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/policies"
)

var ablate = flag.Bool("escape.ablate", false, "run TestGuardsAreNeeded: the escape check with each guard rule taken out in turn (make escape-ablation)")

// guards are the rules that close a way past another layer (a device the
// runtime hands out on an annotation, Kueue told to look away, a claim
// that confines nothing, the node's namespaces in a namespace Pod
// Security does not govern), each named by a phrase of its message that
// no other rule has. Taking one out must let the escape check find an
// escape: a guard it cannot miss is either not needed or not checked.
//
// Not listed, because taking them out alone lets nothing through: rules
// another rule backs (a pod of another team's profile is also off the
// team's queue and types; a pod with no profile also may not aim at
// accelerator nodes; a claim profile's pod without a claim also may not
// ask for the device resource), rules against what Kubernetes' own
// validation already refuses (a claim request with no DeviceClass, a
// claim field the API server does not know), and the rule that refuses a
// queue label in a namespace of no team, which keeps a workload's verdict
// the same as its pods' (the escape check found that disagreement once
// in 5,000 pods; it needs more than this test runs).
var guards = []struct {
	family string
	// phrase is in the rule's text and in no other rule's.
	phrase string
	// examples are tried in order until one shows an escape.
	examples []string
}{
	{family: "device-visibility variable", phrase: `"container %v sets %v=%v"`, examples: []string{"hetero-prod"}},
	{family: "device-visibility variable by valueFrom", phrase: `"container %v takes %v from valueFrom"`, examples: []string{"hetero-prod"}},
	{family: "privileged container", phrase: `is privileged (it sees every device of its node)`, examples: []string{"hetero-prod"}},
	{family: "device or runtime host path", phrase: `"volume %v mounts host path %v"`, examples: []string{"hetero-prod"}},
	{family: "writable host path", phrase: `writable (volume %v): what it writes on the node outlives the pod`, examples: []string{"hetero-prod", "gpu-pools"}},
	{family: "runtime device annotation (CDI)", phrase: `asks the container runtime for devices`, examples: []string{"hetero-prod", "gpu-pools"}},
	{family: "capability beyond baseline", phrase: `adds capability %v (Pod Security baseline`, examples: []string{"hetero-prod", "gpu-pools"}},
	{family: "node's host namespaces", phrase: `the pod shares the node's %v namespace`, examples: []string{"hetero-prod", "gpu-pools"}},
	{family: "pod of a profile off its types (claim profiles too)", phrase: `allows %v: add nodeSelector %v`, examples: []string{"hetero-prod", "small-lab"}},
	{family: "claim asking for no device", phrase: `it asks for no device (devices.requests is empty)`, examples: []string{"small-lab", "hetero-prod"}},
	{family: "claim of every device of a node", phrase: `asks for every matching device of a node (allocationMode All)`, examples: []string{"small-lab", "hetero-prod"}},
	{family: "pod owned by a Kueue-managed kind it was not made by", phrase: `(ownerReferences), but %v made it`, examples: []string{"hetero-prod", "gpu-pools"}},
	{family: "pod Kueue's webhook skipped", phrase: `reached admission without Kueue's scheduling gate`, examples: []string{"hetero-prod", "gpu-pools"}},
	{family: "Kueue's gate lifted by another", phrase: `which only Kueue lifts when it admits`, examples: []string{"hetero-prod", "gpu-pools"}},
	{family: "Job outside Kueue", phrase: `Kueue manages it only while it names LocalQueue`, examples: []string{"hetero-prod", "gpu-pools"}},
}

// TestGuardsAreNeeded takes each guard out of the rendered admission
// template in turn and runs the escape check: each must let escapes
// through, so each is needed and the check would notice it gone. It is
// slow (a few hundred pods per guard, until an escape), so it runs with
// -escape.ablate (make escape-ablation, which CI runs).
func TestGuardsAreNeeded(t *testing.T) {
	if !*ablate {
		t.Skip("slow: run with -escape.ablate (make escape-ablation)")
	}
	trees := map[string]*exampleCluster{}
	for _, g := range guards {
		for _, name := range g.examples {
			if trees[name] == nil {
				_, m, inv, tree := example(t, name)
				trees[name] = &exampleCluster{m: m, inv: inv, tree: tree}
			}
		}
	}
	for _, g := range guards {
		t.Run(g.family, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var tried []string
			for _, name := range g.examples {
				ex := trees[name]
				tree, err := withoutRule(ex.tree, g.phrase)
				require.NoError(t, err)
				check, err := engine.NewEscapeCheck(ctx, ex.m, ex.inv, tree)
				require.NoError(t, err)
				check.Validator = validator(t)
				// Seeds in turn, a few hundred pods each: most guards
				// show an escape in the first.
				for seed := uint64(1); seed <= 4; seed++ {
					rep, err := check.Run(ctx, seed, 600)
					require.NoError(t, err)
					if len(rep.Escapes) > 0 {
						t.Logf("without the rule: %d escapes in %s (seed %d, %d pods), e.g. %s", len(rep.Escapes), name, seed, rep.Pods, rep.Escapes[0].Why)
						return
					}
					tried = append(tried, fmt.Sprintf("%s seed %d", name, seed))
				}
			}
			t.Errorf("with the rule that says %q taken out, the escape check found no escape (%s): the rule is not needed, or the generator and judge do not know its family", g.phrase, strings.Join(tried, ", "))
		})
	}
}

// exampleCluster is an example cluster, exampleCluster once for every guard.
type exampleCluster struct {
	m    *compile.Model
	inv  *inventory.Inventory
	tree render.Tree
}

// withoutRule is tree with the one Rego rule of its admission template
// whose text holds phrase taken out. It fails unless exactly one rule
// does, so that a reworded message fails the test rather than ablating
// nothing.
func withoutRule(tree render.Tree, phrase string) (render.Tree, error) {
	out := render.Tree{}
	found := 0
	for p, data := range tree {
		out[p] = data
		if !strings.Contains(string(data), "kind: ConstraintTemplate") {
			continue
		}
		var tmpl map[string]any
		if err := yaml.Unmarshal(data, &tmpl); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if tmpl["kind"] != "ConstraintTemplate" || tmpl["metadata"].(map[string]any)["name"] != policies.Admission.Name {
			continue
		}
		source := tmpl["spec"].(map[string]any)["targets"].([]any)[0].(map[string]any)["code"].([]any)[0].(map[string]any)["source"].(map[string]any)
		cut := func(module string) (string, error) {
			parsed, err := ast.ParseModuleWithOpts(p, module, ast.ParserOptions{RegoVersion: ast.RegoV1})
			if err != nil {
				return "", fmt.Errorf("%s: %w", p, err)
			}
			for _, r := range parsed.Rules {
				text := string(r.Location.Text)
				if strings.Contains(text, phrase) {
					found++
					module = strings.Replace(module, text, "", 1)
				}
			}
			return module, nil
		}
		var err error
		if source["rego"], err = cut(source["rego"].(string)); err != nil {
			return nil, err
		}
		libs := source["libs"].([]any)
		for i := range libs {
			if libs[i], err = cut(libs[i].(string)); err != nil {
				return nil, err
			}
		}
		if out[p], err = yaml.Marshal(tmpl); err != nil {
			return nil, err
		}
	}
	if found != 1 {
		return nil, fmt.Errorf("%d rules of the admission template hold %q: name one rule", found, phrase)
	}
	return out, nil
}
