package controlplane

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

const (
	// KueueVersion is the version of Kueue's controller manager and CRDs,
	// the Makefile's KUEUE_VERSION; tools/kueue/go.mod requires the same.
	KueueVersion = "v0.19.2"

	// KueueNamespace is the namespace Kueue runs as if in (its
	// Configuration's namespace); its job webhooks leave it alone.
	KueueNamespace = "kueue-system"

	// KueueBinEnv names a directory laid out as bin/kueue-<KueueVersion>
	// (manager, crds/, webhooks.yaml, controller_manager_config.yaml),
	// used instead of it.
	KueueBinEnv = "ACCELC_KUEUE_BIN"

	// KueueUser is the identity the manager uses, in system:masters: a
	// cluster's Kueue has a ClusterRole nearly as wide. Its name is the
	// service account Kueue's own manifests run it as, which accelc's
	// admission policy trusts (alone) to lift Kueue's admission gate
	// (cluster.kueueIdentities.manager).
	KueueUser = "system:serviceaccount:kueue-system:kueue-controller-manager"

	// kueueMetricsCertDir is where Kueue's manager reads its metrics
	// serving certificate when its internal certificate management is off,
	// a path fixed in its main package (cmd/kueue) that no flag or field
	// changes.
	kueueMetricsCertDir = "/etc/kueue/metrics/certs"

	kueueStartTimeout = 3 * time.Minute

	// ProvisioningRequestCRD is cluster-autoscaler's ProvisioningRequest
	// CRD in the Kueue directory, from k8s.io/autoscaler/cluster-autoscaler/apis
	// at the version Kueue's go.mod requires (hack/e2e-tools.sh copies it).
	ProvisioningRequestCRD = "autoscaler/autoscaling.x-k8s.io_provisioningrequests.yaml"
)

// kueueConversionCRDs are the CRDs Kueue's kustomization gives a conversion
// webhook (config/components/crd/kustomization.yaml).
var kueueConversionCRDs = []string{
	"clusterqueues.kueue.x-k8s.io",
	"cohorts.kueue.x-k8s.io",
	"localqueues.kueue.x-k8s.io",
	"multikueueclusters.kueue.x-k8s.io",
	"workloads.kueue.x-k8s.io",
}

// KueueOptions says which jobs the manager manages.
type KueueOptions struct {
	// Namespaces are the namespaces whose jobs and pods Kueue manages
	// (managedJobsNamespaceSelector); at least one, unless Fragment says.
	Namespaces []string
	// Fragment is a Configuration fragment (config.kueue.x-k8s.io/v1beta2,
	// as accelc renders it in its accelc-kueue-configuration ConfigMap)
	// merged into the manager's Configuration as an admin merges it: its
	// top-level fields replace the defaults' and Namespaces'.
	Fragment []byte
	// ProvisioningRequests installs cluster-autoscaler's ProvisioningRequest
	// CRD (autoscaling.x-k8s.io/v1) before the manager starts: Kueue runs
	// its provisioning admission-check controller only where the API
	// serves them when it starts.
	ProvisioningRequests bool
	// Profiling serves Go's profiles from the manager on a free port of
	// 127.0.0.1 (its Configuration's pprofBindAddress), at ProfilingURL:
	// for a benchmark to say where Kueue's time goes.
	Profiling bool
}

// Kueue is Kueue's controller manager running out of cluster against a
// ControlPlane, with its webhooks registered by URL.
type Kueue struct {
	webhook string // https://127.0.0.1:PORT
	health  string // http://127.0.0.1:PORT
	pprof   string // http://127.0.0.1:PORT with KueueOptions.Profiling, else ""
	config  string // the Configuration file it runs with
	proc    *process
	Started time.Duration // from the process's start to its readiness
}

// StartKueue installs all of Kueue's CRDs, starts its manager with the
// batch/job and pod integrations, pods managed only in o.Namespaces, waits
// until it is ready and registers its mutating and validating webhooks (its
// own manifests, with URLs). The manager stops with the control plane.
// Without the manager it skips t, naming `make e2e-tools`, or fails t when
// CI=true.
//
// Kueue's manager, with its internal certificate management off, reads a
// metrics certificate from /etc/kueue/metrics/certs and nowhere else; it runs
// in a mount namespace of its own (unshare(1), which needs root or
// unprivileged user namespaces) where /etc is an overlay whose upper layer,
// in the test's directory, holds that certificate. The host's /etc is left
// untouched.
func (cp *ControlPlane) StartKueue(t testing.TB, o KueueOptions) *Kueue {
	t.Helper()
	dir, err := findKueue()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, and Kueue is not there: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
	if len(o.Namespaces) == 0 && o.Fragment == nil {
		t.Fatal("StartKueue: no namespaces to manage")
	}
	ctx, cancel := context.WithTimeout(t.Context(), kueueStartTimeout)
	defer cancel()
	kq, err := cp.startKueue(ctx, dir, o)
	if err != nil {
		t.Fatalf("starting Kueue %s: %v", KueueVersion, err)
	}
	t.Logf("kueue %s: webhook at %s, ready %s after it started", KueueVersion, kq.webhook, kq.Started.Round(time.Millisecond))
	return kq
}

func (cp *ControlPlane) startKueue(ctx context.Context, dir string, o KueueOptions) (*Kueue, error) {
	cfg := cp.RESTConfig()
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}

	kqDir := filepath.Join(cp.dir, "kueue")
	certDir := filepath.Join(kqDir, "certs")
	// The overlay on /etc: upper holds kueue/metrics/certs; work is
	// overlayfs's own.
	upper := filepath.Join(kqDir, "etc-upper")
	work := filepath.Join(kqDir, "etc-work")
	metricsDir := filepath.Join(upper, strings.TrimPrefix(kueueMetricsCertDir, "/etc/"))
	for _, d := range []string{certDir, metricsDir, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	// The overlay's upper directories must be readable where the manager
	// looks through them.
	for d := metricsDir; d != upper; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			return nil, err
		}
	}
	kubeconfig, err := cp.managerIdentity(kqDir, "kueue-webhook", KueueUser, certDir, metricsDir)
	if err != nil {
		return nil, err
	}

	n := 3
	if o.Profiling {
		n++ // the profiles' port
	}
	ports, err := freePorts(n)
	if err != nil {
		return nil, err
	}
	webhookPort, healthPort, metricsPort, pprofPort := ports[0], ports[1], ports[2], 0
	if o.Profiling {
		pprofPort = ports[3]
	}
	kq := &Kueue{
		webhook: "https://127.0.0.1:" + strconv.Itoa(webhookPort),
		health:  "http://127.0.0.1:" + strconv.Itoa(healthPort),
		config:  filepath.Join(kqDir, "config.yaml"),
	}
	if pprofPort != 0 {
		kq.pprof = "http://127.0.0.1:" + strconv.Itoa(pprofPort)
	}
	conf, err := kueueConfiguration(filepath.Join(dir, "controller_manager_config.yaml"), o, certDir, webhookPort, healthPort, metricsPort, pprofPort)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(kq.config, conf, 0o644); err != nil {
		return nil, err
	}

	crds, err := kueueCRDs(dir, kq.webhook, cp.ca.certPEM)
	if err != nil {
		return nil, err
	}
	if o.ProvisioningRequests {
		objs, err := ReadObjects(filepath.Join(dir, ProvisioningRequestCRD))
		if err != nil {
			return nil, fmt.Errorf("the ProvisioningRequest CRD (run `make e2e-tools`): %w", err)
		}
		crds = append(crds, objs...)
	}
	if err := applyCRDObjects(ctx, dyn, crds); err != nil {
		return nil, fmt.Errorf("installing Kueue's CRDs: %w", err)
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: KueueNamespace},
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", KueueNamespace, err)
	}
	// The service account KueueUser names, as Kueue's manifests make it
	// (accelc status checks that the identity the policies trust is one).
	if _, err := client.CoreV1().ServiceAccounts(KueueNamespace).Create(ctx, &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{Name: strings.TrimPrefix(KueueUser, "system:serviceaccount:"+KueueNamespace+":")},
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating Kueue's service account: %w", err)
	}

	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, fmt.Errorf("no unshare(1) (util-linux), which gives Kueue's manager a mount namespace of its own: %w", err)
	}
	ns := []string{"--mount", "--propagation", "private"}
	if os.Geteuid() != 0 {
		ns = append([]string{"--user", "--map-root-user"}, ns...)
	}
	// sh mounts the overlay, then becomes the manager: the PID the
	// control plane stops is the manager's.
	args := append(ns, "--", "/bin/sh", "-c",
		`mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1,workdir=$2" /etc && shift 2 && exec "$@"`,
		"sh", upper, work,
		filepath.Join(dir, "manager"),
		"--config="+kq.config,
		"--kubeconfig="+kubeconfig,
		"--zap-log-level=2",
	)
	p, err := cp.run("kueue", unshare, args...)
	if err != nil {
		return nil, err
	}
	kq.proc = p
	plain := &http.Client{Timeout: 2 * time.Second}
	if err := cp.waitFor(ctx, p, func(ctx context.Context) error {
		return httpOK(ctx, plain, kq.health+"/readyz")
	}); err != nil {
		return nil, err
	}
	kq.Started = time.Since(p.started)
	if err := kq.registerWebhooks(ctx, dyn, filepath.Join(dir, "webhooks.yaml"), cp.ca.certPEM); err != nil {
		return nil, err
	}
	return kq, nil
}

// ProfilingURL is where the manager serves /debug/pprof/, "" unless
// started with KueueOptions.Profiling.
func (kq *Kueue) ProfilingURL() string { return kq.pprof }

// kueueConfiguration is Kueue's default Configuration with what running out
// of cluster beside a test control plane needs: every server on 127.0.0.1,
// the webhook's certificate from the test's CA, no leader election, no
// visibility API server (it would listen on every interface), and the
// batch/job and pod integrations with jobs managed in the namespaces only;
// Go's profiles on pprofPort, unless it is 0.
func kueueConfiguration(defaults string, o KueueOptions, certDir string, webhookPort, healthPort, metricsPort, pprofPort int) ([]byte, error) {
	data, err := os.ReadFile(defaults)
	if err != nil {
		return nil, err
	}
	var c map[string]any
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", defaults, err)
	}
	loopback := func(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }
	c["namespace"] = KueueNamespace
	c["health"] = map[string]any{"healthProbeBindAddress": loopback(healthPort)}
	c["metrics"] = map[string]any{"bindAddress": loopback(metricsPort)}
	c["webhook"] = map[string]any{"host": "127.0.0.1", "port": webhookPort, "certDir": certDir}
	if pprofPort != 0 {
		c["pprofBindAddress"] = loopback(pprofPort)
	}
	c["leaderElection"] = map[string]any{"leaderElect": false}
	c["internalCertManagement"] = map[string]any{"enable": false}
	c["manageJobsWithoutQueueName"] = false
	c["managedJobsNamespaceSelector"] = map[string]any{"matchExpressions": []any{map[string]any{
		"key": "kubernetes.io/metadata.name", "operator": "In", "values": o.Namespaces,
	}}}
	c["integrations"] = map[string]any{"frameworks": []any{"batch/job", "pod"}}
	c["featureGates"] = map[string]any{"VisibilityOnDemand": false}
	if o.Fragment != nil {
		var f map[string]any
		if err := yaml.Unmarshal(o.Fragment, &f); err != nil {
			return nil, fmt.Errorf("the Configuration fragment: %w", err)
		}
		if f["apiVersion"] != c["apiVersion"] || f["kind"] != c["kind"] {
			return nil, fmt.Errorf("the Configuration fragment is %v %v, not Kueue's %v %v", f["apiVersion"], f["kind"], c["apiVersion"], c["kind"])
		}
		for k, v := range f {
			c[k] = v
		}
	}
	return yaml.Marshal(c)
}

// kueueCRDs reads all of Kueue's CRDs and gives those its kustomization
// gives a conversion webhook one, at the manager's URL.
func kueueCRDs(dir, webhook string, caPEM []byte) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "crds", "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no CRDs in %s: run `make e2e-tools`", filepath.Join(dir, "crds"))
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		objs, err := ReadObjects(f)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if slices.Contains(kueueConversionCRDs, obj.GetName()) {
				conv := map[string]any{
					"strategy": "Webhook",
					"webhook": map[string]any{
						"clientConfig":             map[string]any{"url": webhook + "/convert", "caBundle": base64.StdEncoding.EncodeToString(caPEM)},
						"conversionReviewVersions": []any{"v1"},
					},
				}
				if err := unstructured.SetNestedField(obj.Object, conv, "spec", "conversion"); err != nil {
					return nil, fmt.Errorf("%s: %w", f, err)
				}
			}
			out = append(out, obj)
		}
	}
	return out, nil
}

// registerWebhooks creates the webhook configurations of Kueue's
// config/components/webhook/manifests.yaml as its kustomization makes them
// (names prefixed kueue-; the job webhooks skip kube-system and
// kueue-system), each webhook's service replaced by a URL at the manager.
func (kq *Kueue) registerWebhooks(ctx context.Context, dyn dynamic.Interface, file string, caPEM []byte) error {
	objs, err := ReadObjects(file)
	if err != nil {
		return err
	}
	skipSystem := map[string]any{"matchExpressions": []any{map[string]any{
		"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": []any{"kube-system", KueueNamespace},
	}}}
	for _, obj := range objs {
		kind := obj.GetKind()
		if kind != "MutatingWebhookConfiguration" && kind != "ValidatingWebhookConfiguration" {
			return fmt.Errorf("%s: unexpected %s %q", file, kind, obj.GetName())
		}
		obj.SetName("kueue-" + obj.GetName())
		hooks, _, err := unstructured.NestedSlice(obj.Object, "webhooks")
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		for i, h := range hooks {
			hook, _ := h.(map[string]any)
			path, _, _ := unstructured.NestedString(hook, "clientConfig", "service", "path")
			if path == "" {
				return fmt.Errorf("%s: webhook %v has no service path", file, hook["name"])
			}
			hook["clientConfig"] = map[string]any{"url": kq.webhook + path, "caBundle": base64.StdEncoding.EncodeToString(caPEM)}
			if !kueueOwnKind(hook) {
				hook["namespaceSelector"] = skipSystem
			}
			hooks[i] = hook
		}
		if err := unstructured.SetNestedSlice(obj.Object, hooks, "webhooks"); err != nil {
			return err
		}
		gvr := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: strings.ToLower(kind) + "s"}
		if _, err := dyn.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{FieldManager: "accelc-e2e"}); err != nil {
			return fmt.Errorf("registering %s %s: %w", kind, obj.GetName(), err)
		}
	}
	return nil
}

// kueueOwnKind reports whether a webhook is for Kueue's own kinds, which its
// kustomization leaves without a namespace selector.
func kueueOwnKind(hook map[string]any) bool {
	rules, _, _ := unstructured.NestedSlice(hook, "rules")
	for _, r := range rules {
		groups, _, _ := unstructured.NestedStringSlice(r.(map[string]any), "apiGroups")
		if slices.Contains(groups, "kueue.x-k8s.io") {
			return true
		}
	}
	return false
}

// applyCRDObjects is ApplyCRDs for objects already read.
func applyCRDObjects(ctx context.Context, dyn dynamic.Interface, objs []*unstructured.Unstructured) error {
	var names []string
	for _, obj := range objs {
		if obj.GetKind() != "CustomResourceDefinition" {
			return fmt.Errorf("%s %q is not a CustomResourceDefinition", obj.GetKind(), obj.GetName())
		}
		if err := applyCRD(ctx, dyn, obj); err != nil {
			return err
		}
		names = append(names, obj.GetName())
	}
	for _, name := range names {
		if err := WaitEstablished(ctx, dyn, name); err != nil {
			return err
		}
	}
	return nil
}

// WebhookURL is the manager's webhook server, https://127.0.0.1:PORT.
func (kq *Kueue) WebhookURL() string { return kq.webhook }

// LogPath is the manager's log file.
func (kq *Kueue) LogPath() string { return kq.proc.logPath }

// ConfigPath is the Configuration file the manager runs with.
func (kq *Kueue) ConfigPath() string { return kq.config }

// findKueue looks for the manager and what it needs in $ACCELC_KUEUE_BIN or
// bin/kueue-<KueueVersion> at the repository root.
func findKueue() (string, error) {
	return findManager("Kueue", KueueVersion, KueueBinEnv, "webhooks.yaml", "controller_manager_config.yaml")
}
