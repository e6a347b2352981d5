package serve

// Who may read what: bearer tokens reviewed by the cluster, each user's
// rights by access review, cached for a while.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
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

// Access asks the cluster who a request's bearer token is (a TokenReview)
// and what that user may read (SubjectAccessReviews), as Kubernetes'
// aggregated API servers do, and keeps the answers as they do
// (k8s.io/apiserver's delegating authenticator and authorizer): a token's
// user for CacheTTL, a token the cluster refused for DenyCacheTTL, keyed
// by the token's SHA-256, never the token; an allowed review for
// CacheTTL, a denied one for DenyCacheTTL; an answer that failed is not
// kept. The same reviews, through client-go's clients for
// authentication.k8s.io/v1 and authorization.k8s.io/v1, without
// k8s.io/apiserver itself: linking its authenticator and authorizer
// costs every accelc command some 18 ms of CPU and 20 MB of memory at
// start (cmd/accelc-core TestDeps), for two API calls and two maps.
// Concurrent requests with the same new token share one review.
// Both reviews go through rest clients of their groups alone (restClient).
type Access struct {
	authn, authz *rest.RESTClient
	ttl          time.Duration // CacheTTL
	deny         time.Duration // DenyCacheTTL

	reviewing, asking singleflight.Group

	mu     sync.Mutex
	byHash map[[sha256.Size]byte]*tokenAnswer
	users  map[string]*userRights

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

// accessKeptMax bounds the tokens, and the users, whose answers are kept
// at once: past it, the expired go, and if none has, all.
const accessKeptMax = 4096

// tokenAnswer is what the cluster said of a token, until expires.
type tokenAnswer struct {
	user    *User
	expires time.Time
}

// userRights are one user's decisions.
type userRights struct {
	key     string    // userKey
	used    time.Time // under Access.mu
	mu      sync.Mutex
	allowed map[string]decision
}

type decision struct {
	ok      bool
	expires time.Time
}

// User is who the cluster says a token is.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// NewAccess asks the cluster cfg reaches, with cfg's credentials (which
// need create on tokenreviews and subjectaccessreviews: the
// system:auth-delegator ClusterRole).
func NewAccess(cfg *rest.Config, opts AccessOptions) (*Access, error) {
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = time.Minute
	}
	if opts.DenyCacheTTL <= 0 {
		opts.DenyCacheTTL = 10 * time.Second
	}
	// Reviews are small and many users may come at once.
	authn, err := restClient(cfg, authenticationv1.SchemeGroupVersion, authenticationv1.AddToScheme, 50, 100)
	if err != nil {
		return nil, err
	}
	authz, err := restClient(cfg, authorizationv1.SchemeGroupVersion, authorizationv1.AddToScheme, 50, 100)
	if err != nil {
		return nil, err
	}
	return &Access{
		authn:  authn,
		authz:  authz,
		ttl:    opts.CacheTTL,
		deny:   opts.DenyCacheTTL,
		byHash: map[[sha256.Size]byte]*tokenAnswer{},
		users:  map[string]*userRights{},
		reviews: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "accelc_serve_access_reviews_total",
			Help: "TokenReviews and SubjectAccessReviews sent to the API server (answers are kept a while), by kind and result: allowed, denied, unknown (a token the cluster does not know), error.",
		}, []string{"kind", "result"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "accelc_serve_access_review_duration_seconds", Help: "Time the API server took to answer a review, by kind.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"kind"}),
	}, nil
}

// restClient is a client of one API group's version, with its types
// alone (client-go's clientset would link every group's, and its
// scheme's start-up cost, into every accelc command), at most qps
// requests a second.
func restClient(cfg *rest.Config, gv schema.GroupVersion, add func(*runtime.Scheme) error, qps float32, burst int) (*rest.RESTClient, error) {
	scheme := runtime.NewScheme()
	if err := add(scheme); err != nil {
		return nil, err
	}
	c := rest.CopyConfig(cfg)
	c.APIPath, c.GroupVersion = "/apis", &gv
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	c.QPS, c.Burst = max(c.QPS, qps), max(c.Burst, burst)
	return rest.RESTClientFor(c)
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
// carries neither; errUnknownToken, wrapped, when the cluster does not
// accept the token or could not review it (as Kubernetes' servers refuse
// a token they could not review).
func (a *Access) authenticate(r *http.Request) (*User, error) {
	var token string
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, t, _ := strings.Cut(strings.TrimSpace(h), " ")
		if !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(t) == "" {
			return nil, errUnknownToken
		}
		token = strings.TrimSpace(t)
	} else if token = strings.TrimSpace(r.Header.Get(forwardedToken)); token == "" {
		return nil, errNoCredentials
	}
	hash := sha256.Sum256([]byte(token))
	now := time.Now()
	a.mu.Lock()
	kept, ok := a.byHash[hash]
	a.mu.Unlock()
	if ok && now.Before(kept.expires) {
		if kept.user == nil {
			return nil, errUnknownToken
		}
		return kept.user, nil
	}
	review := func(ctx context.Context) (any, error) {
		v, err, _ := a.reviewing.Do(string(hash[:]), func() (any, error) { return a.reviewToken(ctx, token, hash) })
		return v, err
	}
	// A user just past its time is still the answer while the token is
	// reviewed again in the background, as decisions are (decide).
	if ok && kept.user != nil && now.Before(kept.expires.Add(a.deny)) {
		go func() { _, _ = review(context.WithoutCancel(r.Context())) }()
		return kept.user, nil
	}
	v, err := review(r.Context())
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errUnknownToken, err)
	}
	if u := v.(*User); u != nil {
		return u, nil
	}
	return nil, errUnknownToken
}

// reviewToken asks the cluster who token is and keeps the answer: a nil user
// is a token the cluster does not know.
func (a *Access) reviewToken(ctx context.Context, token string, hash [sha256.Size]byte) (*User, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	begin := time.Now()
	tr := &authenticationv1.TokenReview{}
	err := a.authn.Post().Resource("tokenreviews").Body(&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}).Do(ctx).Into(tr)
	a.latency.WithLabelValues("TokenReview").Observe(time.Since(begin).Seconds())
	if err != nil {
		a.reviews.WithLabelValues("TokenReview", "error").Inc()
		return nil, err
	}
	var u *User
	ttl := a.deny
	if tr.Status.Authenticated {
		a.reviews.WithLabelValues("TokenReview", "allowed").Inc()
		info := tr.Status.User
		u = &User{Name: info.Username, UID: info.UID, Groups: info.Groups}
		// Every user the cluster knows is authenticated, as Kubernetes'
		// servers add.
		if !slices.Contains(u.Groups, "system:authenticated") {
			u.Groups = append(slices.Clone(u.Groups), "system:authenticated")
		}
		if len(info.Extra) > 0 {
			u.Extra = make(map[string][]string, len(info.Extra))
			for k, v := range info.Extra {
				u.Extra[k] = v
			}
		}
		ttl = a.ttl
	} else {
		a.reviews.WithLabelValues("TokenReview", "unknown").Inc()
	}
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.byHash) >= accessKeptMax {
		for k, t := range a.byHash {
			if !now.Before(t.expires) {
				delete(a.byHash, k)
			}
		}
		if len(a.byHash) >= accessKeptMax {
			clear(a.byHash)
		}
	}
	a.byHash[hash] = &tokenAnswer{user: u, expires: now.Add(ttl)}
	return u, nil
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

func podsRight(namespace string) right {
	return right{verb: "list", resource: "pods", namespace: namespace}
}

// userKey is what makes two requests the same user to the authorizer:
// name, uid, groups and extra (OpenShift's scopes are extra).
func userKey(u *User) string {
	var b strings.Builder
	b.WriteString(u.Name)
	b.WriteByte(0)
	b.WriteString(u.UID)
	for _, g := range u.Groups {
		b.WriteByte(0)
		b.WriteString(g)
	}
	for _, k := range slices.Sorted(maps.Keys(u.Extra)) {
		b.WriteByte(1)
		b.WriteString(k)
		for _, v := range u.Extra[k] {
			b.WriteByte(0)
			b.WriteString(v)
		}
	}
	return b.String()
}

// review asks the cluster whether u may do q (a SubjectAccessReview).
func (a *Access) review(ctx context.Context, u *User, q right) (bool, error) {
	spec := authorizationv1.SubjectAccessReviewSpec{User: u.Name, UID: u.UID, Groups: u.Groups}
	if len(u.Extra) > 0 {
		spec.Extra = make(map[string]authorizationv1.ExtraValue, len(u.Extra))
		for k, v := range u.Extra {
			spec.Extra[k] = v
		}
	}
	if q.path != "" {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: q.path, Verb: q.verb}
	} else {
		spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Namespace: q.namespace, Verb: q.verb, Group: q.group, Resource: q.resource}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	begin := time.Now()
	sar := &authorizationv1.SubjectAccessReview{}
	err := a.authz.Post().Resource("subjectaccessreviews").Body(&authorizationv1.SubjectAccessReview{Spec: spec}).Do(ctx).Into(sar)
	a.latency.WithLabelValues("SubjectAccessReview").Observe(time.Since(begin).Seconds())
	if err != nil {
		a.reviews.WithLabelValues("SubjectAccessReview", "error").Inc()
		return false, err
	}
	result := "allowed"
	if !sar.Status.Allowed {
		result = "denied"
	}
	a.reviews.WithLabelValues("SubjectAccessReview", result).Inc()
	return sar.Status.Allowed, nil
}

// rights are u's kept decisions: each expires on its own; the user's
// entry goes once it has not been used for a while and room is needed.
func (a *Access) rights(u *User) *userRights {
	key := userKey(u)
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.users[key]; ok {
		r.used = now
		return r
	}
	if len(a.users) >= accessKeptMax {
		for k, r := range a.users {
			if now.Sub(r.used) > a.ttl+a.deny {
				delete(a.users, k)
			}
		}
		if len(a.users) >= accessKeptMax {
			clear(a.users)
		}
	}
	r := &userRights{key: key, used: now, allowed: map[string]decision{}}
	a.users[key] = r
	return r
}

// may says whether u may do q: a SubjectAccessReview, kept. An error is
// the cluster not answering: nothing is kept, and the request is refused.
func (a *Access) may(ctx context.Context, u *User, q right) (bool, error) {
	return a.decide(ctx, u, a.rights(u), q)
}

// decide is may with u's kept decisions found.
func (a *Access) decide(ctx context.Context, u *User, r *userRights, q right) (bool, error) {
	k := q.key()
	now := time.Now()
	r.mu.Lock()
	d, known := r.allowed[k]
	r.mu.Unlock()
	if known && now.Before(d.expires) {
		return d.ok, nil
	}
	ask := func(ctx context.Context) (bool, error) {
		// Requests of the same user that come at once (a page's many
		// clients, a cold cache) share one review.
		v, err, _ := a.asking.Do(r.key+"\x00"+k, func() (any, error) {
			ok, err := a.review(ctx, u, q)
			if err == nil {
				ttl := a.ttl
				if !ok {
					ttl = a.deny
				}
				r.mu.Lock()
				r.allowed[k] = decision{ok: ok, expires: time.Now().Add(ttl)}
				r.mu.Unlock()
			}
			return ok, err
		})
		if err != nil {
			return false, err
		}
		return v.(bool), nil
	}
	// A decision just past its time is still the answer while it is
	// asked again, in the background: a user's requests do not wait for
	// the review each time a decision expires (a right taken away is
	// seen one review later).
	if known && now.Before(d.expires.Add(a.deny)) {
		go func() { _, _ = ask(context.WithoutCancel(ctx)) }()
		return d.ok, nil
	}
	return ask(ctx)
}

// podsIn is which of namespaces (sorted, no repeats) u may list pods in:
// all of them when u may list pods in every namespace, else each asked
// (at most accessParallel reviews at once). A namespace the cluster did
// not answer for is left out.
func (a *Access) podsIn(ctx context.Context, u *User, namespaces []string) (allowed []string, all bool) {
	r := a.rights(u)
	if ok, err := a.decide(ctx, u, r, allPodsRight); err == nil && ok {
		return namespaces, true
	}
	// The decisions kept, without a goroutine each: most requests have
	// them all.
	may := make([]bool, len(namespaces))
	var ask []int
	now := time.Now()
	r.mu.Lock()
	for i, ns := range namespaces {
		if d, ok := r.allowed[podsRight(ns).key()]; ok && now.Before(d.expires) {
			may[i] = d.ok
		} else {
			ask = append(ask, i)
		}
	}
	r.mu.Unlock()
	sem := make(chan struct{}, accessParallel)
	var wg sync.WaitGroup
	for _, i := range ask {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ok, err := a.decide(ctx, u, r, podsRight(namespaces[i]))
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
	user *User
}

type requesterKey struct{}

func requesterOf(r *http.Request) *requester {
	q, _ := r.Context().Value(requesterKey{}).(*requester)
	return q
}

// authenticated lets a request in once its token is the cluster's: with
// no credentials, 401 (the page's shell, for a browser asking for the
// page, which asks for a token); a token the cluster does not know, or
// could not review, 401.
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
		case err != nil:
			w.Header().Set("WWW-Authenticate", `Bearer realm="accelc", error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, Error{Error: "the cluster does not accept this token (Authorization: Bearer TOKEN): it is unknown or expired, or could not be reviewed; get a new one (" + err.Error() + ")"})
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
			writeError(w, http.StatusForbidden, Error{Error: fmt.Sprintf("%s may not read this: it needs %s (RBAC)", who.user.Name, want)})
			return
		}
		h(w, r)
	}
}
