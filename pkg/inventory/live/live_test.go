package live_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/livetest"
	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/inventory/live"
)

// TestReadLive reads a real API server: paginated nodes, pods in use per
// node, the accelerator drivers' ResourceSlices (created with the typed
// client), nothing sensitive kept; then users with less RBAC, and a server
// that is down.
func TestReadLive(t *testing.T) {
	cp := controlplane.Start(t)
	ctx := t.Context()
	admin, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	livetest.MakeCluster(ctx, t, admin)
	livetest.MakeSlices(ctx, t, admin)

	snap, err := live.Read(ctx, live.Options{Kubeconfig: cp.Kubeconfig(), PageSize: 2})
	require.NoError(t, err)
	require.Len(t, snap.Nodes, len(livetest.Cluster))
	assert.Empty(t, snap.Warnings)
	require.Len(t, snap.Slices, 2, "the network driver's slice is not kept")
	assert.Equal(t, "dra-two", snap.Slices[0].Spec.NodeName)
	assert.Equal(t, "NVIDIA A100-SXM4-80GB", *snap.Slices[0].Spec.Devices[0].Attributes["productName"].String)
	for _, d := range snap.Slices[0].Spec.Devices {
		assert.NotContains(t, d.Attributes, "uuid")
		assert.NotContains(t, d.Attributes, "resource.kubernetes.io/pciBusID")
	}
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
	assert.Equal(t, inventory.TypeMixed, got["dra-two"].AcceleratorType)
	assert.Equal(t, map[string]int{"nvidia-a100-80gb": 2, "nvidia-h100-80gb": 2}, got["dra-two"].Types)
	assert.Equal(t, 4, got["dra-two"].Allocatable)
	assert.Equal(t, "nvidia-h200-141gb", got["h200-02"].AcceleratorType)
	assert.Contains(t, got["h200-02"].Notes, "a device plugin (nvidia.com/gpu) and the DRA driver both publish this node's devices: one could be given twice; allocatable is the device plugin's")
	assert.Equal(t, []inventory.Taint{{Key: "nvidia.com/gpu", Effect: "NoSchedule"}}, got["h200-01"].Taints)
	sum := map[string]string{}
	for _, s := range inv.Summary() {
		sum[s.AcceleratorType] = s.String()
	}
	assert.Equal(t, "NVIDIA H200 141GB: 2 nodes, 16 GPUs, 10 available", sum["nvidia-h200-141gb"])
	assert.Equal(t, "NVIDIA A10G 24GB: 1 node, 4 GPUs, 0 available", sum["nvidia-a10g-24gb"], "a cordoned node offers nothing")
	assert.Equal(t, "NVIDIA A100 80GB: 1 node, 2 GPUs, 2 available", sum["nvidia-a100-80gb"], "dra-two's A100s")
	assert.Equal(t, "NVIDIA H100 80GB: 1 node, 2 GPUs, 2 available", sum["nvidia-h100-80gb"], "dra-two's H100s")

	var buf strings.Builder
	require.NoError(t, snap.Write(&buf))
	for _, secret := range []string{"10.1.2.3", "4C4C4544", cp.URL(), "registry.example", "GPU-5e6f7081", "0000:18:00.0", "pci0000:17", "0c:42:a1", "dra.net"} {
		assert.NotContains(t, buf.String(), secret)
	}
	back, err := inventory.DecodeSnapshot([]byte(buf.String()))
	require.NoError(t, err)
	assert.Equal(t, inv.Nodes, back.Classify(cat, inventory.Options{}).Nodes, "the snapshot classifies as the cluster did")

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
		assert.Len(t, snap.Nodes, len(livetest.Cluster))
		assert.False(t, snap.Source.PodsCounted)
		require.Len(t, snap.Warnings, 3)
		assert.Contains(t, snap.Warnings[0], "RBAC: verb list on pods")
		assert.Contains(t, snap.Warnings[1], "may not list resourceslices (RBAC: verb list on resourceslices in API group resource.k8s.io, cluster-wide): nodes are classified by their labels")
		assert.Contains(t, snap.Warnings[2], "may not list namespaces (RBAC: verb list on namespaces, cluster-wide): cluster.excludedNamespaces are not checked against the namespaces the cluster has")
		assert.Empty(t, snap.Slices)
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

// TestReadResourceSlicesUnavailable: an API server that does not serve
// resource.k8s.io/v1 (before Kubernetes 1.34, or with the group turned
// off), or a user who may not list ResourceSlices, leaves the nodes to be
// classified by their labels, with a warning; any other failure to list
// them fails the read. A stand-in server on 127.0.0.1 answers the nodes,
// pods and namespaces, and the slices as each case says. A user who may
// not list namespaces either gets a second warning, and a snapshot that
// knows no namespaces.
func TestReadResourceSlicesUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name, body, warning, err string
		code                     int
	}{
		{"not served", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}`,
			"the API server does not serve resource.k8s.io/v1 ResourceSlices (Dynamic Resource Allocation, Kubernetes 1.34 and later): nodes are classified by their labels", "", http.StatusNotFound},
		{"not served, plain 404", "404 page not found\n", "the API server does not serve resource.k8s.io/v1 ResourceSlices", "", http.StatusNotFound},
		{"forbidden", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"resourceslices.resource.k8s.io is forbidden: User \"viewer\" cannot list resource \"resourceslices\" in API group \"resource.k8s.io\" at the cluster scope","reason":"Forbidden","details":{"group":"resource.k8s.io","kind":"resourceslices"},"code":403}`,
			`may not list resourceslices (RBAC: verb list on resourceslices in API group resource.k8s.io, cluster-wide): nodes are classified by their labels; listing resourceslices: resourceslices.resource.k8s.io is forbidden: User "viewer" cannot list`, "", http.StatusForbidden},
		{"server error", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"etcdserver: request timed out","reason":"InternalError","code":500}`,
			"", "listing resourceslices", http.StatusInternalServerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/api/v1/nodes":
					fmt.Fprint(w, `{"kind":"NodeList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"h200","labels":{"nvidia.com/gpu.product":"NVIDIA-H200","nvidia.com/gpu.count":"8"}},"status":{"capacity":{"nvidia.com/gpu":"8"}}}]}`)
				case "/api/v1/pods":
					fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[]}`)
				case "/api/v1/namespaces":
					if tc.code == http.StatusForbidden {
						w.WriteHeader(tc.code)
						fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces is forbidden: User \"viewer\" cannot list resource \"namespaces\" in API group \"\" at the cluster scope","reason":"Forbidden","details":{"kind":"namespaces"},"code":403}`)
						return
					}
					fmt.Fprint(w, `{"kind":"NamespaceList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"kube-system"}},{"metadata":{"name":"default"}}]}`)
				case "/apis/resource.k8s.io/v1/resourceslices":
					if !strings.HasPrefix(tc.body, "{") {
						w.Header().Set("Content-Type", "text/plain")
					}
					w.WriteHeader(tc.code)
					fmt.Fprint(w, tc.body)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
			require.NoError(t, os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: standin, cluster: {server: "`+srv.URL+`"}}]
users: [{name: viewer, user: {token: s3cr3t-t0ken}}]
contexts: [{name: standin, context: {cluster: standin, user: viewer}}]
current-context: standin
`), 0o600))
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			snap, err := live.Read(ctx, live.Options{Kubeconfig: kubeconfig})
			if tc.err != "" {
				var le *live.Error
				require.ErrorAs(t, err, &le)
				assert.Contains(t, err.Error(), tc.err)
				assert.NotContains(t, err.Error(), "s3cr3t-t0ken")
				return
			}
			require.NoError(t, err)
			require.Len(t, snap.Nodes, 1)
			assert.Empty(t, snap.Slices)
			assert.Contains(t, snap.Warnings[0], tc.warning)
			if tc.code == http.StatusForbidden {
				require.Len(t, snap.Warnings, 2)
				assert.Contains(t, snap.Warnings[1], `may not list namespaces (RBAC: verb list on namespaces, cluster-wide): cluster.excludedNamespaces are not checked against the namespaces the cluster has; listing namespaces: namespaces is forbidden: User "viewer" cannot list`)
				assert.Nil(t, snap.Source.Namespaces)
			} else {
				require.Len(t, snap.Warnings, 1)
				assert.Equal(t, []string{"default", "kube-system"}, snap.Source.Namespaces)
			}
			assert.True(t, snap.Source.PodsCounted)
			cat, err := catalog.Builtin()
			require.NoError(t, err)
			assert.Equal(t, "nvidia-h200-141gb", snap.Classify(cat, inventory.Options{}).Nodes[0].AcceleratorType)
		})
	}
}
