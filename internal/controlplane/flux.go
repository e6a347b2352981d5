package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

const (
	// FluxVersion is the version of Flux's source-controller and
	// kustomize-controller and of their CRDs, the Makefile's FLUX_VERSION:
	// the version of the source-controller/api and kustomize-controller/api
	// modules accelc renders with; tools/flux/go.mod requires the same.
	FluxVersion = "v1.9.6"

	// FluxNamespace is the namespace the controllers run as if in
	// (RUNTIME_NAMESPACE), where the rendered Flux objects live.
	FluxNamespace = "flux-system"

	// FluxBinEnv names a directory laid out as bin/flux-<FluxVersion>
	// (source-controller, kustomize-controller, crds/), used instead of it.
	FluxBinEnv = "ACCELC_FLUX_BIN"

	// FluxUser is the identity both controllers use, in system:masters:
	// kustomize-controller applies whatever the tree holds, as a
	// cluster's does with its cluster-admin binding.
	FluxUser = "accelc-e2e-flux"

	fluxStartTimeout = 2 * time.Minute
)

// fluxControllers are the programs of bin/flux-<FluxVersion>.
var fluxControllers = []string{"source-controller", "kustomize-controller"}

// Flux is Flux's source-controller and kustomize-controller running out of
// cluster against a ControlPlane: source-controller pulls OCIRepositories
// into its artifact storage, served on 127.0.0.1, from where
// kustomize-controller fetches and applies them.
type Flux struct {
	// Storage is the artifact server's address (http://127.0.0.1:PORT),
	// which source-controller advertises in each artifact's URL.
	Storage string
	source  *process
	apply   *process
	// Started is how long both took from their start to readiness.
	Started time.Duration
}

// StartFlux installs Flux's CRDs, creates FluxNamespace, starts
// source-controller and kustomize-controller as FluxUser with every
// listener on 127.0.0.1 and no leader election, and waits until both are
// ready. They stop with the control plane. Without them it skips t, naming
// `make e2e-tools`, or fails t when CI=true.
func (cp *ControlPlane) StartFlux(t testing.TB) *Flux {
	t.Helper()
	dir, err := findFlux()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, and Flux's controllers are not there: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), fluxStartTimeout)
	defer cancel()
	fx, err := cp.startFlux(ctx, dir)
	if err != nil {
		t.Fatalf("starting Flux's controllers %s: %v", FluxVersion, err)
	}
	t.Logf("flux source-controller and kustomize-controller %s: artifacts at %s, ready %s after they started", FluxVersion, fx.Storage, fx.Started.Round(time.Millisecond))
	return fx
}

func (cp *ControlPlane) startFlux(ctx context.Context, dir string) (*Flux, error) {
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
	if _, err := ApplyCRDs(ctx, dyn, crds...); err != nil {
		return nil, fmt.Errorf("installing Flux's CRDs: %w", err)
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: FluxNamespace},
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", FluxNamespace, err)
	}

	fxDir := filepath.Join(cp.dir, "flux")
	storage := filepath.Join(fxDir, "storage")
	if err := os.MkdirAll(storage, 0o700); err != nil {
		return nil, err
	}
	kubeconfig, err := cp.managerIdentity(fxDir, "flux", FluxUser)
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(5)
	if err != nil {
		return nil, err
	}
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
	fx := &Flux{Storage: "http://" + addr(0)}
	// The controllers read the kubeconfig from $KUBECONFIG (controller-
	// runtime's GetConfig) and their namespace from $RUNTIME_NAMESPACE.
	env := []string{"KUBECONFIG=" + kubeconfig, "RUNTIME_NAMESPACE=" + FluxNamespace}
	common := []string{"--log-level=debug", "--log-encoding=console", "--enable-leader-election=false"}
	begin := time.Now()
	fx.source, err = cp.runEnv("source-controller", filepath.Join(dir, "source-controller"), env, append(common,
		"--storage-path="+storage,
		"--storage-addr="+addr(0),
		"--storage-adv-addr="+addr(0),
		"--metrics-addr="+addr(1),
		"--health-addr="+addr(2),
	)...)
	if err != nil {
		return nil, err
	}
	fx.apply, err = cp.runEnv("kustomize-controller", filepath.Join(dir, "kustomize-controller"), env, append(common,
		"--metrics-addr="+addr(3),
		"--health-addr="+addr(4),
		// Only what the artifact holds: a kustomization that names a
		// remote base fails rather than fetching it.
		"--no-remote-bases=true",
	)...)
	if err != nil {
		return nil, err
	}
	plain := &http.Client{Timeout: 2 * time.Second}
	for _, w := range []struct {
		p      *process
		health string
	}{{fx.source, addr(2)}, {fx.apply, addr(4)}} {
		if err := cp.waitFor(ctx, w.p, func(ctx context.Context) error {
			return httpOK(ctx, plain, "http://"+w.health+"/readyz")
		}); err != nil {
			return nil, err
		}
	}
	fx.Started = time.Since(begin)
	return fx, nil
}

// LogPaths are the controllers' log files: source-controller's, then
// kustomize-controller's.
func (fx *Flux) LogPaths() []string { return []string{fx.source.logPath, fx.apply.logPath} }

// findFlux looks for the controllers and their CRDs in $ACCELC_FLUX_BIN or
// bin/flux-<FluxVersion> at the repository root.
func findFlux() (string, error) {
	dir := os.Getenv(FluxBinEnv)
	where := "$" + FluxBinEnv + "=" + dir
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin", "flux-"+FluxVersion)
		where = dir
	}
	var missing []string
	for _, c := range fluxControllers {
		if fi, err := os.Stat(filepath.Join(dir, c)); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			missing = append(missing, c)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "crds")); err != nil || !fi.IsDir() {
		missing = append(missing, "crds/")
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("no Flux %s in %s (missing %s): run `make e2e-tools` to build it, or set %s to a directory laid out the same",
			FluxVersion, where, strings.Join(missing, ", "), FluxBinEnv)
	}
	return dir, nil
}
