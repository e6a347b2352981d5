package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/inventory"
)

// TestLiveCommands runs `inventory show --live`, `inventory snapshot --live`
// and `render --live` as a user would, against a real API server holding
// the small-lab example's nodes.
func TestLiveCommands(t *testing.T) {
	cp := controlplane.Start(t)
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	snap, err := inventory.ReadSnapshot("../../examples/clusters/small-lab/inventory.json")
	require.NoError(t, err)
	for _, raw := range snap.Nodes {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: raw.Metadata.Name, Labels: raw.Metadata.Labels}}
		created, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		require.NoError(t, err)
		created.Status.Capacity = corev1.ResourceList{}
		for k, v := range raw.Status.Capacity {
			created.Status.Capacity[corev1.ResourceName(k)] = resource.MustParse(v)
		}
		created.Status.Allocatable = created.Status.Capacity
		created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	_, err = cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "infer"},
		Spec: corev1.PodSpec{NodeName: "lab-l40s-01", Containers: []corev1.Container{{Name: "app", Image: "app",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("3")}}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	run := runMain
	kc := cp.Kubeconfig()

	code, out, errOut := run("inventory", "show", "--live", "--kubeconfig", kc, "--config", "../../examples/clusters/small-lab")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "IN USE")
	assert.Contains(t, out, "NVIDIA L40S 48GB (350W): 2 nodes, 8 GPUs, 5 available")

	file := filepath.Join(t.TempDir(), "inventory.json")
	code, _, errOut = run("inventory", "snapshot", "--live", "--kubeconfig", kc, "-o", file)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "wrote "+file)
	back, err := inventory.ReadSnapshot(file)
	require.NoError(t, err)
	assert.Equal(t, controlplane.ClusterName, back.Source.Cluster)
	assert.True(t, back.Source.PodsCounted)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "127.0.0.1", "no server address in a snapshot")

	outDir := filepath.Join(t.TempDir(), "out")
	code, _, errOut = run("render", "../../examples/clusters/small-lab", "--live", "--kubeconfig", kc, "-o", outDir)
	require.Equal(t, 0, code, errOut)
	_, err = os.Stat(filepath.Join(outDir, "kustomization.yaml"))
	require.NoError(t, err)

	// A user bound to nothing: exit 3, naming the server and the verb.
	code, _, errOut = run("inventory", "show", "--live", "--kubeconfig", cp.UserKubeconfig(t, "intern"))
	assert.Equal(t, exitOutside, code)
	assert.Contains(t, errOut, cp.URL())
	assert.Contains(t, errOut, `RBAC verb "list" on "nodes"`)

	code, _, errOut = run("inventory", "show", "--live", "--inventory", file)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "give one")
}
