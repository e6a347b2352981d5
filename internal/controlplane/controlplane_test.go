package controlplane_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/accelc/accelc/internal/controlplane"
	_ "github.com/accelc/accelc/internal/testutil"
)

// gpuNode is a node as a GPU node's kubelet and the GPU operator leave it,
// without its status: the API server drops status on create.
func gpuNode(name string) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"kubernetes.io/hostname":   name,
				"nvidia.com/gpu.product":   "NVIDIA-H100-80GB-HBM3",
				"nvidia.com/gpu.count":     "8",
				"nvidia.com/mig.strategy":  "single",
				"node.kubernetes.io/class": "gpu",
			},
		},
	}
}

func gpuCapacity() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("96"),
		corev1.ResourceMemory: resource.MustParse("1Ti"),
		corev1.ResourcePods:   resource.MustParse("110"),
		"nvidia.com/gpu":      resource.MustParse("8"),
	}
}

// createGPUNode creates the node, then sets its capacity and allocatable
// through the status subresource, as a kubelet does.
func createGPUNode(ctx context.Context, t *testing.T, client kubernetes.Interface, name string) *corev1.Node {
	t.Helper()
	node, err := client.CoreV1().Nodes().Create(ctx, gpuNode(name), metav1.CreateOptions{})
	require.NoError(t, err)
	node.Status.Capacity = gpuCapacity()
	node.Status.Allocatable = gpuCapacity()
	node.Status.Conditions = []corev1.NodeCondition{{
		Type:               corev1.NodeReady,
		Status:             corev1.ConditionTrue,
		Reason:             "KubeletReady",
		LastHeartbeatTime:  metav1.Now(),
		LastTransitionTime: metav1.Now(),
	}}
	node, err = client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	require.NoError(t, err)
	return node
}

func TestControlPlane(t *testing.T) {
	t.Parallel()
	cp := controlplane.Start(t)
	ctx := t.Context()

	// The admin kubeconfig is a file any client can load, by its context.
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: cp.Kubeconfig()},
		&clientcmd.ConfigOverrides{CurrentContext: controlplane.ContextName},
	).ClientConfig()
	require.NoError(t, err)
	assert.Equal(t, cp.URL(), cfg.Host)
	assert.Regexp(t, `^https://127\.0\.0\.1:\d+$`, cp.URL())
	client, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)

	createGPUNode(ctx, t, client, "gpu-a")
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, nodes.Items, 1)
	got := nodes.Items[0]
	assert.Equal(t, "gpu-a", got.Name)
	assert.Equal(t, "NVIDIA-H100-80GB-HBM3", got.Labels["nvidia.com/gpu.product"])
	gpus := got.Status.Capacity["nvidia.com/gpu"]
	assert.Equal(t, int64(8), gpus.Value())
	gpus = got.Status.Allocatable["nvidia.com/gpu"]
	assert.Equal(t, int64(8), gpus.Value())

	// A user RBAC binds nothing to may not list pods, and the error says so.
	limited, err := kubernetes.NewForConfig(cp.UserRESTConfig(t, "alice", "accelc:viewers"))
	require.NoError(t, err)
	_, err = limited.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	require.Error(t, err)
	assert.True(t, apierrors.IsForbidden(err), "want Forbidden, got %v", err)
	assert.Contains(t, err.Error(), `User "alice" cannot list resource "pods"`)

	// The same user through a kubeconfig file, for commands that take one.
	userCfg, err := clientcmd.BuildConfigFromFlags("", cp.UserKubeconfig(t, "bob"))
	require.NoError(t, err)
	bob, err := kubernetes.NewForConfig(userCfg)
	require.NoError(t, err)
	_, err = bob.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	assert.True(t, apierrors.IsForbidden(err), "want Forbidden, got %v", err)
}

func TestControlPlaneWithScheduler(t *testing.T) {
	t.Parallel()
	cp := controlplane.Start(t, controlplane.WithScheduler())
	ctx := t.Context()
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)

	node := createGPUNode(ctx, t, client, "gpu-a")
	// With no node lifecycle controller, nothing lifts the not-ready taint
	// the TaintNodesByCondition admission plugin put on the new node.
	node.Spec.Taints = nil
	_, err = client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
	require.NoError(t, err)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "train",
				Image: "registry.example/train:v1",
				Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")},
				},
			}},
		},
	}
	_, err = client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.Spec.NodeName != "", nil
	})
	require.NoError(t, err, "the scheduler did not bind the pod")
	got, err := client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, "gpu-a", got.Spec.NodeName)
}

// The Makefile builds, and tools/e2e pins, the version the package looks
// for.
func TestVersionsAgree(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`(?m)^K8S_VERSION\s*:=\s*`+regexp.QuoteMeta(controlplane.K8sVersion)+`\s*$`), string(makefile))
	gomod, err := os.ReadFile(filepath.Join("..", "..", "tools", "e2e", "go.mod"))
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`(?m)^\s*(require\s+)?k8s\.io/kubernetes\s+`+regexp.QuoteMeta(controlplane.K8sVersion)+`\s*$`), string(gomod))
	// The older minor: its own Makefile variable and module.
	assert.Regexp(t, regexp.MustCompile(`(?m)^K8S_OLDER_VERSION\s*:=\s*`+regexp.QuoteMeta(controlplane.OlderK8sVersion)+`\s*$`), string(makefile))
	older, err := os.ReadFile(filepath.Join("..", "..", "tools", "e2e-k8s134", "go.mod"))
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`(?m)^\s*(require\s+)?k8s\.io/kubernetes\s+`+regexp.QuoteMeta(controlplane.OlderK8sVersion)+`\s*$`), string(older))
}

// Gatekeeper's manager is the gator CLI's version: the Makefile's
// GATOR_VERSION, and what tools/gatekeeper pins.
func TestGatekeeperVersionsAgree(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`(?m)^GATOR_VERSION\s*:=\s*`+regexp.QuoteMeta(controlplane.GatekeeperVersion)+`\s*$`), string(makefile))
	gomod, err := os.ReadFile(filepath.Join("..", "..", "tools", "gatekeeper", "go.mod"))
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`(?m)^\s*(require\s+)?github\.com/open-policy-agent/gatekeeper/v3\s+`+regexp.QuoteMeta(controlplane.GatekeeperVersion)+`\s*$`), string(gomod))
}

// Kueue's manager and CRDs are one version: the Makefile's KUEUE_VERSION,
// what tools/kueue pins, and the module e2e-tools takes the CRDs from.
func TestKueueVersionsAgree(t *testing.T) {
	makefile, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`(?m)^KUEUE_VERSION\s*:=\s*`+regexp.QuoteMeta(controlplane.KueueVersion)+`\s*$`), string(makefile))
	gomod, err := os.ReadFile(filepath.Join("..", "..", "tools", "kueue", "go.mod"))
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`(?m)^\s*(require\s+)?sigs\.k8s\.io/kueue\s+`+regexp.QuoteMeta(controlplane.KueueVersion)+`\s*$`), string(gomod))
	script, err := os.ReadFile(filepath.Join("..", "..", "hack", "e2e-tools.sh"))
	require.NoError(t, err)
	assert.Contains(t, string(script), `"sigs.k8s.io/kueue@$KUEUE_VERSION `)
}

// The README's supported-versions table names the versions the end-to-end
// suite runs: both Kubernetes versions, Gatekeeper, Kueue and Flux's
// controllers.
func TestREADMESupportedVersions(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	_, table, ok := strings.Cut(string(readme), "\n## Supported versions\n")
	require.True(t, ok, "README.md has no Supported versions section")
	table, _, _ = strings.Cut(table, "\n## ")
	for _, v := range []string{controlplane.K8sVersion, controlplane.OlderK8sVersion, controlplane.GatekeeperVersion, controlplane.KueueVersion, controlplane.FluxVersion} {
		assert.Contains(t, table, v, "README.md's Supported versions does not name %s", v)
	}
	assert.Contains(t, table, "make e2e-older", "the table says which target proves the older minor")
}
