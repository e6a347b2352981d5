package upstream

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/config"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	_ "sigs.k8s.io/kueue/pkg/controller/jobs" // the integrations Kueue's manager registers
	"sigs.k8s.io/kueue/pkg/webhooks"
	"sigs.k8s.io/yaml"
)

// TestKueueAccepts decodes every example's rendered Kueue objects strictly
// into Kueue v0.19.2's own types (a field Kueue does not know is an error,
// where the API server would drop it) and runs each through the
// validation Kueue's webhooks apply: ClusterQueues, Cohorts and
// ResourceFlavors. The end-to-end test creates them through the live
// webhooks too; this catches the same refusals in go test.
func TestKueueAccepts(t *testing.T) {
	files, err := filepath.Glob("../../testdata/golden/*/*/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(data, &meta); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if meta.APIVersion != kueue.SchemeGroupVersion.String() {
			continue
		}
		var errs field.ErrorList
		var werr error
		switch meta.Kind {
		case "ClusterQueue":
			var cq kueue.ClusterQueue
			strict(t, f, data, &cq)
			errs = webhooks.ValidateClusterQueue(&cq)
		case "Cohort":
			var c kueue.Cohort
			strict(t, f, data, &c)
			_, werr = (&webhooks.CohortWebhook{}).ValidateCreate(context.Background(), &c)
		case "ResourceFlavor":
			var rf kueue.ResourceFlavor
			strict(t, f, data, &rf)
			errs = webhooks.ValidateResourceFlavor(&rf)
		case "LocalQueue":
			var lq kueue.LocalQueue
			strict(t, f, data, &lq)
		case "WorkloadPriorityClass":
			var wpc kueue.WorkloadPriorityClass
			strict(t, f, data, &wpc)
		default:
			t.Errorf("%s: a %s of %s, which this test does not check: add it", f, meta.Kind, meta.APIVersion)
			continue
		}
		if werr == nil {
			werr = errs.ToAggregate()
		}
		if werr != nil {
			t.Errorf("%s: Kueue's webhook refuses it: %v", f, werr)
		}
		counts[meta.Kind]++
	}
	if counts["ClusterQueue"] == 0 || counts["Cohort"] == 0 || counts["ResourceFlavor"] == 0 {
		t.Fatalf("found %v under testdata/golden: want ClusterQueues, Cohorts and ResourceFlavors (run from tools/upstream)", counts)
	}
	t.Logf("Kueue v0.19.2's types and webhook validation accept %v", counts)
}

// TestKueueLoadsConfiguration loads each example's rendered Configuration
// fragment the way Kueue's manager loads its --config file: config.Load
// (strict decoding, defaults) with the manager's scheme, then
// config.Validate, with the job integrations the manager registers.
func TestKueueLoadsConfiguration(t *testing.T) {
	files, err := filepath.Glob("../../testdata/golden/*/queues/configmap-accelc-kueue-configuration.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no rendered Kueue configuration under testdata/golden (run from tools/upstream)")
	}
	scheme := kueueScheme(t)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cm struct {
			Data map[string]string `json:"data"`
		}
		if err := yaml.Unmarshal(data, &cm); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		conf := filepath.Join(t.TempDir(), "configuration.yaml")
		if err := os.WriteFile(conf, []byte(cm.Data["configuration.yaml"]), 0o644); err != nil {
			t.Fatal(err)
		}
		_, cfg, err := config.Load(scheme, conf)
		if err == nil {
			err = config.Validate(&cfg, scheme).ToAggregate()
		}
		if err != nil {
			t.Errorf("%s: Kueue's manager would not start with it: %v", f, err)
		} else {
			t.Logf("%s: Kueue loads it: frameworks %v, %d managed namespaces", f, cfg.Integrations.Frameworks, len(cfg.ManagedJobsNamespaceSelector.MatchExpressions[0].Values))
		}
	}
}

// TestKueueRefuses: the validation bites. A ClusterQueue that borrows with
// no cohort to borrow from, a Configuration naming a framework Kueue does
// not have, and one with a misspelt field are refused.
func TestKueueRefuses(t *testing.T) {
	cq := `apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: bad}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, cpu]
    flavors:
    - name: a100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 8}
      - {name: cpu, nominalQuota: 64}
`
	var q kueue.ClusterQueue
	strict(t, "bad ClusterQueue", []byte(cq), &q)
	if errs := webhooks.ValidateClusterQueue(&q); len(errs) == 0 {
		t.Error("Kueue accepts a borrowingLimit on a ClusterQueue in no cohort")
	}
	var unknown kueue.ClusterQueue
	if err := yaml.UnmarshalStrict([]byte(cq+"  nominalQuotaTypo: 1\n"), &unknown); err == nil || !strings.Contains(err.Error(), "nominalQuotaTypo") {
		t.Errorf("strict decoding accepts an unknown field: %v", err)
	}
	conf := filepath.Join(t.TempDir(), "configuration.yaml")
	if err := os.WriteFile(conf, []byte("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nintegrations:\n  frameworks: [batch/cronjob]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	scheme := kueueScheme(t)
	_, cfg, err := config.Load(scheme, conf)
	if err != nil {
		t.Fatal(err)
	}
	if errs := config.Validate(&cfg, scheme); len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), "batch/cronjob") {
		t.Errorf("Kueue validates a Configuration naming a framework it does not have: %v", errs)
	}
	if err := os.WriteFile(conf, []byte("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nmanageJobsWithoutQueueNames: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := config.Load(scheme, conf); err == nil || !strings.Contains(err.Error(), "manageJobsWithoutQueueNames") {
		t.Errorf("Kueue loads a Configuration with a misspelt field: %v", err)
	}
}

// kueueScheme is the scheme Kueue's manager decodes its Configuration
// with (cmd/kueue's init): Kubernetes', Kueue's and its configuration's
// types, and those of every job integration.
func kueueScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, kueue.AddToScheme, configapi.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	if err := jobframework.ForEachIntegration(func(_ string, cb jobframework.IntegrationCallbacks) error {
		if cb.AddToScheme != nil {
			return cb.AddToScheme(scheme)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return scheme
}

// strict decodes YAML into v, refusing fields v's type does not have.
func strict(t *testing.T, name string, data []byte, v any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(data, v); err != nil {
		t.Fatalf("%s: not Kueue's type: %v", name, err)
	}
}
