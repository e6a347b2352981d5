package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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
// the nodes. nfd-master serves its metrics and health on every interface
// and no flag changes that, so it runs in a network namespace of its own
// (unshare(1), as root), where the only interface is loopback; socat
// there carries its connections to the API server through a Unix socket
// to the test process, which forwards them to the API server on
// 127.0.0.1. Without nfd-master it skips t, naming `make e2e-tools`, or
// fails t when CI=true.
func (cp *ControlPlane) StartNFDMaster(t testing.TB) *NFDMaster {
	t.Helper()
	bin, err := findNFD()
	if err == nil {
		for _, tool := range []string{"unshare", "socat", "ip"} {
			if _, lerr := exec.LookPath(tool); lerr != nil {
				err = fmt.Errorf("no %s, which runs nfd-master in a network namespace of its own: run `make e2e-tools`", tool)
				break
			}
		}
	}
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
	t.Logf("nfd-master %s: running with -enable-taints in a network namespace of its own", NFDVersion)
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
	api, err := url.Parse(cp.url)
	if err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, "apiserver.sock")
	if err := forwardUnix(ctx, sock, api.Host); err != nil {
		return nil, err
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, err
	}
	// The namespace's loopback comes up; socat listens on it at the API
	// server's port and relays to the socket; sh then becomes nfd-master,
	// so the PID the control plane stops is nfd-master's (socat, in its
	// process group, stops with it).
	script := `ip link set lo up && socat "TCP-LISTEN:$1,bind=127.0.0.1,fork,reuseaddr" "UNIX-CONNECT:$2" & ` +
		`for i in 1 2 3 4 5 6 7 8 9 10; do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && break; sleep 0.1; done; shift 2; exec "$@"`
	args := []string{"--net", "--", "/bin/bash", "-c", script, "sh", api.Port(), sock,
		bin,
		"-kubeconfig=" + kubeconfig,
		"-config=" + conf,
		"-enable-taints",
		"-port=8080",
		"-v=2",
	}
	// nfd-master patches the node it runs on as it starts (its version
	// annotation), and exits if that node is missing: a node stands in
	// for it while it starts, then goes, leaving the cluster's nodes the
	// tests' own. nfd-master logs that its HTTP server starts once it has
	// done so and its informers have synced.
	host := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nfdHostNode}}
	if _, err := client.CoreV1().Nodes().Create(ctx, host, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating node %s for nfd-master: %w", nfdHostNode, err)
	}
	p, err := cp.runEnv("nfd-master", unshare, []string{"KUBERNETES_NAMESPACE=" + NFDNamespace, "NODE_NAME=" + nfdHostNode}, args...)
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
	// nfdStartedLog is nfd-master's log line once it runs.
	nfdStartedLog   = `"http server starting"`
	nfdStartTimeout = time.Minute
)

// LogPath is nfd-master's log file.
func (nm *NFDMaster) LogPath() string { return nm.proc.logPath }

// Tail is the end of nfd-master's log, for failure messages.
func (nm *NFDMaster) Tail() string { return nm.proc.tail() }

// forwardUnix relays connections to a Unix socket at path to addr (the
// API server on 127.0.0.1) until ctx ends.
func forwardUnix(ctx context.Context, path, addr string) error {
	l, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	go func() {
		<-ctx.Done()
		_ = l.Close()
		wg.Wait()
	}()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				up, err := net.Dial("tcp", addr)
				if err != nil {
					return
				}
				defer up.Close()
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
				select {
				case <-done:
				case <-ctx.Done():
				}
			}()
		}
	}()
	return nil
}

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
