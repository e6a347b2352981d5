package upstream

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	configapi "sigs.k8s.io/kueue/apis/config/v1beta2"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/config"
	"sigs.k8s.io/kueue/pkg/controller/jobframework"
	_ "sigs.k8s.io/kueue/pkg/controller/jobs" // the integrations Kueue's manager registers
	"sigs.k8s.io/kueue/pkg/util/admissioncheck"
	"sigs.k8s.io/kueue/pkg/webhooks"
	"sigs.k8s.io/yaml"
)

// TestKueueAccepts decodes every example's rendered Kueue objects strictly
// into Kueue v0.19.2's own types (a field Kueue does not know is an error,
// where the API server would drop it) and runs each through the
// validation Kueue's webhooks apply: ClusterQueues, Cohorts and
// ResourceFlavors. The end-to-end test creates them through the live
// webhooks too; this catches the same refusals in go test. The
// end-to-end clusters' goldens (testdata/golden-e2e) are read too; each
// AdmissionCheck of Kueue's provisioning controller must resolve to its
// ProvisioningRequestConfig as that controller resolves it (else Kueue
// marks it inactive, and every ClusterQueue listing it), and every check
// a ClusterQueue lists must be rendered beside it.
func TestKueueAccepts(t *testing.T) {
	files, err := filepath.Glob("../../testdata/golden/*/*/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e2e, err := filepath.Glob("../../testdata/golden-e2e/*/*/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, e2e...)
	fleet, err := filepath.Glob("../../testdata/golden-multikueue/*/*/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, fleet...)
	counts := map[string]int{}
	checks := map[string]*admissionChecks{}
	checksOf := func(f string) *admissionChecks {
		dir := filepath.Dir(f)
		if checks[dir] == nil {
			checks[dir] = &admissionChecks{}
		}
		return checks[dir]
	}
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
			if s := cq.Spec.AdmissionChecksStrategy; s != nil {
				for _, rule := range s.AdmissionChecks {
					checksOf(f).listed = append(checksOf(f).listed, listedCheck{queue: f, name: string(rule.Name)})
				}
			}
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
		case "AdmissionCheck":
			ac := &kueue.AdmissionCheck{}
			strict(t, f, data, ac)
			checksOf(f).objs = append(checksOf(f).objs, ac)
		case "ProvisioningRequestConfig":
			prc := &kueue.ProvisioningRequestConfig{}
			strict(t, f, data, prc)
			// The CRD's pattern for the class: a DNS subdomain.
			if msgs := validation.IsDNS1123Subdomain(prc.Spec.ProvisioningClassName); len(msgs) > 0 {
				t.Errorf("%s: provisioningClassName %q: %v", f, prc.Spec.ProvisioningClassName, msgs)
			}
			checksOf(f).objs = append(checksOf(f).objs, prc)
		case "MultiKueueCluster":
			mkc := &kueue.MultiKueueCluster{}
			strict(t, f, data, mkc)
			// The CRD's rules: a kubeconfig from a Secret (or a path), by
			// a name of 1 to 256 characters.
			if kc := mkc.Spec.ClusterSource.KubeConfig; kc == nil || kc.LocationType != kueue.SecretLocationType || kc.Location == "" || len(kc.Location) > 256 {
				t.Errorf("%s: clusterSource %+v is not a kubeconfig Secret", f, mkc.Spec.ClusterSource)
			}
			checksOf(f).objs = append(checksOf(f).objs, mkc)
		case "MultiKueueConfig":
			mkconf := &kueue.MultiKueueConfig{}
			strict(t, f, data, mkconf)
			// The CRD's rules: 1 to 20 clusters, each once.
			if n := len(mkconf.Spec.Clusters); n == 0 || n > 20 || len(sets.New(mkconf.Spec.Clusters...)) != n {
				t.Errorf("%s: clusters %v: Kueue's CRD takes 1 to 20, each once", f, mkconf.Spec.Clusters)
			}
			checksOf(f).objs = append(checksOf(f).objs, mkconf)
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
	if counts["ClusterQueue"] == 0 || counts["Cohort"] == 0 || counts["ResourceFlavor"] == 0 || counts["AdmissionCheck"] == 0 || counts["ProvisioningRequestConfig"] == 0 {
		t.Fatalf("found %v under testdata/golden and golden-e2e: want ClusterQueues, Cohorts, ResourceFlavors, AdmissionChecks and ProvisioningRequestConfigs (run from tools/upstream)", counts)
	}
	for dir, c := range checks {
		c.resolve(t, dir)
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
	for _, more := range []string{"golden-multikueue", "golden-e2e"} {
		found, err := filepath.Glob("../../testdata/" + more + "/*/queues/configmap-accelc-kueue-configuration.yaml")
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, found...)
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

// admissionChecks are one rendered tree's AdmissionChecks and
// ProvisioningRequestConfigs, and the checks its ClusterQueues list.
type admissionChecks struct {
	objs   []client.Object
	listed []listedCheck
}

type listedCheck struct{ queue, name string }

// resolve runs Kueue's own lookup (the ConfigHelper its provisioning
// controller marks an AdmissionCheck active with) on a fake client
// holding the tree's objects.
func (c *admissionChecks) resolve(t *testing.T, dir string) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(c.objs...).Build()
	helper, err := admissioncheck.NewConfigHelper[*kueue.ProvisioningRequestConfig](cl)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, obj := range c.objs {
		ac, ok := obj.(*kueue.AdmissionCheck)
		if !ok {
			continue
		}
		names[ac.Name] = true
		if ac.Spec.ControllerName == kueue.MultiKueueControllerName {
			c.resolveMultiKueue(t, dir, cl, ac)
			continue
		}
		if ac.Spec.ControllerName != kueue.ProvisioningRequestControllerName {
			t.Errorf("%s: AdmissionCheck %s has controller %q, not Kueue's provisioning controller", dir, ac.Name, ac.Spec.ControllerName)
			continue
		}
		prc, err := helper.ConfigForAdmissionCheck(context.Background(), kueue.AdmissionCheckReference(ac.Name))
		if err != nil {
			t.Errorf("%s: Kueue's provisioning controller would mark AdmissionCheck %s inactive: %v", dir, ac.Name, err)
			continue
		}
		t.Logf("%s: AdmissionCheck %s resolves to ProvisioningRequestConfig %s (class %s)", dir, ac.Name, prc.Name, prc.Spec.ProvisioningClassName)
	}
	for _, l := range c.listed {
		if !names[l.name] {
			t.Errorf("%s lists AdmissionCheck %s, which is not rendered beside it: Kueue would keep the ClusterQueue inactive", l.queue, l.name)
		}
	}
}

// resolveMultiKueue runs the lookup Kueue's MultiKueue controller marks
// an AdmissionCheck active with (its MultiKueueConfig, by parameters),
// and checks every cluster the config lists is a MultiKueueCluster
// rendered beside it: Kueue reports a missing one and, with none usable,
// keeps the check and its ClusterQueues inactive.
func (c *admissionChecks) resolveMultiKueue(t *testing.T, dir string, cl client.Client, ac *kueue.AdmissionCheck) {
	t.Helper()
	helper, err := admissioncheck.NewConfigHelper[*kueue.MultiKueueConfig](cl)
	if err != nil {
		t.Fatal(err)
	}
	// The CRD's pattern for spec.parameters.name, which the Go type
	// does not carry: a DNS label.
	if msgs := validation.IsDNS1123Label(ac.Spec.Parameters.Name); len(msgs) > 0 {
		t.Errorf("%s: AdmissionCheck %s: parameters.name %q: %v", dir, ac.Name, ac.Spec.Parameters.Name, msgs)
	}
	cfg, err := helper.ConfigFromRef(context.Background(), ac.Spec.Parameters)
	if err != nil {
		t.Errorf("%s: Kueue's MultiKueue controller would mark AdmissionCheck %s inactive (BadConfig): %v", dir, ac.Name, err)
		return
	}
	clusters := map[string]bool{}
	for _, obj := range c.objs {
		if mkc, ok := obj.(*kueue.MultiKueueCluster); ok {
			clusters[mkc.Name] = true
		}
	}
	for _, name := range cfg.Spec.Clusters {
		if !clusters[name] {
			t.Errorf("%s: MultiKueueConfig %s lists cluster %s, which is not rendered beside it", dir, cfg.Name, name)
		}
	}
	t.Logf("%s: AdmissionCheck %s resolves to MultiKueueConfig %s (clusters %v)", dir, ac.Name, cfg.Name, cfg.Spec.Clusters)
}

// strict decodes YAML into v, refusing fields v's type does not have.
func strict(t *testing.T, name string, data []byte, v any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(data, v); err != nil {
		t.Fatalf("%s: not Kueue's type: %v", name, err)
	}
}

// TestKueueRefusesBadCheck: the lookup bites. An AdmissionCheck whose
// parameters name another kind, or a config that is not there, does not
// resolve.
func TestKueueRefusesBadCheck(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := kueue.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	check := func(kind, name string) *kueue.AdmissionCheck {
		ac := &kueue.AdmissionCheck{Spec: kueue.AdmissionCheckSpec{
			ControllerName: kueue.ProvisioningRequestControllerName,
			Parameters:     &kueue.AdmissionCheckParametersReference{APIGroup: "kueue.x-k8s.io", Kind: kind, Name: name},
		}}
		ac.Name = kind + "-" + name
		return ac
	}
	prc := &kueue.ProvisioningRequestConfig{Spec: kueue.ProvisioningRequestConfigSpec{ProvisioningClassName: "check-capacity.autoscaling.x-k8s.io"}}
	prc.Name = "there"
	wrongKind, missing := check("ProvisioningRequest", "there"), check("ProvisioningRequestConfig", "gone")
	cl := fake.NewClientBuilder().WithScheme(scheme).WithObjects(prc, wrongKind, missing).Build()
	helper, err := admissioncheck.NewConfigHelper[*kueue.ProvisioningRequestConfig](cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, ac := range []*kueue.AdmissionCheck{wrongKind, missing} {
		if _, err := helper.ConfigForAdmissionCheck(context.Background(), kueue.AdmissionCheckReference(ac.Name)); err == nil {
			t.Errorf("AdmissionCheck %s resolves", ac.Name)
		}
	}
}
