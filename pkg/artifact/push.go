package artifact

// Pushing an artifact to an OCI registry: the reference, the connection,
// and the upload of what the registry lacks.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"
)

// PushOptions tune a push.
type PushOptions struct {
	// Tags are written after the artifact, besides the reference's own.
	Tags []string
	// Insecure allows plain HTTP to a registry that is not on loopback.
	Insecure bool
	// Keychain finds credentials; nil is the Docker config and its
	// credential helpers, as docker and crane use them.
	Keychain authn.Keychain
	// Transport is the HTTP transport (nil: http.DefaultTransport).
	Transport http.RoundTripper
	// Retries is how many times a 5xx, 429 or timeout is retried, with
	// exponential backoff (0 means 3).
	Retries int
}

// Pushed is what a push wrote.
type Pushed struct {
	Repository string   `json:"repository"`
	Digest     string   `json:"digest"`
	Tags       []string `json:"tags"`
	// Ref is the repository at the digest: what an OCIRepository pins.
	Ref string `json:"ref"`
	// Signature is the signature pushed beside it, when it was signed.
	Signature *Signed `json:"signature,omitempty"`
}

// ParseURL reads oci://HOST/REPO:TAG (or @sha256:…).
func ParseURL(url string, insecure bool) (name.Reference, error) {
	rest, ok := strings.CutPrefix(url, "oci://")
	if !ok {
		return nil, fmt.Errorf("%q: write the destination as oci://HOST/REPOSITORY:TAG", url)
	}
	var opts []name.Option
	if insecure || loopback(rest) {
		opts = append(opts, name.Insecure)
	}
	ref, err := name.ParseReference(rest, append(opts, name.StrictValidation)...)
	if err != nil {
		return nil, fmt.Errorf("%q: %v: write it as oci://HOST/REPOSITORY:TAG", url, err)
	}
	return ref, nil
}

// loopback reports whether a reference's registry is this machine.
func loopback(ref string) bool {
	host, _, _ := strings.Cut(ref, "/")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Push writes the artifact to the reference's repository: its blobs,
// then its manifest straight to the reference's tag (by digest where the
// reference has no tag and no extra tag is asked for), then the extra
// tags. A registry refuses a manifest whose blobs it does not hold, and
// the manifest is sent only once every blob is in, so a push that fails
// leaves no tag pointing at a partial artifact: at worst blobs that no
// manifest names, which the registry's garbage collection removes. The
// digest returned is the manifest's, computed here.
//
// It speaks the distribution API itself (go-containerregistry's transport
// for the ping and the credentials, but for a registry on loopback that
// answers a plain HTTP ping without asking for any): one ping; per blob,
// a HEAD, and where the blob is missing a POST and one PUT with the
// content, the blobs side by side; then one manifest PUT per tag. The blobs go up before the
// manifest is asked for, so an image from Build or BuildFiles computes
// its content digest while they travel.
func Push(ctx context.Context, img v1.Image, ref name.Reference, opts PushOptions) (*Pushed, error) {
	r, err := Connect(ctx, ref, opts)
	if err != nil {
		return nil, err
	}
	return r.Push(ctx, img)
}

// Registry is the repository a reference names, pinged and logged in
// to, with the tags to write: Connect it while the artifact is still
// being built (the ping and the token are a round trip each to a registry
// across the network), then Push.
type Registry struct {
	*registry
	tags []string
}

// Connect checks the tags, pings the reference's registry and gets the
// credentials to push to its repository. It sends nothing that writes.
func Connect(ctx context.Context, ref name.Reference, opts PushOptions) (*Registry, error) {
	// Every tag is checked before anything is sent: a bad one found
	// after the upload would leave the artifact untagged.
	if err := CheckTags(opts.Tags); err != nil {
		return nil, err
	}
	repo := ref.Context()
	tags := []string{}
	if t, ok := ref.(name.Tag); ok {
		tags = append(tags, t.TagStr())
	}
	for _, t := range opts.Tags {
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	r, err := newRegistry(ctx, repo, opts)
	if err != nil {
		return nil, explain(repo, err)
	}
	return &Registry{registry: r, tags: tags}, nil
}

// Push writes img to the repository and its tags, as the package's Push
// does.
func (r *Registry) Push(ctx context.Context, img v1.Image) (*Pushed, error) {
	repo, tags := r.repo, r.tags
	if err := r.uploadBlobs(ctx, img); err != nil {
		return nil, explain(repo, err)
	}
	raw, err := img.RawManifest()
	if err != nil {
		return nil, explain(repo, err)
	}
	mt, err := img.MediaType()
	if err != nil {
		return nil, explain(repo, err)
	}
	h, _, err := v1.SHA256(bytes.NewReader(raw))
	if err != nil {
		return nil, explain(repo, err)
	}
	digest := h.String()
	first := digest
	if len(tags) > 0 {
		first = tags[0]
	}
	if err := r.putManifest(ctx, first, raw, mt); err != nil {
		return nil, explain(repo, err)
	}
	if len(tags) > 1 {
		g, gctx := errgroup.WithContext(ctx)
		for _, t := range tags[1:] {
			g.Go(func() error { return r.putManifest(gctx, t, raw, mt) })
		}
		if err := g.Wait(); err != nil {
			return nil, explain(repo, fmt.Errorf("the artifact is pushed as %s:%s but not every tag: %w", repo, first, err))
		}
	}
	return &Pushed{Repository: repo.String(), Digest: digest, Tags: tags, Ref: repo.Digest(digest).String()}, nil
}

// registry is one repository of a registry, pinged and logged in to.
type registry struct {
	repo name.Repository
	// scheme is http where the registry answered a plain HTTP ping, else
	// the registry's guess (http on loopback and private networks, else
	// https): go-containerregistry's transport sets the one its ping
	// found.
	scheme string
	client *http.Client
}

// newRegistry pings the registry and gets the credentials to push to
// repo (a token, where the registry wants one): the transport of the
// requests that follow.
func newRegistry(ctx context.Context, repo name.Repository, opts PushOptions) (*registry, error) {
	opts = opts.withDefaults()
	auth, err := authn.Resolve(ctx, opts.Keychain, repo)
	if err != nil {
		return nil, err
	}
	var rt http.RoundTripper = &retrying{next: opts.tlsOnly(repo), retries: opts.Retries, wait: retryWait}

	rt = transport.NewUserAgent(rt, "accelc")
	if loopback(repo.RegistryStr()) && openOverHTTP(ctx, repo, rt) {
		return &registry{repo: repo, scheme: "http", client: &http.Client{Transport: rt, CheckRedirect: sameHostOrPublic}}, nil
	}
	rt, err = transport.NewWithContext(ctx, repo.Registry, auth, rt, []string{repo.Scope(transport.PushScope)})
	if err != nil {
		return nil, err
	}
	return &registry{repo: repo, scheme: repo.Scheme(), client: &http.Client{Transport: rt, CheckRedirect: sameHostOrPublic}}, nil
}

// openOverHTTP pings a registry on loopback over plain HTTP and reports
// whether it answers without asking for credentials: then its requests
// need neither. go-containerregistry's ping tries HTTPS first and HTTP
// only once that fails, a round trip and a TLS handshake more for the
// plain-HTTP registry on this machine that development and CI use. Any
// other answer (a challenge, a TLS server, an error) leaves it to
// go-containerregistry's ping, as for every other registry.
func openOverHTTP(ctx context.Context, repo name.Repository, rt http.RoundTripper) bool {
	u := url.URL{Scheme: "http", Host: repo.RegistryStr(), Path: "/v2/"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return false
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// url is the address of path under the repository.
func (r *registry) url(path string) string {
	u := url.URL{Scheme: r.scheme, Host: r.repo.RegistryStr(), Path: "/v2/" + r.repo.RepositoryStr() + path}
	return u.String()
}

// do sends a request and checks its answer's status, returning the
// answer, its body read and closed.
func (r *registry) do(ctx context.Context, method, url string, body []byte, contentType string, want ...int) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	if err := transport.CheckError(resp, want...); err != nil {
		resp.Body.Close()
		return nil, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp, nil
}

// uploadBlobs uploads the image's layers and config, side by side.
func (r *registry) uploadBlobs(ctx context.Context, img v1.Image) error {
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	configName, err := img.ConfigName()
	if err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return r.uploadBlob(ctx, configName, config) })
	for _, l := range layers {
		g.Go(func() error {
			h, err := l.Digest()
			if err != nil {
				return err
			}
			rc, err := l.Compressed()
			if err != nil {
				return err
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				return err
			}
			return r.uploadBlob(ctx, h, data)
		})
	}
	return g.Wait()
}

// uploadBlob uploads a blob the repository does not hold: a POST opens
// an upload, one PUT sends the content and closes it (the distribution
// spec's monolithic upload, as containerd and ORAS push).
func (r *registry) uploadBlob(ctx context.Context, h v1.Hash, data []byte) error {
	resp, err := r.do(ctx, http.MethodHead, r.url("/blobs/"+h.String()), nil, "", http.StatusOK, http.StatusNotFound)
	if err != nil {
		return fmt.Errorf("blob %s: %w", h, err)
	}
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	resp, err = r.do(ctx, http.MethodPost, r.url("/blobs/uploads/"), nil, "", http.StatusAccepted)
	if err != nil {
		return fmt.Errorf("blob %s: starting its upload: %w", h, err)
	}
	loc, err := location(resp)
	if err != nil {
		return fmt.Errorf("blob %s: starting its upload: %w", h, err)
	}
	q := loc.Query()
	q.Set("digest", h.String())
	loc.RawQuery = q.Encode()
	if _, err := r.do(ctx, http.MethodPut, loc.String(), data, "application/octet-stream", http.StatusCreated); err != nil {
		return fmt.Errorf("blob %s: uploading it: %w", h, err)
	}
	return nil
}

// putManifest writes the manifest by tag or digest.
func (r *registry) putManifest(ctx context.Context, tagOrDigest string, raw []byte, mt types.MediaType) error {
	_, err := r.do(ctx, http.MethodPut, r.url("/manifests/"+tagOrDigest), raw, string(mt), http.StatusOK, http.StatusCreated, http.StatusAccepted)
	if err != nil {
		return fmt.Errorf("manifest %s: %w", tagOrDigest, err)
	}
	return nil
}

// location is an answer's Location, resolved against its request. A
// registry may send the upload elsewhere (a storage bucket), but not from
// another host to a private or link-local address.
func location(resp *http.Response) (*url.URL, error) {
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil, errors.New("the registry's answer has no Location")
	}
	u, err := url.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("the registry's Location %q: %w", loc, err)
	}
	u = resp.Request.URL.ResolveReference(u)
	if !publicOrSameHost(resp.Request.URL.Hostname(), u.Hostname()) {
		return nil, fmt.Errorf("the registry sends the upload from %s to the private address %s: refused", resp.Request.URL.Hostname(), u.Hostname())
	}
	return u, nil
}

// sameHostOrPublic refuses a redirect from one host to another's private
// or link-local address.
func sameHostOrPublic(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if len(via) > 0 && !publicOrSameHost(via[0].URL.Hostname(), req.URL.Hostname()) {
		return fmt.Errorf("the registry redirects from %s to the private address %s: refused", via[0].URL.Hostname(), req.URL.Hostname())
	}
	return nil
}

func publicOrSameHost(from, to string) bool {
	if from == to {
		return true
	}
	ip := net.ParseIP(strings.Trim(to, "[]"))
	return ip == nil || !(ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified())
}

// retrying retries a request that timed out, lost its connection or got
// 408, 429 or a 5xx but 501 and 505, with exponential backoff and its
// body sent again.
type retrying struct {
	next    http.RoundTripper
	retries int
	wait    time.Duration
}

func (t *retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	wait := t.wait
	for try := 0; ; try++ {
		if try > 0 {
			select {
			case <-req.Context().Done():
				return nil, req.Context().Err()
			case <-time.After(wait):
			}
			wait *= 2
			if req.Body != nil && req.Body != http.NoBody {
				if req.GetBody == nil {
					return nil, errors.New("cannot send the request again: its body cannot be read twice")
				}
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				req = req.Clone(req.Context())
				req.Body = body
			}
		}
		resp, err := t.next.RoundTrip(req)
		if try >= t.retries || !retryable(resp, err) || req.Context().Err() != nil {
			return resp, err
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
		}
	}
}

func retryable(resp *http.Response, err error) bool {
	if err != nil {
		var ne net.Error
		return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, syscall.ECONNRESET) ||
			errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
	}
	return slices.Contains(retryStatus, resp.StatusCode)
}

// validTag is the OCI distribution spec's tag grammar,
// [a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}. (As a regexp, the bounded repeat
// compiles to 128 states at start-up: 0.5 ms of every accelc command.)
func validTag(t string) bool {
	if len(t) == 0 || len(t) > 128 || t[0] == '.' || t[0] == '-' {
		return false
	}
	for i := 0; i < len(t); i++ {
		switch c := t[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.', c == '-':
		default:
			return false
		}
	}
	return true
}

// CheckTags checks tags against the OCI distribution spec's grammar
// ([A-Za-z0-9_][A-Za-z0-9._-]{0,127}), naming every one that breaks it.
func CheckTags(tags []string) error {
	var bad []string
	for _, t := range tags {
		if !validTag(t) {
			bad = append(bad, strconv.Quote(t))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("tag %s: a tag is 1 to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'", strings.Join(bad, ", "))
	}
	return nil
}

// retryStatus are the answers a request is sent again for (with
// exponential backoff from retryWait): a timeout, too many requests, and
// the 5xx a registry or its proxy gives while it recovers (not 501, 505).
var retryStatus = []int{http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
	http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout}

const retryWait = 500 * time.Millisecond

// withDefaults fills what the options leave out: the Docker config's
// credentials, http.DefaultTransport, 3 retries.
func (o PushOptions) withDefaults() PushOptions {
	if o.Keychain == nil {
		o.Keychain = authn.DefaultKeychain
	}
	if o.Transport == nil {
		o.Transport = http.DefaultTransport
	}
	if o.Retries <= 0 {
		o.Retries = 3
	}
	return o
}

// tlsOnly is the options' transport, refusing plain HTTP to repo but on
// loopback or with Insecure.
func (o PushOptions) tlsOnly(repo name.Repository) tlsOnly {
	return tlsOnly{next: o.Transport, allowHTTP: o.Insecure || loopback(repo.RegistryStr())}
}

// remoteOptions are go-containerregistry's options for what Push does not
// send itself (pulls, signatures), with Push's credentials, transport and
// retries.
func remoteOptions(ctx context.Context, ref name.Reference, opts PushOptions) []remote.Option {
	opts = opts.withDefaults()
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(opts.Keychain),
		remote.WithTransport(opts.tlsOnly(ref.Context())),
		remote.WithRetryBackoff(remote.Backoff{Duration: retryWait, Factor: 2, Jitter: 0.1, Steps: opts.Retries + 1}),
		remote.WithRetryStatusCodes(retryStatus...),
		remote.WithUserAgent("accelc"),
	}
}

// tlsOnly refuses plain HTTP unless it was allowed: go-containerregistry
// speaks HTTP to private-network registries on its own, and a push of
// cluster policy must not travel unencrypted by accident.
type tlsOnly struct {
	next      http.RoundTripper
	allowHTTP bool
}

func (t tlsOnly) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Scheme != "https" && !t.allowHTTP {
		return nil, fmt.Errorf("refusing plain HTTP to %s: use a registry with TLS, or pass --insecure", r.URL.Host)
	}
	return t.next.RoundTrip(r)
}

func explain(repo name.Repository, err error) error {
	return fmt.Errorf("pushing to %s: %w", repo, err)
}

// Pull fetches an artifact and returns the files of its content layer, by
// slash-separated path, read as ReadLayer reads them: streamed, within
// read.Limits, holding only the contents read.Keep wants. Every error
// names the artifact as oci://REF.
func Pull(ctx context.Context, ref name.Reference, opts PushOptions, read ReadOptions) (map[string][]byte, error) {
	where := "oci://" + ref.String()
	img, err := remote.Image(ref, remoteOptions(ctx, ref, opts)...)
	if err != nil {
		return nil, fmt.Errorf("pulling %s: %w", where, err)
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, fmt.Errorf("pulling %s: %w", where, err)
	}
	for _, l := range layers {
		mt, err := l.MediaType()
		if err != nil || mt != ContentMediaType {
			continue
		}
		rc, err := l.Compressed()
		if err != nil {
			return nil, fmt.Errorf("pulling %s: %w", where, err)
		}
		defer rc.Close()
		files, err := ReadLayer(rc, read)
		if err != nil {
			return nil, fmt.Errorf("artifact %s: reading its content layer: %w", where, err)
		}
		return files, nil
	}
	return nil, fmt.Errorf("%s has no %s layer: not an artifact accelc push or flux push artifact made", where, ContentMediaType)
}
