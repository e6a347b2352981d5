package live_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/inventory/live"
)

type labels = map[string]string

// cluster is a heterogeneous cluster as GPU Feature Discovery, AMD's
// labeller and Karpenter leave it.
var cluster = []struct {
	name   string
	labels labels
	res    string
	count  string
	cordon bool
}{
	{"h200-01", labels{"nvidia.com/gpu.product": "NVIDIA-H200", "nvidia.com/gpu.count": "8"}, "nvidia.com/gpu", "8", false},
	{"h200-02", labels{"nvidia.com/gpu.product": "NVIDIA-H200", "nvidia.com/gpu.count": "8"}, "nvidia.com/gpu", "8", false},
	{"t4-shared", labels{"nvidia.com/gpu.product": "Tesla-T4-SHARED", "nvidia.com/gpu.count": "1", "nvidia.com/gpu.replicas": "4"}, "nvidia.com/gpu", "4", false},
	{"mi300x-01", labels{"amd.com/gpu.device-id": "74a1"}, "amd.com/gpu", "8", false},
	{"karpenter-a10g", labels{"karpenter.k8s.aws/instance-gpu-name": "a10g", "karpenter.k8s.aws/instance-gpu-manufacturer": "nvidia", "karpenter.k8s.aws/instance-gpu-memory": "24576"}, "nvidia.com/gpu", "4", true},
	{"mystery", labels{}, "nvidia.com/gpu", "2", false},
	{"cpu-01", labels{}, "", "", false},
}

func makeCluster(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	for _, n := range cluster {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: n.labels,
			Annotations: labels{"projectcalico.org/IPv4Address": "10.1.2.3/24"}}}
		node.Spec.Unschedulable = n.cordon
		node.Spec.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}
		created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		require.NoError(t, err)
		capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourcePods: resource.MustParse("110")}
		if n.res != "" {
			capacity[corev1.ResourceName(n.res)] = resource.MustParse(n.count)
		}
		created.Status.Capacity, created.Status.Allocatable = capacity, capacity
		created.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.1.2.3"}}
		created.Status.NodeInfo.SystemUUID = "4C4C4544-0042-3510-8052-B2C04F4E3732"
		created.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue,
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
		_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	// Pods bound to nodes: three on h200-01 (one with an init container
	// asking more than the app), one on the T4 share, one that asks for
	// no GPU.
	pod := func(name, node string, gpus, initGPUs int64) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a"}, Spec: corev1.PodSpec{NodeName: node}}
		c := corev1.Container{Name: "app", Image: "registry.example/app:1"}
		if gpus > 0 {
			c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}
		}
		p.Spec.Containers = []corev1.Container{c}
		if initGPUs > 0 {
			p.Spec.InitContainers = []corev1.Container{{Name: "warm", Image: "registry.example/warm:1",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(initGPUs, resource.DecimalSI)}}}}
		}
		_, err := cs.CoreV1().Pods("team-a").Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	pod("train-1", "h200-01", 2, 0)
	pod("train-2", "h200-01", 1, 0)
	pod("train-3", "h200-01", 1, 3)
	pod("notebook", "t4-shared", 1, 0)
	pod("web", "cpu-01", 0, 0)
}

// TestReadLive reads a real API server: paginated nodes, pods in use per
// node, nothing sensitive kept; then users with less RBAC, and a server
// that is down.
func TestReadLive(t *testing.T) {
	cp := controlplane.Start(t)
	ctx := t.Context()
	admin, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	makeCluster(ctx, t, admin)

	snap, err := live.Read(ctx, live.Options{Kubeconfig: cp.Kubeconfig(), PageSize: 2})
	require.NoError(t, err)
	require.Len(t, snap.Nodes, len(cluster))
	assert.Empty(t, snap.Warnings)
	assert.True(t, snap.Source.PodsCounted)
	assert.NotEmpty(t, snap.Source.Cluster)
	assert.False(t, snap.Source.TakenAt.IsZero())

	cat, err := catalog.Builtin()
	require.NoError(t, err)
	inv := snap.Classify(cat, inventory.Options{})
	got := map[string]inventory.Node{}
	for _, n := range inv.Nodes {
		got[n.Name] = n
	}
	assert.Equal(t, 1, inv.OtherNodes)
	assert.Equal(t, "nvidia-h200-141gb", got["h200-01"].AcceleratorType)
	assert.Equal(t, 6, got["h200-01"].InUse, "2 + 1 + max(1, init 3)")
	assert.Equal(t, map[string]int{"team-a": 6}, got["h200-01"].InUseBy)
	assert.Equal(t, 1, got["t4-shared"].InUse)
	assert.Equal(t, inventory.TimeSliced, got["t4-shared"].Sharing)
	assert.Equal(t, "amd-mi300x-192gb", got["mi300x-01"].AcceleratorType)
	assert.Equal(t, "nvidia-a10g-24gb", got["karpenter-a10g"].AcceleratorType)
	assert.Equal(t, inventory.StatusUnschedulable, got["karpenter-a10g"].Status)
	assert.Equal(t, inventory.TypeUnknown, got["mystery"].AcceleratorType)
	assert.Equal(t, []inventory.Taint{{Key: "nvidia.com/gpu", Effect: "NoSchedule"}}, got["h200-01"].Taints)
	sum := map[string]string{}
	for _, s := range inv.Summary() {
		sum[s.AcceleratorType] = s.String()
	}
	assert.Equal(t, "NVIDIA H200 141GB: 2 nodes, 16 GPUs, 10 available", sum["nvidia-h200-141gb"])
	assert.Equal(t, "NVIDIA A10G 24GB: 1 node, 4 GPUs, 0 available", sum["nvidia-a10g-24gb"], "a cordoned node offers nothing")

	var buf strings.Builder
	require.NoError(t, snap.Write(&buf))
	for _, secret := range []string{"10.1.2.3", "4C4C4544", cp.URL(), "registry.example"} {
		assert.NotContains(t, buf.String(), secret)
	}

	// Every way of asking reads the same: from etcd page by page (a
	// quorum read: the watch cache answers the default's whole), JSON
	// (a server without protobuf), without gzip.
	for _, m := range live.Methods {
		t.Run(m.Name, func(t *testing.T) {
			got, err := live.ReadWith(ctx, live.Options{Kubeconfig: cp.Kubeconfig(), PageSize: 2}, m.M)
			require.NoError(t, err)
			got.Source.TakenAt = snap.Source.TakenAt
			assert.Equal(t, snap, got)
		})
	}

	t.Run("may list nodes, not pods", func(t *testing.T) {
		bind(ctx, t, admin, "node-reader", "nodes")
		snap, err := live.Read(ctx, live.Options{Kubeconfig: cp.UserKubeconfig(t, "node-reader")})
		require.NoError(t, err)
		assert.Len(t, snap.Nodes, len(cluster))
		assert.False(t, snap.Source.PodsCounted)
		require.Len(t, snap.Warnings, 1)
		assert.Contains(t, snap.Warnings[0], "RBAC: verb list on pods")
		assert.False(t, snap.Classify(cat, inventory.Options{}).UsageKnown())
	})

	t.Run("may not list nodes", func(t *testing.T) {
		_, err := live.Read(ctx, live.Options{Kubeconfig: cp.UserKubeconfig(t, "nobody")})
		var le *live.Error
		require.ErrorAs(t, err, &le)
		assert.Equal(t, cp.URL(), le.Server)
		assert.Contains(t, err.Error(), `RBAC verb "list" on "nodes"`)
		assert.Contains(t, err.Error(), cp.URL())
	})

	t.Run("server down", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		cfg, err := os.ReadFile(cp.Kubeconfig())
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "kubeconfig")
		require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(string(cfg), strings.TrimPrefix(cp.URL(), "https://"), addr)), 0o600))
		_, err = live.Read(ctx, live.Options{Kubeconfig: path})
		var le *live.Error
		require.ErrorAs(t, err, &le)
		assert.Contains(t, err.Error(), "cannot reach it")
		assert.Contains(t, err.Error(), addr)
	})

	t.Run("no kubeconfig", func(t *testing.T) {
		t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "missing"))
		t.Setenv("HOME", t.TempDir())
		_, err := live.Read(ctx, live.Options{})
		var le *live.Error
		require.True(t, errors.As(err, &le), "got %v", err)
	})
}

// bind lets user get and list one cluster-scoped resource.
func bind(ctx context.Context, t *testing.T, cs kubernetes.Interface, user, resource string) {
	t.Helper()
	name := fmt.Sprintf("%s-%s", user, resource)
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{resource}, Verbs: []string{"get", "list"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}, metav1.CreateOptions{})
	require.NoError(t, err)
}
