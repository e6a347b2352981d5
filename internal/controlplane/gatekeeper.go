package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/render"
)

const (
	// GatekeeperVersion is the version of Gatekeeper's controller manager,
	// the one of the gator CLI the Makefile pins (GATOR_VERSION);
	// tools/gatekeeper/go.mod requires the same.
	GatekeeperVersion = "v3.23.1"

	// GatekeeperNamespace is the namespace Gatekeeper runs as if in
	// (POD_NAMESPACE); its webhooks leave it alone.
	GatekeeperNamespace = "gatekeeper-system"

	// GatekeeperBinEnv names a directory holding Gatekeeper's manager and its
	// CRDs (crds/*.yaml), used instead of bin/gatekeeper-<GatekeeperVersion>.
	GatekeeperBinEnv = "ACCELC_GATEKEEPER_BIN"

	// ValidatingWebhookName and MutatingWebhookName name the webhook
	// configurations, as Gatekeeper's own manifests do.
	ValidatingWebhookName = "gatekeeper-validating-webhook-configuration"
	MutatingWebhookName   = "gatekeeper-mutating-webhook-configuration"

	// GatekeeperUser is the identity the manager uses, in system:masters:
	// a cluster's Gatekeeper has a ClusterRole as wide.
	GatekeeperUser = "accelc-e2e-gatekeeper"

	// AuditInterval is how often Gatekeeper's audit runs here unless
	// WithGatekeeperValues says otherwise: often, for the tests that
	// wait for an audit's results.
	AuditInterval = 5 * time.Second

	// gatekeeperStartTimeout bounds Gatekeeper's start-up: on two busy
	// cores its first readiness takes a while.
	gatekeeperStartTimeout = 3 * time.Minute
	// webhookTimeout is the API server's wait for each webhook call.
	webhookTimeout = 10
)

// crdGVR is the resource of CustomResourceDefinitions.
var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// Gatekeeper is Gatekeeper's controller manager running out of cluster
// against a ControlPlane: the validating and mutating admission webhook,
// audit and status, with the webhook configurations pointing at it.
type Gatekeeper struct {
	cp        *ControlPlane
	webhook   string // https://127.0.0.1:PORT
	health    string // http://127.0.0.1:PORT
	proc      *process
	values    *render.GatekeeperHelmValues
	pprofPort int // with WithGatekeeperProfiling; 0 without
}

// GatekeeperOption configures StartGatekeeper.
type GatekeeperOption func(*Gatekeeper) error

// WithGatekeeperValues runs Gatekeeper as its Helm chart installs it with
// the values (the values.yaml of the ConfigMap render.GatekeeperValuesName
// accelc renders; docs/scale.md): the audit's interval and scope, the
// webhooks' rules, matchConditions and exempt namespaces. Without it the
// webhooks take every resource (the chart's default), the mutating one on
// CREATE only, and the audit runs every AuditInterval.
func WithGatekeeperValues(values []byte) GatekeeperOption {
	return func(gk *Gatekeeper) error {
		var v render.GatekeeperHelmValues
		if err := yaml.UnmarshalStrict(values, &v); err != nil {
			return fmt.Errorf("the Gatekeeper Helm values: %w", err)
		}
		gk.values = &v
		return nil
	}
}

// WithGatekeeperProfiling serves Go's profiles from the manager on a free
// port of 127.0.0.1 (its --enable-pprof), at ProfilingURL: for a
// benchmark to say where Gatekeeper's time goes.
func WithGatekeeperProfiling() GatekeeperOption {
	return func(gk *Gatekeeper) error {
		ports, err := freePorts(1)
		if err != nil {
			return err
		}
		gk.pprofPort = ports[0]
		return nil
	}
}

// ProfilingURL is where the manager serves /debug/pprof/, "" unless
// started WithGatekeeperProfiling.
func (gk *Gatekeeper) ProfilingURL() string {
	if gk.pprofPort == 0 {
		return ""
	}
	return "http://127.0.0.1:" + strconv.Itoa(gk.pprofPort)
}

// violationsLimit is how many violations the audit lists per constraint:
// the chart's default (20) where Gatekeeper runs as its chart installs
// it (WithGatekeeperValues; accelc's values do not change it), else 100,
// for the tests that read which pods the audit found.
func (gk *Gatekeeper) violationsLimit() int {
	if gk.values != nil {
		return 20
	}
	return 100
}

// auditArgs are the manager's audit flags, as the chart sets them from
// its values (auditInterval, auditMatchKindOnly).
func (gk *Gatekeeper) auditArgs() []string {
	if gk.values == nil {
		return []string{"--audit-interval=" + strconv.Itoa(int(AuditInterval/time.Second))}
	}
	interval := gk.values.AuditInterval
	if interval == 0 {
		interval = render.GatekeeperAuditInterval // the chart's default
	}
	return []string{"--audit-interval=" + strconv.Itoa(interval), "--audit-match-kind-only=" + strconv.FormatBool(gk.values.AuditMatchKindOnly)}
}

// AuditEvery is how often the manager's audit runs.
func (gk *Gatekeeper) AuditEvery() time.Duration {
	if gk.values == nil {
		return AuditInterval
	}
	if gk.values.AuditInterval == 0 {
		return render.GatekeeperAuditInterval * time.Second
	}
	return time.Duration(gk.values.AuditInterval) * time.Second
}

// StartGatekeeper installs Gatekeeper's CRDs (server-side apply, then waits
// until the API server serves them), starts the manager as the admission
// webhook, audit and status writer, waits until it is ready, then registers
// the validating and mutating webhooks, failing closed: from then on no
// object reaches the API server without Gatekeeper's word. The manager
// stops with the control plane. Without the manager it skips t, naming
// `make e2e-tools`, or fails t when CI=true.
func (cp *ControlPlane) StartGatekeeper(t testing.TB, opts ...GatekeeperOption) *Gatekeeper {
	t.Helper()
	dir, err := findGatekeeper()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, and Gatekeeper is not there: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), gatekeeperStartTimeout)
	defer cancel()
	begin := time.Now()
	gk, err := cp.startGatekeeper(ctx, dir, opts)
	if err != nil {
		t.Fatalf("starting Gatekeeper %s: %v", GatekeeperVersion, err)
	}
	how := "every resource"
	if gk.values != nil {
		how = "as its Helm values say"
	}
	t.Logf("gatekeeper %s: webhook at %s (%s), audit every %s, ready in %s", GatekeeperVersion, gk.webhook, how, gk.AuditEvery(), time.Since(begin).Round(time.Millisecond))
	return gk
}

func (cp *ControlPlane) startGatekeeper(ctx context.Context, dir string, opts []GatekeeperOption) (*Gatekeeper, error) {
	cfg := cp.RESTConfig()
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	crds, err := filepath.Glob(filepath.Join(dir, "crds", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("no CRDs in %s: run `make e2e-tools`", filepath.Join(dir, "crds"))
	}
	if _, err := ApplyCRDs(ctx, dyn, crds...); err != nil {
		return nil, fmt.Errorf("installing Gatekeeper's CRDs: %w", err)
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: GatekeeperNamespace, Labels: map[string]string{"admission.gatekeeper.sh/ignore": "no-self-managing"}},
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", GatekeeperNamespace, err)
	}

	gkDir := filepath.Join(cp.dir, "gatekeeper")
	certDir := filepath.Join(gkDir, "certs")
	auditDir := filepath.Join(gkDir, "audit")
	for _, d := range []string{certDir, auditDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	kubeconfig, err := cp.managerIdentity(gkDir, "gatekeeper-webhook", GatekeeperUser, certDir)
	if err != nil {
		return nil, err
	}

	// The webhook, the health probes and a metrics endpoint nothing
	// listens on (the OpenTelemetry backend needs one; it only ever
	// dials out to it), all on 127.0.0.1.
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	webhookPort, healthPort, otlpPort := ports[0], ports[1], ports[2]
	gk := &Gatekeeper{
		cp:      cp,
		webhook: "https://127.0.0.1:" + strconv.Itoa(webhookPort),
		health:  "http://127.0.0.1:" + strconv.Itoa(healthPort),
	}
	for _, o := range opts {
		if err := o(gk); err != nil {
			return nil, err
		}
	}
	// generate makes the constraint CRDs of the templates.
	operations := "webhook,mutation-webhook,audit,status,mutation-status,generate"
	if gk.values != nil && gk.values.DisableMutation {
		operations = "webhook,audit,status,generate"
	}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--operation=" + operations,
		"--host=127.0.0.1",
		"--port=" + strconv.Itoa(webhookPort),
		"--cert-dir=" + certDir,
		"--disable-cert-rotation",
		"--health-addr=127.0.0.1:" + strconv.Itoa(healthPort),
		"--metrics-addr=0",
		"--metrics-backend=opentelemetry",
		"--otlp-endpoint=127.0.0.1:" + strconv.Itoa(otlpPort),
		"--otlp-metric-interval=1h",
		// Not /tmp/audit, which the audit expects to exist and empties.
		"--api-cache-dir=" + auditDir,
		"--constraint-violations-limit=" + strconv.Itoa(gk.violationsLimit()),
		"--exempt-namespace=" + GatekeeperNamespace,
		"--disable-opa-builtin={http.send}",
		"--log-denies",
		"--shutdown-delay=0",
	}
	args = append(args, gk.auditArgs()...)
	if gk.pprofPort != 0 {
		args = append(args, "--enable-pprof", "--pprof-port="+strconv.Itoa(gk.pprofPort))
	}
	// The pod it runs as owns its status objects, as in a cluster: one
	// that exists, or kube-controller-manager's garbage collector deletes
	// every status as soon as it is written (--debug-use-fake-pod names
	// a pod that does not). A scheduling gate keeps it off every node.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: gatekeeperPod, Namespace: GatekeeperNamespace, Labels: map[string]string{"control-plane": "controller-manager", "gatekeeper.sh/operation": "webhook"}},
		Spec: corev1.PodSpec{
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "accelc.io/out-of-cluster"}},
			Containers:      []corev1.Container{{Name: "manager", Image: "openpolicyagent/gatekeeper:" + GatekeeperVersion}},
		},
	}
	if _, err := client.CoreV1().Pods(GatekeeperNamespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating the pod Gatekeeper runs as: %w", err)
	}
	p, err := cp.runEnv("gatekeeper", filepath.Join(dir, "manager"), []string{"POD_NAMESPACE=" + GatekeeperNamespace, "POD_NAME=" + gatekeeperPod}, args...)
	if err != nil {
		return nil, err
	}
	gk.proc = p
	plain := &http.Client{Timeout: 2 * time.Second}
	if err := cp.waitFor(ctx, p, func(ctx context.Context) error {
		return httpOK(ctx, plain, gk.health+"/readyz")
	}); err != nil {
		return nil, err
	}
	if err := gk.registerWebhooks(ctx, client); err != nil {
		return nil, err
	}
	return gk, nil
}

// gatekeeperPod is the pod Gatekeeper's manager runs as, out of cluster.
const gatekeeperPod = "gatekeeper-controller-manager-0"

// registerWebhooks points the API server's admission at the manager, as
// Gatekeeper's chart does with the values (WithGatekeeperValues), with a
// URL instead of a service and failurePolicy Fail instead of Ignore: a
// test must never pass because a webhook call was skipped.
func (gk *Gatekeeper) registerWebhooks(ctx context.Context, client kubernetes.Interface) error {
	v := gk.values
	if v == nil {
		v = &render.GatekeeperHelmValues{}
	}
	fail := admissionv1.Fail
	exact := admissionv1.Exact
	none := admissionv1.SideEffectClassNone
	cfg := func(path string) admissionv1.WebhookClientConfig {
		return admissionv1.WebhookClientConfig{URL: ref(gk.webhook + path), CABundle: gk.cp.ca.certPEM}
	}
	if !v.DisableMutation {
		// CREATE only, as accelc installs Gatekeeper (docs/scale.md):
		// its mutators would change a running pod's spec on its
		// controllers' UPDATEs, which the API server refuses.
		rules := v.MutatingWebhookCustomRules
		if len(rules) == 0 {
			rules = everyResource([]admissionv1.OperationType{admissionv1.Create}, "*")
		}
		_, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, &admissionv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: MutatingWebhookName, Labels: map[string]string{"gatekeeper.sh/system": "yes"}},
			Webhooks: []admissionv1.MutatingWebhook{{
				Name:                    "mutation.gatekeeper.sh",
				ClientConfig:            cfg("/v1/mutate"),
				Rules:                   rules,
				MatchConditions:         v.MutatingWebhookMatchConditions,
				ObjectSelector:          v.MutatingWebhookObjectSelector,
				FailurePolicy:           &fail,
				MatchPolicy:             &exact,
				NamespaceSelector:       gatekeeperNamespaces(v.MutatingWebhookExemptNamespacesLabels),
				SideEffects:             &none,
				TimeoutSeconds:          ref(int32(webhookTimeout)),
				AdmissionReviewVersions: []string{"v1", "v1beta1"},
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("registering the mutating webhook: %w", err)
		}
	}
	vwc := GatekeeperValidatingWebhook(v, cfg)
	_, err := client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, vwc, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("registering the validating webhook: %w", err)
	}
	return nil
}

// GatekeeperValidatingWebhook is Gatekeeper's validating webhook
// configuration as its chart registers it with values v, calling the
// manager at client(path): validation.gatekeeper.sh with the rules, match
// conditions and namespace selector the values give (every resource,
// CREATE and UPDATE, where they give no rules), and
// check-ignore-label.gatekeeper.sh, which refuses the label
// admission.gatekeeper.sh/ignore on a namespace the manager does not
// exempt (--exempt-namespace): every accelc policy skips a namespace so
// labelled.
func GatekeeperValidatingWebhook(v *render.GatekeeperHelmValues, client func(path string) admissionv1.WebhookClientConfig) *admissionv1.ValidatingWebhookConfiguration {
	rules := v.ValidatingWebhookCustomRules
	if len(rules) == 0 {
		// "*" matches no subresource: ephemeral containers are added
		// through one.
		rules = everyResource([]admissionv1.OperationType{admissionv1.Create, admissionv1.Update}, "*", "pods/ephemeralcontainers")
	}
	fail := admissionv1.Fail
	exact := admissionv1.Exact
	none := admissionv1.SideEffectClassNone
	return &admissionv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ValidatingWebhookName, Labels: map[string]string{"gatekeeper.sh/system": "yes"}},
		Webhooks: []admissionv1.ValidatingWebhook{{
			Name:                    "validation.gatekeeper.sh",
			ClientConfig:            client("/v1/admit"),
			Rules:                   rules,
			MatchConditions:         v.ValidatingWebhookMatchConditions,
			FailurePolicy:           &fail,
			MatchPolicy:             &exact,
			NamespaceSelector:       gatekeeperNamespaces(v.ValidatingWebhookExemptNamespacesLabels),
			SideEffects:             &none,
			TimeoutSeconds:          ref(int32(webhookTimeout)),
			AdmissionReviewVersions: []string{"v1", "v1beta1"},
		}, {
			Name:         "check-ignore-label.gatekeeper.sh",
			ClientConfig: client("/v1/admitlabel"),
			Rules: []admissionv1.RuleWithOperations{{
				Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
				Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"*"}, Resources: []string{"namespaces"}},
			}},
			FailurePolicy: &fail,
			MatchPolicy:   &exact,
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: []string{GatekeeperNamespace}},
			}},
			SideEffects:             &none,
			TimeoutSeconds:          ref(int32(webhookTimeout)),
			AdmissionReviewVersions: []string{"v1", "v1beta1"},
		}},
	}
}

// gatekeeperNamespaces is the chart's namespace selector: namespaces
// labelled to be ignored, Gatekeeper's own, and those the values exempt
// left out.
func gatekeeperNamespaces(exempt map[string][]string) *metav1.LabelSelector {
	notIn := map[string][]string{corev1.LabelMetadataName: {GatekeeperNamespace}}
	for k, vs := range exempt {
		for _, x := range vs {
			if !slices.Contains(notIn[k], x) {
				notIn[k] = append(notIn[k], x)
			}
		}
	}
	sel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "admission.gatekeeper.sh/ignore", Operator: metav1.LabelSelectorOpDoesNotExist}}}
	for _, k := range slices.Sorted(maps.Keys(notIn)) {
		sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpNotIn, Values: notIn[k]})
	}
	return sel
}

// everyResource is a rule for resources of every group and version.
func everyResource(ops []admissionv1.OperationType, resources ...string) []admissionv1.RuleWithOperations {
	return []admissionv1.RuleWithOperations{{
		Operations: ops,
		Rule: admissionv1.Rule{
			APIGroups:   []string{"*"},
			APIVersions: []string{"*"},
			Resources:   resources,
		},
	}}
}

// WebhookURL is the manager's webhook server, https://127.0.0.1:PORT.
func (gk *Gatekeeper) WebhookURL() string { return gk.webhook }

// LogPath is the manager's log file.
func (gk *Gatekeeper) LogPath() string { return gk.proc.logPath }

// Ready reports whether the manager's readiness probe passes: every
// template, constraint and mutator it has seen is loaded.
func (gk *Gatekeeper) Ready(ctx context.Context) error {
	return httpOK(ctx, &http.Client{Timeout: 2 * time.Second}, gk.health+"/readyz")
}

// ApplyCRDs server-side applies the CustomResourceDefinitions in the files
// (multi-document YAML) with field manager accelc-e2e, then waits until
// the API server reports each Established. It returns their names, sorted.
func ApplyCRDs(ctx context.Context, dyn dynamic.Interface, files ...string) ([]string, error) {
	var names []string
	for _, file := range files {
		objs, err := ReadObjects(file)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if obj.GetKind() != "CustomResourceDefinition" {
				return nil, fmt.Errorf("%s: %s %q is not a CustomResourceDefinition", file, obj.GetKind(), obj.GetName())
			}
			if err := applyCRD(ctx, dyn, obj); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			names = append(names, obj.GetName())
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if err := WaitEstablished(ctx, dyn, name); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// applyCRD server-side applies one CRD with field manager accelc-e2e.
func applyCRD(ctx context.Context, dyn dynamic.Interface, obj *unstructured.Unstructured) error {
	data, err := obj.MarshalJSON()
	if err != nil {
		return err
	}
	if _, err := dyn.Resource(crdGVR).Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
		FieldManager: "accelc-e2e",
		Force:        ref(true),
	}); err != nil {
		return fmt.Errorf("applying CRD %s: %w", obj.GetName(), err)
	}
	return nil
}

// WaitEstablished waits until the CRD's Established condition is True.
func WaitEstablished(ctx context.Context, dyn dynamic.Interface, name string) error {
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var last string
	for {
		crd, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
				if m["type"] == "NamesAccepted" && m["status"] == "False" {
					return fmt.Errorf("CRD %s: names not accepted: %v", name, m["message"])
				}
			}
			last = "not Established yet"
		case apierrors.IsNotFound(err):
			last = "not found"
		default:
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not Established: %w (last: %s)", name, ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// ReadObjects decodes every document of a YAML or JSON file, skipping
// empty ones.
func ReadObjects(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

// managerIdentity gives a controller manager run out of cluster what it
// needs to be one: a serving certificate for 127.0.0.1 (name), written as
// tls.crt and tls.key into each of certDirs, and a kubeconfig in dir for
// user, a cluster admin, with a client certificate from the test's CA.
func (cp *ControlPlane) managerIdentity(dir, name, user string, certDirs ...string) (string, error) {
	serving, err := cp.ca.serving(name, []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"})
	if err != nil {
		return "", err
	}
	for _, d := range certDirs {
		for file, data := range map[string][]byte{"tls.crt": serving.certPEM, "tls.key": serving.keyPEM} {
			if err := os.WriteFile(filepath.Join(d, file), data, 0o600); err != nil {
				return "", err
			}
		}
	}
	client, err := cp.ca.client(user, []string{AdminGroup})
	if err != nil {
		return "", err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := cp.writeKubeconfig(kubeconfig, user, client); err != nil {
		return "", err
	}
	return kubeconfig, nil
}

// findGatekeeper looks for the manager and its CRDs in $ACCELC_GATEKEEPER_BIN
// or bin/gatekeeper-<GatekeeperVersion> at the repository root.
func findGatekeeper() (string, error) {
	return findManager("Gatekeeper", GatekeeperVersion, GatekeeperBinEnv)
}

// findManager looks for a controller manager hack/e2e-tools.sh built, in
// $env or bin/<lower-case name>-<version> at the repository root: an
// executable manager, a crds/ folder, and files.
func findManager(name, version, env string, files ...string) (string, error) {
	dir := os.Getenv(env)
	where := "$" + env + "=" + dir
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin", strings.ToLower(name)+"-"+version)
		where = dir
	}
	var missing []string
	if fi, err := os.Stat(filepath.Join(dir, "manager")); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		missing = append(missing, "manager")
	}
	if fi, err := os.Stat(filepath.Join(dir, "crds")); err != nil || !fi.IsDir() {
		missing = append(missing, "crds/")
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("no %s %s in %s (missing %s): run `make e2e-tools` to build it, or set %s to a directory laid out the same",
			name, version, where, strings.Join(missing, ", "), env)
	}
	return dir, nil
}

// ref is a pointer to a copy of v.
func ref[T any](v T) *T { return &v }
