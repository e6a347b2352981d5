package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	// KWOKVersion is KWOK's version, the Makefile's KWOK_VERSION:
	// tools/kwok/go.mod requires the same.
	KWOKVersion = "v0.8.0"

	// KWOKBinEnv names a directory laid out as bin/kwok-<KWOKVersion>
	// (kwok and stages/), used instead of it.
	KWOKBinEnv = "ACCELC_KWOK_BIN"

	// KWOKNodeAnnotation, set to "fake", is what makes a node KWOK's: its
	// simulated kubelet keeps the node Ready, renews its lease and runs the
	// pods bound to it. Nodes without it have no kubelet at all.
	KWOKNodeAnnotation = "kwok.x-k8s.io/node"

	// KWOKUser is kwok's identity, in system:masters as a cluster's
	// kubelets are all-powerful over their own nodes and pods.
	KWOKUser = "accelc-e2e-kwok"

	// PodCompleteDelayAnnotation and PodCompleteJitterAnnotation on a
	// Job's pod say how long after it is Running KWOK makes it succeed:
	// at a time between the two (Go durations); with neither, between one
	// and six seconds. PodCompleteAfter sets both.
	PodCompleteDelayAnnotation  = "pod-complete.stage.kwok.x-k8s.io/delay"
	PodCompleteJitterAnnotation = "pod-complete.stage.kwok.x-k8s.io/jitter-delay"
)

// PodCompleteAfter is the annotations that have KWOK end a Job's pod d
// after it runs.
func PodCompleteAfter(d time.Duration) map[string]string {
	return map[string]string{PodCompleteDelayAnnotation: d.String(), PodCompleteJitterAnnotation: d.String()}
}

// KWOK is KWOK's kwok running out of cluster against a ControlPlane: the
// kubelets of every node annotated KWOKNodeAnnotation=fake.
type KWOK struct {
	proc *process
}

// StartKWOK starts kwok with the Stages `make e2e-tools` copied from its
// module (nodes initialised and heartbeating through leases, bound pods
// Running, a Job's pods Succeeded, deleted pods gone), managing the nodes
// annotated KWOKNodeAnnotation=fake. It serves nothing: no kubelet port,
// no metrics. It returns once a probe node it made has been taken Ready
// and deleted. Without kwok it skips t, naming `make e2e-tools`, or fails
// t when CI=true.
func (cp *ControlPlane) StartKWOK(t testing.TB) *KWOK {
	t.Helper()
	dir, err := findKWOK()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, and kwok cannot run: %v", err)
		}
		t.Skipf("skipping: %v", err)
	}
	begin := time.Now()
	kw, err := cp.startKWOK(t.Context(), dir)
	if err != nil {
		t.Fatalf("starting kwok %s: %v", KWOKVersion, err)
	}
	t.Logf("kwok %s: simulating the kubelets of nodes annotated %s=fake, ready in %s", KWOKVersion, KWOKNodeAnnotation, time.Since(begin).Round(time.Millisecond))
	return kw
}

const (
	kwokStartTimeout = time.Minute
	// kwokProbeNode is the node start-up makes to see kwok take a node.
	kwokProbeNode = "accelc-e2e-kwok-probe"
	// kwokConfig is kwok's own configuration: node leases of two minutes,
	// renewed every 30 s (a kubelet's are 40 s, renewed every 10 s: a
	// thousand simulated kubelets on two cores cannot keep that pace, and
	// kube-controller-manager's grace period is stretched to match), and
	// sixteen workers where it has four.
	kwokConfig = `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  nodeLeaseDurationSeconds: 120
  nodeLeaseParallelism: 16
  nodePlayStageParallelism: 16
  podPlayStageParallelism: 16
`
	// kwokPodCIDR is where KWOK takes pods' addresses from: room for the
	// benchmark's tens of thousands of pods.
	kwokPodCIDR = "10.128.0.0/12"
)

func (cp *ControlPlane) startKWOK(ctx context.Context, dir string) (*KWOK, error) {
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	if err != nil {
		return nil, err
	}
	home := filepath.Join(cp.dir, "kwok")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, err
	}
	kubeconfig, err := cp.managerIdentity(home, "kwok", KWOKUser)
	if err != nil {
		return nil, err
	}
	stages, err := filepath.Glob(filepath.Join(dir, "stages", "*.yaml"))
	if err != nil || len(stages) == 0 {
		return nil, fmt.Errorf("no Stages in %s: run `make e2e-tools`", filepath.Join(dir, "stages"))
	}
	slices.Sort(stages)
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + KWOKNodeAnnotation + "=fake",
		"--cidr=" + kwokPodCIDR,
		"--node-ip=127.0.0.1",
	}
	conf := filepath.Join(home, "kwok.yaml")
	if err := os.WriteFile(conf, []byte(kwokConfig), 0o600); err != nil {
		return nil, err
	}
	args = append(args, "--config="+conf)
	for _, s := range stages {
		args = append(args, "--config="+s)
	}
	// HOME keeps kwok from reading a person's ~/.kwok/kwok.yaml.
	p, err := cp.runEnv("kwok", filepath.Join(dir, "kwok"), []string{"HOME=" + home}, args...)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, kwokStartTimeout)
	defer cancel()
	probe := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        kwokProbeNode,
		Annotations: map[string]string{KWOKNodeAnnotation: "fake"},
	}}
	if _, err := client.CoreV1().Nodes().Create(sctx, probe, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating probe node %s: %w", kwokProbeNode, err)
	}
	if err := cp.waitFor(sctx, p, func(ctx context.Context) error {
		n, err := client.CoreV1().Nodes().Get(ctx, kwokProbeNode, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !NodeReady(n) {
			return errors.New("kwok has not made the probe node Ready yet")
		}
		lease, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, kwokProbeNode, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("the probe node has no lease yet: %w", err)
		}
		if !leaseHeld(lease) {
			return errors.New("the probe node's lease is not renewed yet")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := client.CoreV1().Nodes().Delete(ctx, kwokProbeNode, metav1.DeleteOptions{}); err != nil {
		return nil, fmt.Errorf("deleting probe node %s: %w", kwokProbeNode, err)
	}
	return &KWOK{proc: p}, nil
}

func leaseHeld(l *coordinationv1.Lease) bool {
	return l.Spec.RenewTime != nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != ""
}

// NodeReady reports whether the node's Ready condition is True.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// LogPath is kwok's log file.
func (kw *KWOK) LogPath() string { return kw.proc.logPath }

// Tail is the end of kwok's log, for failure messages.
func (kw *KWOK) Tail() string { return kw.proc.tail() }

// findKWOK looks for kwok and its Stages in $ACCELC_KWOK_BIN or
// bin/kwok-<KWOKVersion>.
func findKWOK() (string, error) {
	dir := os.Getenv(KWOKBinEnv)
	where := "$" + KWOKBinEnv + "=" + dir
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin", "kwok-"+KWOKVersion)
		where = dir
	}
	var missing []string
	if fi, err := os.Stat(filepath.Join(dir, "kwok")); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		missing = append(missing, "kwok")
	}
	if fi, err := os.Stat(filepath.Join(dir, "stages")); err != nil || !fi.IsDir() {
		missing = append(missing, "stages/")
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("no KWOK %s in %s (missing %s): run `make e2e-tools` to build it, or set %s to a directory laid out the same",
			KWOKVersion, where, strings.Join(missing, ", "), KWOKBinEnv)
	}
	return dir, nil
}
