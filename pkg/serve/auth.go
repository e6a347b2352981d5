package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	tokencache "k8s.io/apiserver/pkg/authentication/token/cache"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	webhooktoken "k8s.io/apiserver/plugin/pkg/authenticator/token/webhook"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// What each route asks of the cluster's authorizer (docs/serve.md, Who
// sees what). The catalog is what the dashboard's profile picker lists, so
// whoever may list the HardwareProfiles in the profile namespace may read
// it, with availability; the node view names nodes and their taints, so it
// is for those who may list nodes; what a namespace's pods hold is for
// those who may list its pods.
const (
	catalogGroup    = "infrastructure.opendatahub.io"
	catalogResource = "hardwareprofiles"
	// forwardedToken is where OpenShift's oauth-proxy
	// (--pass-access-token) puts the user's token.
	forwardedToken = "X-Forwarded-Access-Token"
)

// Access asks the cluster who a request's bearer token is (TokenReview)
// and what that user may read (SubjectAccessReview), as Kubernetes'
// aggregated API servers do, with the same library (k8s.io/apiserver's
// token webhook authenticator behind its cache, and its delegating
// authorizer with its own). Answers are kept: a token's user for
// CacheTTL, an allowed review for CacheTTL and a denied one for
// DenyCacheTTL; on top, each user's decisions for this server's few
// questions are kept for DenyCacheTTL, so that a request that asks what
// was asked a moment ago costs a map lookup.
type Access struct {
	authn authenticator.Request
	authz authorizer.Authorizer
	ttl   time.Duration

	mu    sync.Mutex
	users map[string]*userRights

	reviews *prometheus.CounterVec
	latency *prometheus.HistogramVec
}

// AccessOptions shape an Access.
type AccessOptions struct {
	// CacheTTL is how long a token's user and an allowed access review
	// are kept (default a minute).
	CacheTTL time.Duration
	// DenyCacheTTL is how long a token the cluster does not know and a
	// denied review are kept (default 10s).
	DenyCacheTTL time.Duration
}

// accessUsersMax bounds the users whose decisions are kept at once.
const accessUsersMax = 4096

// userRights are one user's decisions, until expires.
type userRights struct {
	expires time.Time
	mu      sync.Mutex
	allowed map[string]bool // by question (rightKey)
}

// NewAccess asks the cluster cfg reaches, with cfg's credentials (which
// need create on tokenreviews and subjectaccessreviews).
func NewAccess(cfg *rest.Config, opts AccessOptions) (*Access, error) {
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = time.Minute
	}
	if opts.DenyCacheTTL <= 0 {
		opts.DenyCacheTTL = 10 * time.Second
	}
	c := rest.CopyConfig(cfg)
	// Reviews are small and many users may come at once.
	c.QPS, c.Burst = max(c.QPS, 50), max(c.Burst, 100)
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, err
	}
	a := &Access{
		ttl:   opts.DenyCacheTTL,
		users: map[string]*userRights{},
		reviews: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "accelc_serve_token_reviews_total",
			Help: "TokenReviews sent to the API server (a token's user is kept for a while), by HTTP code.",
		}, []string{"code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "accelc_serve_token_review_duration_seconds", Help: "Time the API server took to review a token.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"code"}),
	}
	// The backoff Kubernetes' API servers use for their webhooks
	// (k8s.io/apiserver/pkg/server/options.DefaultAuthWebhookRetryBackoff).
	backoff := wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
	tokens, err := webhooktoken.NewFromInterface(cs.AuthenticationV1(), nil, backoff, 10*time.Second, webhooktoken.AuthenticatorMetrics{
		RecordRequestTotal: func(_ context.Context, code string) { a.reviews.WithLabelValues(code).Inc() },
		RecordRequestLatency: func(_ context.Context, code string, latency float64) {
			a.latency.WithLabelValues(code).Observe(latency)
		},
	})
	if err != nil {
		return nil, err
	}
	// As authenticatorfactory.DelegatingAuthenticatorConfig puts it
	// together: bearer tokens, reviewed, kept, and every user found in
	// system:authenticated.
	a.authn = group.NewAuthenticatedGroupAdder(bearertoken.New(tokencache.New(tokens, false, opts.CacheTTL, opts.DenyCacheTTL)))
	a.authz, err = authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: cs.AuthorizationV1(),
		AllowCacheTTL:             opts.CacheTTL,
		DenyCacheTTL:              opts.DenyCacheTTL,
		WebhookRetryBackoff:       &backoff,
	}.New()
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Collectors are the reviews' metrics, for the server's /metrics.
func (a *Access) Collectors() []prometheus.Collector {
	return []prometheus.Collector{a.reviews, a.latency}
}

// errNoCredentials is a request without a bearer token; errUnknownToken
// one whose token the cluster does not accept.
var (
	errNoCredentials = errors.New("no credentials")
	errUnknownToken  = errors.New("the token is not one the cluster knows")
)

// authenticate is the request's user: from its Authorization header, else
// from X-Forwarded-Access-Token (oauth-proxy). errNoCredentials when it
// carries neither; another error when the token is not the cluster's or
// the cluster could not be asked.
func (a *Access) authenticate(r *http.Request) (user.Info, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, _ := strings.Cut(strings.TrimSpace(h), " ")
		if !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(token) == "" {
			return nil, errUnknownToken
		}
	} else {
		t := strings.TrimSpace(r.Header.Get(forwardedToken))
		if t == "" {
			return nil, errNoCredentials
		}
		// A copy: the authenticator takes the header off the request it
		// reads, and the handler's request keeps its own.
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+t)
	}
	resp, ok, err := a.authn.AuthenticateRequest(r)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errUnknownToken
	}
	return resp.User, nil
}

// right is one question this server asks about a user.
type right struct {
	verb, group, resource, namespace string
	// path, for a non-resource URL (/metrics).
	path string
}

func (q right) key() string {
	if q.path != "" {
		return q.verb + " " + q.path
	}
	return q.verb + " " + q.resource + "." + q.group + " " + q.namespace
}

func (q right) String() string {
	switch {
	case q.path != "":
		return fmt.Sprintf("%s on %s", q.verb, q.path)
	case q.namespace != "":
		return fmt.Sprintf("%s on %s in namespace %s", q.verb, qualified(q.resource, q.group), q.namespace)
	}
	return fmt.Sprintf("%s on %s", q.verb, qualified(q.resource, q.group))
}

func qualified(resource, group string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}

// The questions.
func catalogRight(profileNamespace string) right {
	return right{verb: "list", group: catalogGroup, resource: catalogResource, namespace: profileNamespace}
}

var (
	nodesRight   = right{verb: "list", resource: "nodes"}
	allPodsRight = right{verb: "list", resource: "pods"}
	metricsRight = right{verb: "get", path: "/metrics"}
)

func podsRight(namespace string) right { return right{verb: "list", resource: "pods", namespace: namespace} }

// userKey is what makes two requests the same user to the authorizer:
// name, uid, groups and extra (OpenShift's scopes are extra).
func userKey(u user.Info) string {
	var b strings.Builder
	b.WriteString(u.GetName())
	b.WriteByte(0)
	b.WriteString(u.GetUID())
	for _, g := range u.GetGroups() {
		b.WriteByte(0)
		b.WriteString(g)
	}
	extra := u.GetExtra()
	if len(extra) > 0 {
		keys := make([]string, 0, len(extra))
		for k := range extra {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b.WriteByte(1)
			b.WriteString(k)
			for _, v := range extra[k] {
				b.WriteByte(0)
				b.WriteString(v)
			}
		}
	}
	return b.String()
}

// rights are u's kept decisions, made anew once they expire.
func (a *Access) rights(u user.Info) *userRights {
	key := userKey(u)
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.users[key]; ok && now.Before(r.expires) {
		return r
	}
	if len(a.users) >= accessUsersMax {
		for k, r := range a.users {
			if !now.Before(r.expires) {
				delete(a.users, k)
			}
		}
		if len(a.users) >= accessUsersMax {
			clear(a.users)
		}
	}
	r := &userRights{expires: now.Add(a.ttl), allowed: map[string]bool{}}
	a.users[key] = r
	return r
}

// may says whether u may do q. An error is the cluster not answering:
// nothing is kept, and the request is refused.
func (a *Access) may(ctx context.Context, u user.Info, q right) (bool, error) {
	r := a.rights(u)
	k := q.key()
	r.mu.Lock()
	ok, known := r.allowed[k]
	r.mu.Unlock()
	if known {
		return ok, nil
	}
	attrs := authorizer.AttributesRecord{User: u, Verb: q.verb}
	if q.path != "" {
		attrs.Path = q.path
	} else {
		attrs.ResourceRequest = true
		attrs.APIGroup, attrs.Resource, attrs.Namespace = q.group, q.resource, q.namespace
		attrs.APIVersion = "*"
	}
	d, _, err := a.authz.Authorize(ctx, attrs)
	if err != nil {
		return false, err
	}
	ok = d == authorizer.DecisionAllow
	r.mu.Lock()
	r.allowed[k] = ok
	r.mu.Unlock()
	return ok, nil
}

// podsIn is which of namespaces (sorted, no repeats) u may list pods in:
// all of them when u may list pods in every namespace, else each asked
// (at most accessParallel reviews at once). A namespace the cluster did
// not answer for is left out.
func (a *Access) podsIn(ctx context.Context, u user.Info, namespaces []string) (allowed []string, all bool) {
	if ok, err := a.may(ctx, u, allPodsRight); err == nil && ok {
		return namespaces, true
	}
	may := make([]bool, len(namespaces))
	sem := make(chan struct{}, accessParallel)
	var wg sync.WaitGroup
	for i, ns := range namespaces {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ok, err := a.may(ctx, u, podsRight(ns))
			may[i] = err == nil && ok
		})
	}
	wg.Wait()
	for i, ns := range namespaces {
		if may[i] {
			allowed = append(allowed, ns)
		}
	}
	return allowed, len(allowed) == len(namespaces)
}

// accessParallel bounds the access reviews one request asks at once.
const accessParallel = 8

// requester is who made a request, once Access let it in: nil when the
// server asks no one (no Access).
type requester struct {
	user user.Info
}

type requesterKey struct{}

func requesterOf(r *http.Request) *requester {
	q, _ := r.Context().Value(requesterKey{}).(*requester)
	return q
}

// authenticated lets a request in once its token is the cluster's: with
// no credentials, 401 (the page's shell, for a browser asking for the
// page, which asks for a token); a token the cluster does not know,
// 401; the cluster not answering, 503.
func (s *Server) authenticated(next http.Handler, shell http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := s.opts.Access.authenticate(r)
		switch {
		case errors.Is(err, errNoCredentials):
			if shell != nil {
				shell.ServeHTTP(w, r)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="accelc"`)
			writeError(w, http.StatusUnauthorized, Error{Error: "no credentials: send a Kubernetes bearer token (Authorization: Bearer $(kubectl create token …) or the token of `oc whoami -t`)"})
			return
		case errors.Is(err, errUnknownToken):
			w.Header().Set("WWW-Authenticate", `Bearer realm="accelc", error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, Error{Error: "the cluster does not accept this token (Authorization: Bearer TOKEN): it is unknown or expired; get a new one"})
			return
		case err != nil:
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, Error{Error: "the cluster could not review the token: " + err.Error()})
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requesterKey{}, &requester{user: u})))
	})
}

// allowed checks one right of the request's user before h: 403 naming
// it when the cluster says no, 503 when it does not answer. Without
// Access, h as it is.
func (s *Server) allowed(q func() right, h http.HandlerFunc) http.HandlerFunc {
	if s.opts.Access == nil {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		who := requesterOf(r)
		want := q()
		ok, err := s.opts.Access.may(r.Context(), who.user, want)
		if err != nil {
			w.Header().Set("Retry-After", "1")
			writeError(w, http.StatusServiceUnavailable, Error{Error: "the cluster could not review access: " + err.Error()})
			return
		}
		if !ok {
			writeError(w, http.StatusForbidden, Error{Error: fmt.Sprintf("%s may not read this: it needs %s (RBAC)", who.user.GetName(), want)})
			return
		}
		h(w, r)
	}
}
