package upstream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	kubectlnfd "sigs.k8s.io/node-feature-discovery/pkg/kubectl-nfd"
)

// TestNodeFeatureRulesNFDAccepts runs every example's rendered
// NodeFeatureRules (the golden trees, which the main module's golden test
// keeps equal to what accelc renders) through NFD's own validator.
func TestNodeFeatureRulesNFDAccepts(t *testing.T) {
	rules, err := filepath.Glob("../../testdata/golden/*/nodes/nodefeaturerule-*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		t.Fatal("no rendered NodeFeatureRule under testdata/golden: run from tools/upstream")
	}
	for _, f := range rules {
		if errs := kubectlnfd.ValidateNFR(f); len(errs) > 0 {
			for _, e := range errs {
				t.Errorf("%s: NFD refuses: %v", f, e)
			}
			continue
		}
		t.Logf("%s: NFD's validator accepts it", f)
	}
}

// TestNFDRefusesUnprefixedTaints: the validator is the one that found
// gpu-pools' unprefixed taint keys, and refuses them still (accelc's vet
// now errors on them first).
func TestNFDRefusesUnprefixedTaints(t *testing.T) {
	f := filepath.Join(t.TempDir(), "rule.yaml")
	rule := `apiVersion: nfd.k8s-sigs.io/v1alpha1
kind: NodeFeatureRule
metadata: {name: r}
spec:
  rules:
  - name: pool
    labels: {accelerator.opendatahub.io/pool: a100-ts}
    taints: [{key: gpu, value: "true", effect: NoSchedule}]
    matchFeatures:
    - feature: pci.device
      matchExpressions: {vendor: {op: In, value: ["10de"]}}
`
	if err := os.WriteFile(f, []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	errs := kubectlnfd.ValidateNFR(f)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "unprefixed keys are not allowed") {
		t.Fatalf("want NFD to refuse the unprefixed taint key, got %v", errs)
	}
}
