package policies_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/policies"
)

// sampleParams are the parameters of the sample constraints in each
// policy folder: the same small cluster as lib/fixtures_test.rego.
var sampleParams = map[string]any{
	"typeLabel":   "accelerator.opendatahub.io/type",
	"labelPrefix": "accelerator.opendatahub.io",
	"profiles": map[string]any{
		"premium-gpu": map[string]any{"enabled": true, "types": []string{"nvidia-h200-141gb"}, "resourceName": "nvidia.com/gpu", "gpuMin": 1, "gpuMax": 8,
			"tolerations": []any{map[string]any{"key": "accelerator.opendatahub.io/pool", "operator": "Equal", "value": "premium", "effect": "NoSchedule"}}},
		"large-memory": map[string]any{"enabled": true, "types": []string{"nvidia-h200-141gb", "nvidia-a100-80gb"}, "resourceName": "nvidia.com/gpu", "gpuMin": 1, "gpuMax": 8,
			"tolerations": []any{map[string]any{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}}},
		"old-gpu": map[string]any{"enabled": false, "types": []string{"nvidia-v100-16gb"}, "resourceName": "nvidia.com/gpu", "gpuMin": 1, "gpuMax": 1, "tolerations": []any{}},
	},
	"genericNamespaces": map[string]any{"legacy": true},
	"namespaces":        map[string]any{"ml": "ml-research", "serving": "model-serving", "legacy": "ml-research"},
	"teams": map[string]any{
		"ml-research":   map[string]any{"types": []string{"nvidia-h200-141gb", "nvidia-a100-80gb"}},
		"model-serving": map[string]any{"types": []string{"nvidia-a100-80gb"}},
	},
	"nodes":     map[string]any{"h200-01": "nvidia-h200-141gb", "v100-01": "nvidia-v100-16gb"},
	"taintKeys": map[string]any{"accelerator.opendatahub.io/pool": true, "nvidia.com/gpu": true},
}

// TestTemplatesAndSamples keeps each folder's template.yaml equal to what
// accelc renders, and its samples/constraint.yaml to the sample
// parameters; `go test ./... -update` rewrites them.
func TestTemplatesAndSamples(t *testing.T) {
	for _, p := range policies.All {
		b, err := yaml.Marshal(p.Template())
		assert.NoError(t, err)
		testutil.Golden(t, filepath.Join(p.Dir, "template.yaml"), b)

		params := map[string]any{}
		for _, name := range p.Params {
			if v, ok := sampleParams[name]; ok {
				params[name] = v
			}
		}
		c, err := yaml.Marshal(map[string]any{
			"apiVersion": "constraints.gatekeeper.sh/v1beta1",
			"kind":       p.Kind,
			"metadata":   map[string]any{"name": "sample"},
			"spec": map[string]any{
				"match":      map[string]any{"kinds": []any{map[string]any{"apiGroups": []string{""}, "kinds": []string{"Pod"}}}},
				"parameters": params,
			},
		})
		assert.NoError(t, err)
		testutil.Golden(t, filepath.Join(p.Dir, "samples", "constraint.yaml"), c)
	}
}

// TestEveryPolicyHasASuite fails for a policy folder without a gator
// suite, as gatekeeper-library's require-suites check does.
func TestEveryPolicyHasASuite(t *testing.T) {
	for _, p := range policies.All {
		_, err := os.Stat(filepath.Join(p.Dir, "suite.yaml"))
		assert.NoError(t, err, "policies/%s has no suite.yaml", p.Dir)
	}
}
