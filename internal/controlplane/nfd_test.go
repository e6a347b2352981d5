package controlplane

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// TestNFDMaster runs nfd-master against a control plane: a node whose
// NodeFeature has an NVIDIA GPU gets the label and the taint of a
// NodeFeatureRule that matches it.
// make e2e-tools builds nfd-master, after make test has run: without it,
// the test is skipped here, and make e2e runs nfd-master for every example.
func TestNFDMaster(t *testing.T) {
	if _, err := findNFD(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "bin", "e2e-crds-*", "nfd-api-crds.yaml"))
	if len(files) == 0 {
		t.Skip("skipping: no NFD CRDs under bin/e2e-crds-*: make e2e-tools fetches them")
	}
	cp := Start(t)
	dyn, _ := dynamic.NewForConfig(cp.RESTConfig())
	cs, _ := kubernetes.NewForConfig(cp.RESTConfig())
	if _, err := ApplyCRDs(t.Context(), dyn, files...); err != nil {
		t.Fatal(err)
	}
	nm := cp.StartNFDMaster(t)
	if log := nm.Tail(); !strings.Contains(log, "invalid port") {
		t.Fatalf("nfd-master's HTTP server did not give up on -port=-1 (it would listen on every interface):\n%s", log)
	}
	_, err = cs.CoreV1().Nodes().Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"kubernetes.io/hostname": "n1"}, Annotations: map[string]string{"volumes.kubernetes.io/controller-managed-attach-detach": "true"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nfr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "nfd.k8s-sigs.io/v1alpha1", "kind": "NodeFeatureRule", "metadata": map[string]any{"name": "r"},
		"spec": map[string]any{"rules": []any{map[string]any{"name": "x", "labels": map[string]any{"example.com/gpu": "yes"}, "taints": []any{map[string]any{"key": "example.com/gpu", "value": "true", "effect": "NoSchedule"}},
			"matchFeatures": []any{map[string]any{"feature": "pci.device", "matchExpressions": map[string]any{"vendor": map[string]any{"op": "In", "value": []any{"10de"}}}}}}}}}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "nfd.k8s-sigs.io", Version: "v1alpha1", Resource: "nodefeaturerules"}).Create(t.Context(), nfr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nf := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "nfd.k8s-sigs.io/v1alpha1", "kind": "NodeFeature", "metadata": map[string]any{"name": "n1", "namespace": NFDNamespace, "labels": map[string]any{"nfd.node.kubernetes.io/node-name": "n1"}},
		"spec": map[string]any{"features": map[string]any{"instances": map[string]any{"pci.device": map[string]any{"elements": []any{map[string]any{"attributes": map[string]any{"vendor": "10de", "device": "2330", "class": "0302"}}}}}}}}}
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "nfd.k8s-sigs.io", Version: "v1alpha1", Resource: "nodefeatures"}).Namespace(NFDNamespace).Create(t.Context(), nf, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		n, _ := cs.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{})
		if n != nil && n.Labels["example.com/gpu"] == "yes" && slices.ContainsFunc(n.Spec.Taints, func(x corev1.Taint) bool { return x.Key == "example.com/gpu" && x.Value == "true" }) {
			t.Logf("nfd-master labelled and tainted the node: labels %v, taints %v", n.Labels, n.Spec.Taints)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("nfd-master did not label and taint the node; its log:\n%s", nm.Tail())
}
