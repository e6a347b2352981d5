package policies_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/policies"
)

// sampleParams are the parameters of the sample constraints in each
// policy folder.
var sampleParams = map[string]any{
	"typeLabel":            "accelerator.opendatahub.io/type",
	"labelPrefix":          "accelerator.opendatahub.io",
	"profileNamespace":     "opendatahub",
	"genericNamespaces":    map[string]any{"legacy": true},
	"taintKeys":            map[string]any{"accelerator.opendatahub.io/pool": true, "nvidia.com/gpu": true},
	"deviceRuntimeClasses": map[string]any{"nvidia": true},
}

// sampleInventory is what Gatekeeper would sync for the samples:
// HardwareProfiles and NamespaceEntitlements as accelc renders them, and
// two Nodes.
func sampleInventory() []any {
	hwp := func(name, types, disabled string, max int, tolerations []any) any {
		return map[string]any{
			"apiVersion": "infrastructure.opendatahub.io/v1", "kind": "HardwareProfile",
			"metadata": map[string]any{"name": name, "namespace": "opendatahub", "annotations": map[string]any{
				"opendatahub.io/disabled": disabled, "accelerator.opendatahub.io/types": types}},
			"spec": map[string]any{
				"identifiers": []any{map[string]any{"displayName": "GPU", "identifier": "nvidia.com/gpu", "minCount": 1, "maxCount": max, "defaultCount": 1, "resourceType": "Accelerator"}},
				"scheduling":  map[string]any{"type": "Node", "node": map[string]any{"tolerations": tolerations}},
			},
		}
	}
	pool := map[string]any{"key": "accelerator.opendatahub.io/pool", "operator": "Equal", "value": "premium", "effect": "NoSchedule"}
	gpu := map[string]any{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
	node := func(name, typ string) any {
		return map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": name, "labels": map[string]any{"accelerator.opendatahub.io/type": typ}}}
	}
	entitlement := func(ns, team string, types ...string) map[string]any {
		return map[string]any{"apiVersion": "accelc.io/v1alpha1", "kind": "NamespaceEntitlement",
			"metadata": map[string]any{"name": ns}, "spec": map[string]any{"team": team, "acceleratorTypes": types}}
	}
	// ml's team may claim its types' DRA devices.
	ml := entitlement("ml", "ml-research", "nvidia-a100-80gb", "nvidia-h200-141gb")
	ml["spec"].(map[string]any)["deviceClasses"] = map[string]any{"nvidia-a100-80gb": 2, "nvidia-h200-141gb": 2}
	return []any{
		ml,
		entitlement("serving", "model-serving", "nvidia-a100-80gb"),
		hwp("premium-gpu", "nvidia-h200-141gb", "false", 8, []any{pool}),
		hwp("large-memory", "nvidia-h200-141gb,nvidia-a100-80gb", "false", 8, []any{gpu}),
		hwp("large-gpu", "nvidia-a100-80gb", "false", 8, []any{gpu}),
		hwp("old-gpu", "nvidia-v100-16gb", "true", 1, []any{}),
		node("h200-01", "nvidia-h200-141gb"),
		node("v100-01", "nvidia-v100-16gb"),
	}
}

func constraintYAML(t *testing.T, p policies.Policy, name string, params map[string]any) []byte {
	pp := map[string]any{}
	for _, k := range p.Params {
		if v, ok := params[k]; ok {
			pp[k] = v
		}
	}
	c, err := yaml.Marshal(map[string]any{
		"apiVersion": "constraints.gatekeeper.sh/v1beta1",
		"kind":       p.Kind,
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"match":      map[string]any{"kinds": policies.AdmissionKinds},
			"parameters": pp,
		},
	})
	assert.NoError(t, err)
	return c
}

// TestTemplatesAndSamples keeps each folder's template.yaml equal to what
// accelc renders, and its samples/constraint.yaml to the sample
// parameters; `go test ./... -update` rewrites them.
func TestTemplatesAndSamples(t *testing.T) {
	for _, p := range policies.All {
		b, err := yaml.Marshal(p.Template())
		assert.NoError(t, err)
		testutil.Golden(t, filepath.Join(p.Dir, "template.yaml"), b)

		testutil.Golden(t, filepath.Join(p.Dir, "samples", "constraint.yaml"), constraintYAML(t, p, "sample", sampleParams))
		var docs []byte
		for i, obj := range sampleInventory() {
			b, err := yaml.Marshal(obj)
			assert.NoError(t, err)
			if i > 0 {
				docs = append(docs, "---\n"...)
			}
			docs = append(docs, b...)
		}
		testutil.Golden(t, filepath.Join(p.Dir, "samples", "inventory.yaml"), docs)
	}
}

// policyDirs are the folders on disk under policies/: every one but lib/,
// the Rego library the templates share.
func policyDirs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "lib" {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs
}

// TestFoldersAreRegistered keeps the folders on disk and policies.All the
// same set: a folder All does not name is verified by gator but never
// rendered into a cluster; a name without a folder has no Rego.
func TestFoldersAreRegistered(t *testing.T) {
	registered := map[string]bool{}
	for _, p := range policies.All {
		registered[p.Dir] = true
	}
	onDisk := map[string]bool{}
	for _, dir := range policyDirs(t) {
		onDisk[dir] = true
		assert.True(t, registered[dir], "policies/%s is not in policies.All: register it, or remove the folder", dir)
	}
	for _, p := range policies.All {
		assert.True(t, onDisk[p.Dir], "policies.All names %s, but policies/%s is not a folder", p.Dir, p.Dir)
	}
}

// TestEveryPolicyHasASuite fails for a policy folder on disk without its
// Rego, Rego tests, template or gator suite, as gatekeeper-library's
// require-suites check does.
func TestEveryPolicyHasASuite(t *testing.T) {
	for _, dir := range policyDirs(t) {
		for _, f := range []string{"src.rego", "src_test.rego", "template.yaml", "suite.yaml"} {
			_, err := os.Stat(filepath.Join(dir, f))
			assert.NoError(t, err, "policies/%s has no %s", dir, f)
		}
	}
}

// TestListsAsTheRego keeps each Go list render uses equal to the Rego
// library's: base_prefixes, accelerator_label_prefixes, visibility_env
// (a set: compared sorted).
func TestListsAsTheRego(t *testing.T) {
	for _, c := range []struct {
		decl string
		want []string
	}{
		{"base_prefixes := [", policies.BaseResourcePrefixes},
		{"accelerator_label_prefixes := [", policies.AcceleratorLabelPrefixes},
		{"visibility_env := {", policies.VisibilityEnv},
	} {
		got := regoList(t, c.decl)
		if strings.HasSuffix(c.decl, "{") {
			slices.Sort(got)
		}
		assert.Equal(t, c.want, got, c.decl)
	}
}

// regoList is the strings of a list or set the Rego library declares
// one a line, decl its opening ("name := [").
func regoList(t *testing.T, decl string) []string {
	t.Helper()
	lib := policies.Lib()
	start := strings.Index(lib, decl)
	if start < 0 {
		t.Fatalf("lib/accelc.rego declares no %q: a Go list is held equal to it", decl)
	}
	closing := map[byte]string{'[': "]", '{': "}"}[decl[len(decl)-1]]
	end := strings.Index(lib[start:], closing)
	var got []string
	for _, line := range strings.Split(lib[start:start+end], "\n")[1:] {
		if v := strings.Trim(strings.TrimSpace(line), `",`); v != "" {
			got = append(got, v)
		}
	}
	return got
}

// TestBasePrefixesNameADomain keeps is_accelerator's shortcut true: it
// skips base_prefixes for a resource name without a "/" (cpu, memory),
// which no prefix with one can start.
func TestBasePrefixesNameADomain(t *testing.T) {
	for _, p := range policies.BaseResourcePrefixes {
		assert.Contains(t, p, "/", "base prefix %q has no domain: is_accelerator in lib/accelc.rego skips base_prefixes for names without a \"/\"", p)
	}
}
