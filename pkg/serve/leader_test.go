package serve

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/render"
)

// TestRecorderLeaderElection runs two replicas of the recorder, each
// with its own watcher and election, as the catalog service's service
// account holding what render gives it (the reading and patching
// ClusterRoles, the Role on its Lease), against a real API server: one
// holds the Lease and records a pod's type, the other follows the same
// pods and writes nothing. When the leader stops (it gives the Lease up),
// the other takes over and records the next pod.
func TestRecorderLeaderElection(t *testing.T) {
	cp := controlplane.Start(t)
	ctx := t.Context()
	admin, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)

	m, _ := example(t, "hetero-prod")
	m.Cluster.CatalogService.RecordTypes = true
	objs, err := render.Render(m, &inventory.Inventory{})
	require.NoError(t, err)
	for _, ns := range []string{"accelc-system", "serving-prod"} {
		_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for _, o := range objs {
		if o.Dir != render.DirCatalogService {
			continue
		}
		switch b := o.Body.(type) {
		case *rbacv1.ClusterRole:
			_, err = admin.RbacV1().ClusterRoles().Create(ctx, b, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{})
		case *rbacv1.Role:
			_, err = admin.RbacV1().Roles(b.Namespace).Create(ctx, b, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = admin.RbacV1().RoleBindings(b.Namespace).Create(ctx, b, metav1.CreateOptions{})
		default:
			continue
		}
		require.NoError(t, err, "%s %s", o.Kind(), o.Name())
	}
	typeLabel := m.Cluster.TypeLabel()
	_, err = admin.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "a100-01",
		Labels: map[string]string{typeLabel: "nvidia-a100-80gb"}}}, metav1.CreateOptions{})
	require.NoError(t, err)

	kubeconfig := cp.UserKubeconfig(t, recorderSA)
	type replica struct {
		name     string
		recorder *Recorder
		leader   *Leader
		stop     context.CancelFunc
		done     chan struct{}
	}
	start := func(name string) *replica {
		t.Helper()
		w, err := NewWatcher(WatchOptions{Options: live.Options{Kubeconfig: kubeconfig}})
		require.NoError(t, err)
		l := newLeader(false)
		r, err := NewRecorder(w, m, RecordOptions{Leader: l, Log: t.Output()})
		require.NoError(t, err)
		rctx, stop := context.WithCancel(ctx)
		rep := &replica{name: name, recorder: r, leader: l, stop: stop, done: make(chan struct{})}
		opts := LeaderOptions{Namespace: "accelc-system", Name: render.CatalogServiceName + "-writer", Identity: name,
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 200 * time.Millisecond}
		parts := 3
		finished := make(chan struct{}, parts)
		go func() { assert.NoError(t, w.Run(rctx)); finished <- struct{}{} }()
		go func() { r.Run(rctx); finished <- struct{}{} }()
		go func() { assert.NoError(t, l.elect(rctx, w.cfg, opts, t.Output())); finished <- struct{}{} }()
		go func() {
			for range parts {
				<-finished
			}
			close(rep.done)
		}()
		require.Eventually(t, w.Synced, 30*time.Second, 50*time.Millisecond)
		return rep
	}
	a, b := start("replica-a"), start("replica-b")
	t.Cleanup(func() { a.stop(); b.stop(); <-a.done; <-b.done })
	var leader, follower *replica
	require.Eventually(t, func() bool {
		switch {
		case a.leader.Leading() && !b.leader.Leading():
			leader, follower = a, b
		case b.leader.Leading() && !a.leader.Leading():
			leader, follower = b, a
		default:
			return false
		}
		return true
	}, 20*time.Second, 20*time.Millisecond, "one replica, and one only, leads")
	t.Logf("%s leads, %s waits", leader.name, follower.name)

	pod := func(name string) {
		t.Helper()
		_, err := admin.CoreV1().Pods("serving-prod").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{profileAnnotation: "large-memory"}},
			Spec: corev1.PodSpec{NodeName: "a100-01", Containers: []corev1.Container{{Name: "c", Image: "registry.example/train:1",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}},
		}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	typeOf := func(name string) string {
		p, err := admin.CoreV1().Pods("serving-prod").Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		return p.Annotations[typeLabel]
	}
	pod("first")
	require.Eventually(t, func() bool { return typeOf("first") == "nvidia-a100-80gb" }, 10*time.Second, 10*time.Millisecond)
	// The API server has the patch a moment before the recorder counts
	// its answer.
	assert.Eventually(t, func() bool { return testutil.ToFloat64(leader.recorder.recorded) == 1 }, 5*time.Second, 10*time.Millisecond, "the leader recorded it")
	// The follower saw the pod too, and waits with it queued.
	time.Sleep(time.Second)
	assert.Zero(t, testutil.ToFloat64(follower.recorder.recorded), "the follower writes nothing")
	assert.Zero(t, testutil.ToFloat64(follower.recorder.errors.WithLabelValues("conflict")), "nor tries to")
	assert.Equal(t, 0.0, testutil.ToFloat64(follower.leader.gauge))
	assert.Equal(t, 1.0, testutil.ToFloat64(leader.leader.gauge))

	// The leader goes (a rollout, a drain): it gives the Lease up, and
	// the follower takes over at once.
	gone := time.Now()
	leader.stop()
	<-leader.done
	require.Eventually(t, follower.leader.Leading, 10*time.Second, 10*time.Millisecond, "the follower takes over")
	t.Logf("%s took over %s after %s stopped", follower.name, time.Since(gone).Round(time.Millisecond), leader.name)
	pod("second")
	require.Eventually(t, func() bool { return typeOf("second") == "nvidia-a100-80gb" }, 10*time.Second, 10*time.Millisecond)
	assert.Eventually(t, func() bool { return testutil.ToFloat64(follower.recorder.recorded) == 1 }, 5*time.Second, 10*time.Millisecond,
		"the new leader recorded the second pod, and found the first done")
}

// TestLeaseNames: the Lease the service elects on by default is the one
// render's Role lets it hold.
func TestLeaseNames(t *testing.T) {
	assert.Equal(t, render.CatalogServiceName+"-writer", DefaultLeaseName)
}
