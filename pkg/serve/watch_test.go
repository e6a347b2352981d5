package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/livetest"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/inventory/live"
)

// TestWatcherCountsAsLiveRead watches a real API server: once synced, the
// watcher's snapshot classifies exactly as `accelc inventory snapshot
// --live` (live.Read) does; then a server over it follows a pod bound to
// a node and deleted, and a node cordoned.
func TestWatcherCountsAsLiveRead(t *testing.T) {
	cp := controlplane.Start(t)
	ctx := t.Context()
	admin, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	livetest.MakeCluster(ctx, t, admin)
	livetest.MakeSlices(ctx, t, admin)

	w, err := NewWatcher(WatchOptions{Options: live.Options{Kubeconfig: cp.Kubeconfig()}})
	require.NoError(t, err)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	t.Cleanup(func() { stop(); require.NoError(t, <-done) })
	require.Eventually(t, w.Synced, 30*time.Second, 50*time.Millisecond)

	cat, err := catalog.Builtin()
	require.NoError(t, err)
	read, err := live.Read(ctx, live.Options{Kubeconfig: cp.Kubeconfig()})
	require.NoError(t, err)
	watched, _ := w.Snapshot()
	assert.Empty(t, w.Warnings())
	want, got := read.Classify(cat, inventory.Options{}), watched.Classify(cat, inventory.Options{})
	assert.Equal(t, want.Nodes, got.Nodes, "the watcher counts every node as the live read does")
	assert.Equal(t, want.Summary(), got.Summary())
	assert.Equal(t, read.Slices, watched.Slices)

	// A server over the watcher follows the cluster.
	m, _ := example(t, "small-lab") // its catalog knows every type here
	srv := New(m, w, Options{Debounce: 20 * time.Millisecond})
	go srv.Run(wctx)
	h := srv.Handler()
	h200 := func() (available, inUse int) {
		r := get(t, h, http.MethodGet, "/api/v1/nodes?type=nvidia-h200-141gb", nil)
		if r.StatusCode != http.StatusOK {
			return -1, -1
		}
		var v nodesBody
		require.NoError(t, json.Unmarshal(body(t, r), &v))
		for _, s := range v.Summary {
			if s.AcceleratorType == "nvidia-h200-141gb" && s.Available != nil {
				return *s.Available, *s.InUse
			}
		}
		return -1, -1
	}
	require.Eventually(t, func() bool { a, _ := h200(); return a >= 0 }, 10*time.Second, 20*time.Millisecond)
	before, inUse := h200()
	require.Equal(t, 6, inUse, "the cluster's pods hold 6 of h200-01's GPUs")

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "burst", Namespace: "team-a"}, Spec: corev1.PodSpec{
		NodeName: "h200-02",
		Containers: []corev1.Container{{Name: "c", Image: "registry.example/train:1", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(2, resource.DecimalSI)}}}},
	}}
	begin := time.Now()
	_, err = admin.CoreV1().Pods("team-a").Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { a, _ := h200(); return a == before-2 }, 10*time.Second, 10*time.Millisecond,
		"a pod bound to h200-02 with 2 GPUs takes them off the available")
	t.Logf("a bound pod's GPUs left the catalog %s after it was created", time.Since(begin).Round(time.Millisecond))
	require.NoError(t, admin.CoreV1().Pods("team-a").Delete(ctx, "burst", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}))
	require.Eventually(t, func() bool { a, _ := h200(); return a == before }, 10*time.Second, 10*time.Millisecond, "deleted, they are back")

	// A cordoned node offers nothing.
	node, err := admin.CoreV1().Nodes().Get(ctx, "h200-02", metav1.GetOptions{})
	require.NoError(t, err)
	node.Spec.Unschedulable = true
	_, err = admin.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { a, _ := h200(); return a == before-8 }, 10*time.Second, 10*time.Millisecond, "h200-02's 8 GPUs, cordoned")
}
