//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// holdEnv, set, makes TestCluster start the whole cluster and keep it
// until interrupted: `make cluster`.
const holdEnv = "ACCELC_CLUSTER_HOLD"

// TestCluster is `make cluster`: the cluster of TestStory, started for a
// person to follow docs/delivery.md's walk-through by hand, and kept until
// Ctrl-C. It makes the hetero-prod nodes (KWOK's), publishes their
// NodeFeatures as nfd-worker would, starts a registry, Flux, Gatekeeper,
// Kueue and nfd-master, copies the example's CUE module with its delivery
// pointed at the registry and a signing key Flux trusts, and prints what
// to export. Without $ACCELC_CLUSTER_HOLD it is skipped.
func TestCluster(t *testing.T) {
	if os.Getenv(holdEnv) == "" {
		t.Skipf("skipping: `make cluster` (%s=1) starts the cluster and keeps it for a person", holdEnv)
	}
	begin := time.Now()
	st := startWholeCluster(t)
	s := st.s
	nodes := s.createNodes(t, filepath.Join(st.cluster, "inventory.json"), nil)
	st.waitNodesReady(t, nodes)
	if _, err := s.publishAll(t, st.cluster); err != nil {
		t.Fatal(err)
	}
	// The namespaces the tree writes into but does not make (Open Data
	// Hub's, the GPU Operator's: their installations make them), and the
	// teams' (the tree makes them too).
	s.ensureNamespaces(t, foreignNamespaces(t, s.render(t, st.cluster, "namespaces"))...)
	s.ensureNamespaces(t, "ml-research", "serving-prod", "ds-notebooks")
	// The dev user, bound as a team's member is.
	s.devClient(t)

	fmt.Printf(`
The whole cluster is up (%s): etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, KWOK's kubelets on hetero-prod's %d nodes, nfd-master,
Gatekeeper, Kueue and Flux, and a registry at %s.

  export KUBECONFIG=%s          # the admin
  export DEV_KUBECONFIG=%s      # a team member
  export COSIGN_PASSWORD=e2e-password
  cd %s                        # the admin's CUE (delivery points at the registry)
  KEY=%s

Follow "The whole story on your machine" in docs/delivery.md. Ctrl-C stops it all.
`, time.Since(begin).Round(time.Second), len(nodes), st.registry, s.cp.Kubeconfig(), st.devKube, st.repo, st.f.key)
	ctx, stop := signal.NotifyContext(t.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	fmt.Println("stopping the cluster")
}
