//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/catalog"
)

// nodeStageCluster is a cluster at dryrun whose MIG config cuts the A100
// node a100-mig-1 into 3g.40gb slices; STAGE is the config's own stage.
const nodeStageCluster = `package lab

cluster: {
	name: "lab"
	mig: configs: "a100-3g": {acceleratorType: "nvidia-a100-80gb", nodes: ["a100-mig-1"], layout: "3g.40gb": 2, enforcement: "STAGE"}
}
profiles: "inference-3g": {displayName: "Inference (A100 3g.40gb)", acceleratorTypes: ["nvidia-a100-80gb"], mig: "3g.40gb"}
teams: serving: {namespaces: ["serving"], profiles: ["inference-3g"]}
`

// nodeStageNodes: the GPU Operator has put its default MIG config on the
// node, as it does on every MIG-capable node.
const nodeStageNodes = `{"kind": "NodeList", "items": [
  {"metadata": {"name": "a100-mig-1", "labels": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "81920", "nvidia.com/mig.config": "all-disabled"}},
   "status": {"capacity": {"nvidia.com/gpu": "8"}, "conditions": [{"type": "Ready", "status": "True"}]}}
]}`

// TestNodeStageDryRun: a dry-run commit that gives an A100 node a MIG
// config changes none of its labels or taints once nfd-master has applied
// the tree's node rules (the node is typed, so the rules were read), and
// `accelc audit --live` names the node, its label from all-disabled to the
// config, and the two GPU pods on it the MIG manager would evict. Moved
// to deny, the config's label reaches the node: what the dry run held
// back.
func TestNodeStageDryRun(t *testing.T) {
	s := newSuite(t)
	s.cp = controlplane.Start(t)
	s.connect(t)
	s.installCRDs(t)
	s.nfd = s.cp.StartNFDMaster(t)
	s.ensureNamespaces(t, append(systemNamespaces, "serving")...)
	ctx := t.Context()

	dir := filepath.Join(s.work, "lab")
	nodesFile := filepath.Join(s.work, "nodes.json")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(nodesFile, []byte(nodeStageNodes), 0o644); err != nil {
		t.Fatal(err)
	}
	s.createNodes(t, nodesFile, nil)
	cat, err := catalog.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	pci, err := pciOf(cat, "nvidia-a100-80gb", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.publishNodeFeatures(ctx, "a100-mig-1", pci); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"llm-0", "llm-1"} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "serving"},
			Spec: corev1.PodSpec{NodeName: "a100-mig-1", Containers: []corev1.Container{{Name: "main", Image: "registry.example/llm:1",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}}}}},
		}
		if _, err := s.client.CoreV1().Pods("serving").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// commit renders the cluster with the MIG config at stage and applies
	// its node layer (nodes/, sharing/) as Flux's Kustomization would.
	commit := func(stage string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "cluster.cue"), []byte(strings.Replace(nodeStageCluster, "STAGE", stage, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(s.work, "render-"+stage)
		if _, errOut, err := run(ctx, s.root, s.accelc, "render", dir, "--inventory", nodesFile, "--output-dir", out, "--revision", revision); err != nil {
			t.Fatalf("accelc render at %s: %v\n%s", stage, err, errOut)
		}
		for _, sub := range []string{"nodes", "sharing"} {
			s.mustKubectl(t, "apply", "--server-side", "--field-manager=accelc-e2e", "--force-conflicts", "-k", filepath.Join(out, sub))
		}
	}
	node := func(ctx context.Context) (*corev1.Node, error) {
		return s.client.CoreV1().Nodes().Get(ctx, "a100-mig-1", metav1.GetOptions{})
	}
	described := func(n *corev1.Node) string {
		return fmt.Sprintf("labels %v, taints %v", n.Labels, n.Spec.Taints)
	}

	commit("dryrun")
	var typed *corev1.Node
	err = poll(ctx, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		n, err := node(ctx)
		if err != nil {
			return false, "", err
		}
		typed = n
		return n.Labels["accelerator.opendatahub.io/type"] == "nvidia-a100-80gb", described(n), nil
	})
	if err != nil {
		t.Fatalf("nfd-master did not type the node from the dry run's rules: %v", err)
	}
	if got := typed.Labels["nvidia.com/mig.config"]; got != "all-disabled" {
		t.Errorf("the dry run changed the node's MIG config label to %q (the MIG manager would repartition it): %s", got, described(typed))
	}
	if _, ok := typed.Labels["accelerator.opendatahub.io/pool"]; ok {
		t.Errorf("the dry run put the pool label on the node: %s", described(typed))
	}
	for _, taint := range typed.Spec.Taints {
		if taint.Key == "accelerator.opendatahub.io/pool" {
			t.Errorf("the dry run tainted the node: %s", described(typed))
		}
	}
	t.Logf("after the dry run, nfd-master typed the node and left the rest: %s", described(typed))

	stdout, errOut, err := run(ctx, s.root, s.accelc, "audit", dir, "--live", "--kubeconfig", s.cp.Kubeconfig())
	if err != nil {
		t.Fatalf("accelc audit --live: %v\n%s%s", err, stdout, errOut)
	}
	for _, want := range []string{
		`node a100-mig-1: MIG config a100-3g at dryrun (cluster.mig.configs.a100-3g.enforcement): withheld until cluster.mig.configs.a100-3g.enforcement is "deny"`,
		"label nvidia.com/mig.config: all-disabled → a100-3g",
		"- Pod serving/llm-0 (2 nvidia.com/gpu): the MIG manager evicts it to repartition the node's GPUs",
		"- Pod serving/llm-1 (2 nvidia.com/gpu): the MIG manager evicts it to repartition the node's GPUs",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("accelc audit --live does not say %q:\n%s", want, stdout)
		}
	}

	// At deny the rule reaches the node: the dry run above could have
	// changed it.
	commit("deny")
	err = poll(ctx, 30*time.Second, func(ctx context.Context) (bool, string, error) {
		n, err := node(ctx)
		if err != nil {
			return false, "", err
		}
		return n.Labels["nvidia.com/mig.config"] == "a100-3g" && n.Labels["accelerator.opendatahub.io/pool"] == "a100-3g", described(n), nil
	})
	if err != nil {
		t.Fatalf("at deny, nfd-master did not put the MIG config label on the node: %v", err)
	}
}
