//go:build e2e

package e2e

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestServePageSignIn signs in to `accelc serve --live` (the cluster
// asked who a token is and what it may read: docs/serve.md, Who sees
// what) the way a user behind `kubectl port-forward` does, in a real
// headless browser, against a real API server's TokenReviews and
// SubjectAccessReviews:
//
//   - without a token the page is a shell asking for one, showing nothing
//     of the cluster;
//   - bob, whom the cluster knows but lets read nothing, is told what he
//     needs and asked again; a token the cluster does not know is told so;
//   - dave, who may list the hardware profiles only, sees the profiles and
//     their availability, not the nodes, and the numbers move without a
//     reload as a pod is bound and deleted: the page's refreshes carry his
//     token;
//   - a reload keeps him signed in (the tab's sessionStorage); a new tab
//     (sessionStorage cleared) asks again;
//   - alice, who may also list the nodes, sees them, and signing out
//     forgets her token;
//   - every request goes to the server itself, and the token only ever in
//     the Authorization header, never in a URL.
func TestServePageSignIn(t *testing.T) {
	needChromium(t)
	s := smallLabServeSuite(t)
	ctx := t.Context()
	// small-lab's profiles live in redhat-ods-applications (its
	// cluster.profileNamespace): who may list them there may read the
	// catalog.
	const profileNS = "redhat-ods-applications"
	s.ensureNamespaces(t, "lab", "users", profileNS)
	tokens := map[string]string{}
	for _, who := range []string{"bob", "dave", "alice"} {
		if _, err := s.client.CoreV1().ServiceAccounts("users").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: who}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := s.client.CoreV1().ServiceAccounts("users").CreateToken(ctx, who, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tokens[who] = tr.Status.Token
	}
	grant := func(ns, role string, rule rbacv1.PolicyRule, who ...string) {
		t.Helper()
		if _, err := s.client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role}, Rules: []rbacv1.PolicyRule{rule}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var subjects []rbacv1.Subject
		for _, w := range who {
			subjects = append(subjects, rbacv1.Subject{Kind: "ServiceAccount", Name: w, Namespace: "users"})
		}
		ref := rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role}
		meta := metav1.ObjectMeta{Name: role}
		var err error
		if ns == "" {
			_, err = s.client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: subjects}, metav1.CreateOptions{})
		} else {
			_, err = s.client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: meta, RoleRef: ref, Subjects: subjects}, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	grant(profileNS, "profiles-reader", rbacv1.PolicyRule{APIGroups: []string{"infrastructure.opendatahub.io"}, Resources: []string{"hardwareprofiles"}, Verbs: []string{"list"}}, "dave", "alice")
	grant("", "nodes-reader", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}}, "alice")

	// The server asks the cluster as the admin of this control plane: it
	// may review tokens and access.
	base := s.serve(t, "examples/clusters/small-lab", "--live", "--kubeconfig", s.cp.Kubeconfig(), "--refresh", "300ms")

	bctx := browser(t)
	var (
		mu   sync.Mutex
		sent []*network.Request
	)
	if err := chromedp.Listen(bctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			sent = append(sent, e.Request)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("reading the page (%s): %v", expr, err)
		}
		return v
	}
	// until waits for the page to show what expr says (a string that is
	// not ""), without a reload.
	until := func(what, expr string) string {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			if v := eval(expr); v != "" {
				return v
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s: the page never showed it; it shows:\n%s", what, eval(`document.getElementById("main").innerText`))
		return ""
	}
	const (
		asking    = `document.querySelector('#main input[name=token]') ? "yes" : ""`
		loginErr  = `(document.querySelector('#main .login-error') || {textContent: ""}).textContent`
		available = `(document.querySelector('tr[data-profile="lab-l40s"]') || {dataset: {available: ""}}).dataset.available`
		nodes     = `document.querySelector('#main details.type') ? "shown" : (document.querySelector('#main p.more') || {textContent: ""}).textContent`
	)
	signIn := func(who, token string) {
		t.Helper()
		if err := chromedp.Do(bctx,
			chromedp.SetValue(chromedp.CSS(`#main input[name=token]`), token),
			chromedp.Click(chromedp.CSS(`#main button[type=submit]`)),
		); err != nil {
			t.Fatalf("signing in as %s: %v", who, err)
		}
	}

	if err := chromedp.Do(bctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatalf("loading %s/: %v", base, err)
	}
	until("the shell asking for a token", asking)
	if text := eval(`document.body.innerText`); strings.Contains(text, "small-lab") || strings.Contains(text, "L40S") {
		t.Errorf("the shell shows the cluster before anyone signed in:\n%s", text)
	}

	signIn("bob", tokens["bob"])
	msg := until("bob told what he needs", loginErr)
	if !strings.Contains(msg, "system:serviceaccount:users:bob may not read this") || !strings.Contains(msg, "hardwareprofiles.infrastructure.opendatahub.io in namespace "+profileNS) {
		t.Errorf("bob, who may read nothing, is told %q; want who he is and the right he needs", msg)
	}
	if eval(available) != "" || eval(asking) == "" {
		t.Error("bob, who may read nothing, sees the catalog or is not asked for another token")
	}

	signIn("a token nobody issued", "not-a-token")
	if msg := until("a token the cluster does not know refused", `(t => t.includes("did not accept") ? t : "")(`+loginErr+`)`); !strings.Contains(msg, "unknown or expired") {
		t.Errorf("a token the cluster does not know: the page says %q", msg)
	}

	signIn("dave", tokens["dave"])
	if got := until("dave sees the profiles", available); got != "8" {
		t.Fatalf("dave sees %s L40S available, want 8 (two nodes of 4)", got)
	}
	if got := eval(nodes); got != "The nodes are shown to those who may list them." {
		t.Errorf("dave, who may not list nodes, sees %q where the nodes go", got)
	}
	unbind := s.bindL40SPod(t)
	until("dave's page counting a pod bound with 2 GPUs", fmt.Sprintf(`%s === "6" ? "6" : ""`, available))
	unbind()
	until("dave's page counting it gone", fmt.Sprintf(`%s === "8" ? "8" : ""`, available))

	// A reload keeps the tab's token; a new tab has none.
	if err := chromedp.Do(bctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	until("dave still signed in after a reload", available)
	if eval(asking) != "" {
		t.Error("a reload asked dave for his token again: the tab keeps it")
	}
	eval(`(sessionStorage.clear(), "")`)
	if err := chromedp.Do(bctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	until("a tab without a token asked for one", asking)

	signIn("alice", tokens["alice"])
	until("alice sees the profiles", available)
	if got := eval(nodes); got != "shown" {
		t.Errorf("alice, who may list nodes, sees %q where the nodes go", got)
	}
	shot := screenshot(t, bctx, "serve-page-signed-in.png")

	// Signing out forgets the tab's token: the shell asks again, and the
	// page's refreshes show nothing meanwhile.
	if eval(`document.querySelector('header .session').hidden ? "" : "shown"`) == "" {
		t.Error("alice, signed in with a pasted token, is offered no way to sign out")
	}
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`#signout`))); err != nil {
		t.Fatal(err)
	}
	until("the shell asking again after signing out", asking)
	time.Sleep(time.Second) // three of the page's refresh ticks
	if eval(available) != "" || eval(`sessionStorage.length ? "kept" : ""`) != "" {
		t.Error("after signing out the page still shows the catalog or keeps the token")
	}

	mu.Lock()
	defer mu.Unlock()
	u, _ := url.Parse(base)
	carried := 0
	for _, r := range sent {
		ru, err := url.Parse(r.URL)
		if err != nil || ru.Host != u.Host {
			t.Errorf("the page asked for %s: everything it needs must come from the server", r.URL)
		}
		for _, tok := range tokens {
			if strings.Contains(r.URL, tok) {
				t.Errorf("a token in a URL: %s", r.URL)
			}
		}
		if h, _ := r.Headers["Authorization"].(string); strings.HasPrefix(h, "Bearer ") {
			carried++
		}
	}
	if carried == 0 {
		t.Error("no request of the page carried a token: its refreshes are not signed in")
	}
	t.Logf("%d requests, all to %s, %d of them carrying the signed-in user's token; screenshot: %s", len(sent), u.Host, carried, shot)
}
