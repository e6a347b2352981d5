package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	// NFDVersion is Node Feature Discovery's version, the Makefile's
	// NFD_VERSION: tools/nfd/go.mod requires the same, and the e2e CRDs
	// come from its module.
	NFDVersion = "v0.19.0"

	// NFDNamespace is where nfd-master runs as if in, and where the
	// NodeFeature objects a worker would publish live.
	NFDNamespace = "node-feature-discovery"

	// NFDBinEnv names a directory laid out as bin/nfd-<NFDVersion>
	// (nfd-master), used instead of it.
	NFDBinEnv = "ACCELC_NFD_BIN"

	// NFDUser is nfd-master's identity, in system:masters: a cluster's
	// nfd-master may update every node's labels and taints.
	NFDUser = "accelc-e2e-nfd-master"
)

// NFDMaster is Node Feature Discovery's nfd-master running out of cluster
// against a ControlPlane, with taints enabled.
type NFDMaster struct {
	proc *process
}

// StartNFDMaster starts nfd-master v0.19.0 with -enable-taints, as a
// cluster runs it, against the control plane: it reads the NodeFeature
// objects in NFDNamespace and the NodeFeatureRules, and labels and taints
// the nodes. Its health and metrics server would listen on every
// interface, so it runs with -port=-1, which leaves it none. Without
// nfd-master it skips t, naming `make e2e-tools`, or fails t when CI=true.
func (cp *ControlPlane) StartNFDMaster(t testing.TB) *NFDMaster {
	t.Helper()
	bin, err := findNFD()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, and nfd-master cannot run: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
	nm, err := cp.startNFDMaster(t.Context(), bin)
	if err != nil {
		t.Fatalf("starting nfd-master %s: %v", NFDVersion, err)
	}
	t.Logf("nfd-master %s: running with -enable-taints, listening nowhere (-port=-1)", NFDVersion)
	return nm
}

func (cp *ControlPlane) startNFDMaster(ctx context.Context, bin string) (*NFDMaster, error) {
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return nil, err
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: NFDNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", NFDNamespace, err)
	}
	dir := filepath.Join(cp.dir, "nfd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	kubeconfig, err := cp.managerIdentity(dir, "nfd-master", NFDUser)
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "nfd-master.conf")
	if err := os.WriteFile(conf, []byte("{}\n"), 0o600); err != nil {
		return nil, err
	}
	// nfd-master's health and metrics server listens on :port, every
	// interface, in a goroutine that only logs when it cannot listen:
	// -port=-1 leaves it with no listener at all, and the log line says
	// so once its caches have synced.
	args := []string{
		"-kubeconfig=" + kubeconfig,
		"-config=" + conf,
		"-enable-taints",
		"-enable-leader-election=false",
		"-port=-1",
		"-v=2",
	}
	// nfd-master reads the node it runs on as it starts and exits when
	// that node is missing: a node stands in while it starts, then goes,
	// leaving the cluster's nodes the tests' own.
	host := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nfdHostNode}}
	if _, err := client.CoreV1().Nodes().Create(ctx, host, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating node %s for nfd-master: %w", nfdHostNode, err)
	}
	p, err := cp.runEnv("nfd-master", bin, []string{"KUBERNETES_NAMESPACE=" + NFDNamespace, "NODE_NAME=" + nfdHostNode}, args...)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, nfdStartTimeout)
	defer cancel()
	if err := cp.waitFor(sctx, p, func(context.Context) error {
		data, err := os.ReadFile(p.logPath)
		if err != nil {
			return err
		}
		if !strings.Contains(string(data), nfdStartedLog) {
			return fmt.Errorf("its log does not say %q yet", nfdStartedLog)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := client.CoreV1().Nodes().Delete(ctx, nfdHostNode, metav1.DeleteOptions{}); err != nil {
		return nil, fmt.Errorf("deleting node %s: %w", nfdHostNode, err)
	}
	return &NFDMaster{proc: p}, nil
}

const (
	// nfdHostNode is the node nfd-master takes itself to run on.
	nfdHostNode = "accelc-e2e-nfd-master"
	// nfdStartedLog is nfd-master's log line once its caches synced and
	// its (refused) HTTP server has given up: it runs, listening nowhere.
	nfdStartedLog   = `"http server stopped"`
	nfdStartTimeout = time.Minute
)

// LogPath is nfd-master's log file.
func (nm *NFDMaster) LogPath() string { return nm.proc.logPath }

// Tail is the end of nfd-master's log, for failure messages.
func (nm *NFDMaster) Tail() string { return nm.proc.tail() }

// findNFD looks for nfd-master in $ACCELC_NFD_BIN or bin/nfd-<NFDVersion>.
func findNFD() (string, error) {
	dir := os.Getenv(NFDBinEnv)
	where := "$" + NFDBinEnv + "=" + dir
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin", "nfd-"+NFDVersion)
		where = dir
	}
	bin := filepath.Join(dir, "nfd-master")
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", errors.New(strings.Join([]string{"no nfd-master", NFDVersion, "in", where, "(run `make e2e-tools` to build it, or set", NFDBinEnv, "to a directory laid out the same)"}, " "))
	}
	return bin, nil
}
