package serve

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/inventory/live"
)

// TestWatcherWithoutWorkloads: on a real API server without Kueue the
// watcher serves on and says Workloads are not served; for a user who may
// read nodes, pods and ResourceSlices but not Workloads, that RBAC forbids
// them and which rule would allow it.
func TestWatcherWithoutWorkloads(t *testing.T) {
	cp := controlplane.Start(t)
	ctx := t.Context()
	admin, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	read := []string{"get", "list", "watch"}
	_, err = admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "catalog"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: read},
		{APIGroups: []string{"resource.k8s.io"}, Resources: []string{"resourceslices"}, Verbs: read},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "catalog"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "catalog"},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "catalog"}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	for _, c := range []struct{ kubeconfig, why string }{
		{cp.Kubeconfig(), "the API server does not serve Kueue's Workloads (kueue.x-k8s.io/v1beta2)"},
		{cp.UserKubeconfig(t, "catalog"), "may not list Kueue's Workloads (RBAC: get, list and watch on workloads in kueue.x-k8s.io)"},
	} {
		w, err := NewWatcher(WatchOptions{Options: live.Options{Kubeconfig: c.kubeconfig}})
		require.NoError(t, err)
		wctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(wctx) }()
		require.Eventually(t, w.Synced, 30*time.Second, 50*time.Millisecond)
		wls, why := w.Workloads()
		assert.Empty(t, wls)
		assert.Equal(t, c.why, why)
		stop()
		require.NoError(t, <-done)
	}
}
