package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/render"
)

// recorderSA is the catalog service's service account, as the API
// server names its requests.
const recorderSA = "system:serviceaccount:accelc-system:accelc-catalog"

// TestRecorder runs the recorder as the catalog service's service account
// against a real API server that holds what catalogService.recordTypes
// renders (the ClusterRoles and the ValidatingAdmissionPolicy): a pod of
// hetero-prod's multi-type profile, bound after it was made, and one of
// its generic profile, made bound, get their nodes' types; a pod of a
// single-type profile, one outside the teams' namespaces, one on a node
// without a type label and one without accelerators are left alone; one
// whose type disagrees with its node is reported and left. As the service
// account, a patch that changes anything but adding the annotation is
// refused by the policy; the admin is not matched by it.
func TestRecorder(t *testing.T) {
	cp := controlplane.Start(t)
	ctx := t.Context()
	admin, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)

	m, _ := example(t, "hetero-prod")
	m.Cluster.CatalogService.RecordTypes = true
	objs, err := render.Render(m, &inventory.Inventory{})
	require.NoError(t, err)
	applied := 0
	for _, o := range objs {
		if o.Dir != render.DirCatalogService {
			continue
		}
		switch b := o.Body.(type) {
		case *rbacv1.ClusterRole:
			_, err = admin.RbacV1().ClusterRoles().Create(ctx, b, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{})
		case *admissionv1.ValidatingAdmissionPolicy:
			_, err = admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, b, metav1.CreateOptions{})
		case *admissionv1.ValidatingAdmissionPolicyBinding:
			_, err = admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, b, metav1.CreateOptions{})
		default:
			continue
		}
		require.NoError(t, err, "%s %s", o.Kind(), o.Name())
		applied++
	}
	require.Equal(t, 7, applied, "two ClusterRoles and their bindings, the binding to system:auth-delegator, the policy and its binding")
	typeLabel := m.Cluster.TypeLabel()
	for name, typ := range map[string]string{"a100-01": "nvidia-a100-80gb", "h200-01": "nvidia-h200-141gb", "plain-01": ""} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
		if typ != "" {
			n.Labels[typeLabel] = typ
		}
		_, err := admin.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for _, ns := range []string{"serving-prod", "ml-research", "elsewhere"} {
		_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	// The API server takes a new policy up within a moment: the recorder
	// starts once it is in force.
	sa, err := kubernetes.NewForConfig(cp.UserRESTConfig(t, recorderSA))
	require.NoError(t, err)
	_, err = admin.CoreV1().Pods("elsewhere").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "elsewhere"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example/train:1"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := sa.CoreV1().Pods("elsewhere").Patch(ctx, "probe", types.MergePatchType, []byte(`{"metadata":{"labels":{"app":"probe"}}}`),
			metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "accelc-catalog-record-types")
	}, 10*time.Second, 50*time.Millisecond, "the ValidatingAdmissionPolicy is in force")

	w, err := NewWatcher(WatchOptions{Options: live.Options{Kubeconfig: cp.UserKubeconfig(t, recorderSA)}})
	require.NoError(t, err)
	var log syncBuffer
	r, err := NewRecorder(w, m, RecordOptions{Log: &log})
	require.NoError(t, err)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	recorded := make(chan struct{})
	go func() { r.Run(wctx); close(recorded) }()
	t.Cleanup(func() { stop(); require.NoError(t, <-done); <-recorded })
	require.Eventually(t, w.Synced, 30*time.Second, 50*time.Millisecond)

	pod := func(ns, name, profile, node string, gpus int64, annotations map[string]string) *corev1.Pod {
		t.Helper()
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}, Annotations: map[string]string{profileAnnotation: profile}},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "registry.example/train:1"}}},
		}
		if gpus > 0 {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}
		}
		for k, v := range annotations {
			p.Annotations[k] = v
		}
		created, err := admin.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
		return created
	}
	typeOf := func(ns, name string) string {
		p, err := admin.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		return p.Annotations[typeLabel]
	}

	// Made, then bound, as kube-scheduler binds.
	pod("serving-prod", "multi", "large-memory", "", 1, nil)
	time.Sleep(200 * time.Millisecond) // the recorder sees it unbound
	bind := time.Now()
	require.NoError(t, admin.CoreV1().Pods("serving-prod").Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: "multi", Namespace: "serving-prod"},
		Target:     corev1.ObjectReference{Kind: "Node", Name: "a100-01"},
	}, metav1.CreateOptions{}))
	require.Eventually(t, func() bool { return typeOf("serving-prod", "multi") == "nvidia-a100-80gb" }, 10*time.Second, 5*time.Millisecond,
		"the multi-type profile's pod records its node's type")
	t.Logf("bound → recorded (as the test polls): %s", time.Since(bind).Round(time.Millisecond))

	pod("ml-research", "generic", "gpu", "h200-01", 2, nil)
	require.Eventually(t, func() bool { return typeOf("ml-research", "generic") == "nvidia-h200-141gb" }, 10*time.Second, 5*time.Millisecond,
		"the generic profile's pod records its node's type")

	pod("serving-prod", "single", "large-gpu", "a100-01", 1, nil)
	pod("elsewhere", "outside", "large-memory", "a100-01", 1, nil)
	pod("serving-prod", "untyped", "large-memory", "plain-01", 1, nil)
	pod("serving-prod", "cpu", "large-memory", "a100-01", 0, nil)
	pod("serving-prod", "mismatch", "large-memory", "a100-01", 1, map[string]string{typeLabel: "nvidia-h200-141gb"})
	require.Eventually(t, func() bool { return testutil.ToFloat64(r.mismatches) == 1 }, 10*time.Second, 5*time.Millisecond)
	// Everything queued since has been looked at: a last pod to record
	// comes after them.
	pod("serving-prod", "last", "large-memory", "h200-01", 1, nil)
	require.Eventually(t, func() bool { return typeOf("serving-prod", "last") == "nvidia-h200-141gb" }, 10*time.Second, 5*time.Millisecond)
	for _, p := range [][2]string{{"serving-prod", "single"}, {"elsewhere", "outside"}, {"serving-prod", "untyped"}, {"serving-prod", "cpu"}} {
		assert.Empty(t, typeOf(p[0], p[1]), "%s/%s is left alone", p[0], p[1])
	}
	assert.Equal(t, "nvidia-h200-141gb", typeOf("serving-prod", "mismatch"), "a disagreeing type is reported, not overwritten")
	assert.Contains(t, log.String(), "pod serving-prod/mismatch says "+typeLabel+"=nvidia-h200-141gb, its node a100-01 is nvidia-a100-80gb: left as it is")

	assert.Equal(t, 3.0, testutil.ToFloat64(r.recorded))
	assert.Equal(t, 1, testutil.CollectAndCount(r.latency), "the one pod seen before it was bound has its latency")
	assert.Zero(t, testutil.ToFloat64(r.errors.WithLabelValues("denied")), log.String())

	// The service account may add the annotation and nothing else.
	merge := func(c kubernetes.Interface, name string, meta map[string]any) error {
		b, err := json.Marshal(map[string]any{"metadata": meta})
		require.NoError(t, err)
		_, err = c.CoreV1().Pods("serving-prod").Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{})
		return err
	}
	for what, meta := range map[string]map[string]any{
		"a label":                 {"labels": map[string]string{"app": "other"}},
		"another annotation":      {"annotations": map[string]string{"note": "x"}},
		"the profile annotation":  {"annotations": map[string]string{profileAnnotation: "large-gpu"}},
		"a type it has":           {"annotations": map[string]string{typeLabel: "nvidia-a100-80gb"}},
		"the type with a label":   {"annotations": map[string]string{typeLabel: "nvidia-a100-80gb"}, "labels": map[string]string{"x": "y"}},
		"a finalizer beside it":   {"annotations": map[string]string{typeLabel: "nvidia-a100-80gb"}, "finalizers": []string{"example.com/hold"}},
		"the type, removed":       {"annotations": map[string]any{typeLabel: nil}},
		"another annotation, too": {"annotations": map[string]string{typeLabel: "nvidia-a100-80gb", "note": "x"}},
	} {
		target := "mismatch"
		if what == "the type with a label" || what == "a finalizer beside it" || what == "another annotation, too" {
			target = "untyped"
		}
		err := merge(sa, target, meta)
		require.Error(t, err, what)
		assert.True(t, apierrors.IsForbidden(err) || apierrors.IsInvalid(err), "%s: %v", what, err)
		assert.Contains(t, err.Error(), "accelc-catalog-record-types", what)
	}
	require.NoError(t, merge(sa, "untyped", map[string]any{"annotations": map[string]string{typeLabel: "nvidia-a100-80gb"}}),
		"adding the annotation alone passes (which value is Gatekeeper's to judge)")
	require.NoError(t, merge(admin, "single", map[string]any{"labels": map[string]string{"app": "other"}}), "the policy matches the service account alone")
	// RBAC: the service account may patch pods, not delete them.
	err = sa.CoreV1().Pods("serving-prod").Delete(ctx, "single", metav1.DeleteOptions{})
	assert.True(t, apierrors.IsForbidden(err), "%v", err)
}

// syncBuffer is a bytes.Buffer for a writer on another goroutine.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
