package serve

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// TestAccess serves hetero-prod's catalog with Access against a real API
// server, as the catalog service's service account holding only what
// render gives it (its ClusterRole and system:auth-delegator), to users
// with service account tokens and RBAC of their own:
//
//   - no token: 401 on the API, the page's shell (no catalog) on /, and
//     /healthz and /readyz answer; a token the cluster does not know: 401;
//   - bob, authenticated, with no rights: 403 naming what it needs;
//   - alice, of team ml-research, who may list the profiles, the pods of the
//     team's namespaces and nodes: the catalog with her team's quota use
//     and no other team's, the node view with inUseByNamespace cut to her
//     namespaces; not /metrics; through oauth-proxy's header as well;
//   - dave, who may only list the profiles: the catalog without any team's
//     use, the page without nodes, 403 on the node view;
//   - ops, who may list pods and nodes everywhere and get /metrics: the
//     documents byte for byte as a server without Access serves them.
func TestAccess(t *testing.T) {
	cp := controlplane.Start(t)
	ctx := t.Context()
	admin, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)

	m, snap := example(t, "hetero-prod")
	objs, err := render.Render(m, &inventory.Inventory{})
	require.NoError(t, err)
	for _, o := range objs {
		if o.Dir != render.DirCatalogService {
			continue
		}
		switch b := o.Body.(type) {
		case *rbacv1.ClusterRole:
			_, err = admin.RbacV1().ClusterRoles().Create(ctx, b, metav1.CreateOptions{})
		case *rbacv1.ClusterRoleBinding:
			_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, b, metav1.CreateOptions{})
		default:
			continue
		}
		require.NoError(t, err, "%s %s", o.Kind(), o.Name())
	}
	for _, ns := range []string{"opendatahub", "ml-research", "ml-research-dev", "serving-prod", "users"} {
		_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	token := func(name string) string {
		t.Helper()
		_, err := admin.CoreV1().ServiceAccounts("users").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		require.NoError(t, err)
		tr, err := admin.CoreV1().ServiceAccounts("users").CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		require.NoError(t, err)
		return tr.Status.Token
	}
	sa := func(name string) rbacv1.Subject {
		return rbacv1.Subject{Kind: "ServiceAccount", Name: name, Namespace: "users"}
	}
	role := func(name string, rules ...rbacv1.PolicyRule) {
		t.Helper()
		_, err := admin.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	bind := func(ns, roleName string, who ...rbacv1.Subject) {
		t.Helper()
		ref := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: roleName}
		meta := metav1.ObjectMeta{Name: roleName + "-" + who[0].Name, Namespace: ns}
		if ns == "" {
			_, err = admin.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: who}, metav1.CreateOptions{})
		} else {
			_, err = admin.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: who}, metav1.CreateOptions{})
		}
		require.NoError(t, err)
	}
	role("profiles-reader", rbacv1.PolicyRule{APIGroups: []string{catalogGroup}, Resources: []string{catalogResource}, Verbs: []string{"get", "list", "watch"}})
	role("pods-reader", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}})
	role("nodes-reader", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}})
	role("metrics-reader", rbacv1.PolicyRule{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}})
	tokens := map[string]string{}
	for _, name := range []string{"alice", "bob", "dave", "ops"} {
		tokens[name] = token(name)
	}
	for _, who := range []string{"alice", "dave", "ops"} {
		bind(m.Cluster.ProfileNamespace, "profiles-reader", sa(who))
	}
	bind("ml-research", "pods-reader", sa("alice"))
	bind("ml-research-dev", "pods-reader", sa("alice"))
	bind("", "nodes-reader", sa("alice"))
	bind("", "pods-reader", sa("ops"))
	bind("", "nodes-reader", sa("ops"))
	bind("", "metrics-reader", sa("ops"))

	// Pods of two teams hold devices on the same nodes.
	held := counted(snap, 1)
	for i := range held.Nodes {
		if i%3 == 0 {
			inventory.SetInUse(&held.Nodes[i], map[string]int{"ml-research": 1, "serving-prod": 1})
		}
	}
	access, err := NewAccess(cp.UserRESTConfig(t, recorderSA), AccessOptions{})
	require.NoError(t, err)
	srv := New(m, Static{Snap: held}, Options{Access: access})
	srv.Update()
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	open := New(m, Static{Snap: held}, Options{})
	open.Update()
	openTS := httptest.NewServer(open.Handler())
	t.Cleanup(openTS.Close)

	fetch := func(base, path string, header ...string) (int, string, http.Header) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		require.NoError(t, err)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b), resp.Header
	}
	as := func(who, path string) (int, string) {
		t.Helper()
		code, body, _ := fetch(ts.URL, path, "Authorization", "Bearer "+tokens[who])
		return code, body
	}

	// No token, or one the cluster does not know.
	code, body, h := fetch(ts.URL, "/api/v1/profiles")
	assert.Equal(t, http.StatusUnauthorized, code, body)
	assert.Equal(t, `Bearer realm="accelc"`, h.Get("WWW-Authenticate"))
	code, body, _ = fetch(ts.URL, "/")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "Sign in with your cluster token")
	assert.NotContains(t, body, "hetero-prod", "the shell says nothing of the cluster")
	code, _, _ = fetch(ts.URL, "/?part=main")
	assert.Equal(t, http.StatusUnauthorized, code)
	for _, p := range []string{"/healthz", "/readyz"} {
		code, _, _ = fetch(ts.URL, p)
		assert.Equal(t, http.StatusOK, code, p)
	}
	code, body, _ = fetch(ts.URL, "/api/v1/profiles", "Authorization", "Bearer not-a-token")
	assert.Equal(t, http.StatusUnauthorized, code, body)
	assert.Contains(t, body, "the cluster does not accept this token")

	// Authenticated, allowed nothing.
	code, body = as("bob", "/api/v1/profiles")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, "system:serviceaccount:users:bob may not read this: it needs list on hardwareprofiles.infrastructure.opendatahub.io in namespace opendatahub")
	code, _ = as("bob", "/")
	assert.Equal(t, http.StatusForbidden, code)

	// Each team's quota use, as the profiles show it.
	used := func(body string) map[string]bool {
		t.Helper()
		var doc struct {
			Profiles []liveProfile `json:"profiles"`
			Profile  *liveProfile  `json:"profile"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &doc), body)
		if doc.Profile != nil {
			doc.Profiles = append(doc.Profiles, *doc.Profile)
		}
		out := map[string]bool{}
		for _, p := range doc.Profiles {
			if p.Queue == nil {
				continue
			}
			for _, team := range p.Queue.Teams {
				for _, f := range team.Flavors {
					out[team.Team] = out[team.Team] || f.Used != nil
				}
			}
		}
		return out
	}
	_, all, _ := fetch(openTS.URL, "/api/v1/profiles")
	require.Equal(t, map[string]bool{"ml-research": true, "model-serving": true, "data-science": true}, used(all), "every team's use is counted")

	// alice sees her team's figures and namespace, no one else's.
	code, body = as("alice", "/api/v1/profiles")
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, map[string]bool{"ml-research": true, "model-serving": false, "data-science": false}, used(body))
	code, body = as("alice", "/api/v1/profiles/large-gpu")
	require.Equal(t, http.StatusOK, code, body)
	_, openBody, _ := fetch(openTS.URL, "/api/v1/profiles/large-gpu")
	require.True(t, used(openBody)["model-serving"], "large-gpu's model-serving queue counts its use")
	assert.False(t, used(body)["model-serving"], "one profile is cut as the list is")
	code, body = as("alice", "/api/v1/nodes")
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, `"inUseByNamespace":{"ml-research":1}`)
	assert.NotContains(t, body, "serving-prod")
	code, body = as("alice", "/api/v1/nodes?status=Ready")
	require.Equal(t, http.StatusOK, code, body)
	assert.NotContains(t, body, "serving-prod", "a filtered view is cut too")
	code, _ = as("alice", "/metrics")
	assert.Equal(t, http.StatusForbidden, code)
	code, body = as("alice", "/")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "Nodes by accelerator type")
	// oauth-proxy passes the signed-in user's token in its own header.
	code, body, _ = fetch(ts.URL, "/api/v1/profiles", forwardedToken, tokens["alice"])
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, map[string]bool{"ml-research": true, "model-serving": false, "data-science": false}, used(body))

	// dave may read the catalog and nothing else.
	code, body = as("dave", "/api/v1/profiles")
	require.Equal(t, http.StatusOK, code, body)
	assert.Equal(t, map[string]bool{"ml-research": false, "model-serving": false, "data-science": false}, used(body))
	code, body = as("dave", "/api/v1/nodes")
	assert.Equal(t, http.StatusForbidden, code)
	assert.Contains(t, body, "it needs list on nodes")
	for _, p := range []string{"/", "/?part=main"} {
		code, body = as("dave", p)
		require.Equal(t, http.StatusOK, code, p)
		assert.NotContains(t, body, "Nodes by accelerator type", p)
		assert.Contains(t, body, "The nodes are shown to those who may list them", p)
		assert.Contains(t, body, "Hardware profiles", p)
	}
	code, _ = as("dave", "/api/v1/recommend?min-memory=40GB")
	assert.Equal(t, http.StatusOK, code)

	// ops sees everything, as the open server serves it (counted at
	// another moment).
	counted := regexp.MustCompile(`"updatedAt":"[^"]*"|datetime="[^"]*">[^<]*<`)
	for _, p := range []string{"/api/v1/profiles", "/api/v1/profiles/premium-gpu", "/api/v1/nodes", "/"} {
		code, body = as("ops", p)
		require.Equal(t, http.StatusOK, code, p)
		_, want, _ := fetch(openTS.URL, p)
		assert.Equal(t, counted.ReplaceAllString(want, ""), counted.ReplaceAllString(body, ""), p)
	}
	code, body = as("ops", "/metrics")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "accelc_serve_access_reviews_total")
}
