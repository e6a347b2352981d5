package engine_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/policytest/engine"
	"github.com/accelc/accelc/pkg/render"
)

var (
	escapePods = flag.Int("escape.pods", 1500, "random pods per example cluster in TestEscapes (make fuzz runs 100,000)")
	escapeSeed = flag.Uint64("escape.seed", 1, "seed of TestEscapes' pods")
)

// TestEscapes runs the semantic escape check over every example cluster:
// random pods and workloads through the rendered mutators and constraint
// (Gatekeeper's engine), and for each admitted one, the nodes it could run
// on and the devices it could reach there. No pod may reach a device its
// team may not use, or reach one outside a profile its team may use.
func TestEscapes(t *testing.T) {
	// hetero-prod-retired retires a profile: pods of it are refused when
	// made, and its running pods' controllers' updates must pass.
	for _, name := range []string{"gpu-pools", "hetero-prod", "small-lab", "tpu-trainium", retiredExample} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			load := example
			if name == retiredExample {
				load = func(t *testing.T, _ string) (string, *compile.Model, *inventory.Inventory, render.Tree) {
					return exampleRetired(t)
				}
			}
			_, m, inv, tree := load(t, name)
			ctx := context.Background()
			check, err := engine.NewEscapeCheck(ctx, m, inv, tree)
			require.NoError(t, err)
			check.Validator = validator(t)
			start := time.Now()
			rep, err := check.Run(ctx, *escapeSeed, *escapePods)
			require.NoError(t, err)
			if check.Validator != nil {
				t.Logf("%s: %d generated objects refused by Kubernetes' own validation, left out: %v", name, rep.Refused, rep.RefusedWhy)
			}
			for _, e := range rep.InvalidLegitimate {
				t.Errorf("a legitimate object Kubernetes refuses: %s\n%s", e.Why, e.Pod)
			}
			t.Logf("%s: seed %d: %d pods and workloads (%d workloads, each also as its controllers' pods; %d UPDATEs; %d claims, %d admitted), %d admitted pods, %d of them reaching devices, %d escapes, %d workload/pod disagreements; %d legitimate (%d of them controllers' UPDATEs, %d of pods from before enforcement, %d of them of retired profiles), %d false denials; in %s",
				name, *escapeSeed, rep.Pods, rep.Workloads, rep.Updates, rep.Claims, rep.ClaimsAdmitted, rep.Admitted, rep.Reaching, len(rep.Escapes), len(rep.Disagreements), rep.Legitimate, rep.ControllerUpdates, rep.BeforeEnforcement, rep.OfRetiredProfiles, len(rep.FalseDenials), time.Since(start).Round(time.Millisecond))
			families := map[string]int{}
			for _, e := range rep.Escapes {
				families[e.Family]++
			}
			if len(families) > 0 {
				t.Logf("%s: escapes by family: %v", name, families)
			}
			for _, list := range []struct {
				what string
				es   []engine.Escape
			}{{"workload and pod disagree", rep.Disagreements}, {"false denial", rep.FalseDenials}} {
				for i, e := range list.es {
					if i == 5 {
						t.Errorf("… and %d more", len(list.es)-5)
						break
					}
					t.Errorf("%s: %s\n--- as written:\n%s--- as judged:\n%s", list.what, e.Why, e.Pod, e.Admitted)
				}
			}
			for i, e := range rep.Escapes {
				if i == 5 {
					t.Errorf("… and %d more", len(rep.Escapes)-5)
					break
				}
				t.Errorf("escape: %s\n--- pod as written:\n%s--- as admitted:\n%s", e.Why, e.Pod, e.Admitted)
			}
			// The check is not vacuous: some pods are turned away, some
			// admitted ones reach devices.
			assert.Less(t, rep.Admitted, rep.Pods, "every pod admitted")
			assert.Positive(t, rep.Reaching, "no admitted pod reaches a device: the generator misses the legitimate ones")
			assert.Positive(t, rep.Workloads, "no workloads generated")
			assert.Positive(t, rep.Updates, "no UPDATEs generated")
			assert.Positive(t, rep.Claims, "no claims generated")
			assert.Positive(t, rep.Legitimate, "no legitimate pods generated")
			if name == retiredExample {
				assert.Positive(t, rep.OfRetiredProfiles, "no running pod of the retired profile updated by its controllers")
			}
		})
	}
}

// validator starts Kubernetes' own validation (bin/k8s-<version>/
// k8s-validate, which `make control-plane` builds from tools/e2e), so
// that only objects a real API server accepts are judged. Without it the
// check runs on every generated object and says so; in CI it must be
// there.
func validator(t *testing.T) *engine.Validator {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join("..", "..", "..", "bin", "k8s-*", "k8s-validate"))
	if len(matches) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("bin/k8s-*/k8s-validate is missing: run `make control-plane`")
		}
		t.Log("bin/k8s-*/k8s-validate is missing (make control-plane builds it): generated objects are not checked against Kubernetes' own validation")
		return nil
	}
	v, err := engine.StartValidator(matches[len(matches)-1])
	require.NoError(t, err)
	t.Cleanup(func() { _ = v.Close() })
	return v
}
