package artifact

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
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

// Push writes the artifact to the reference's repository by digest, then
// the reference's tag and the extra tags, so that a push that fails
// leaves no tag pointing at a partial artifact.
func Push(ctx context.Context, img v1.Image, ref name.Reference, opts PushOptions) (*Pushed, error) {
	// Every tag is checked before anything is sent: a bad one found
	// after the upload would leave the artifact untagged.
	if err := CheckTags(opts.Tags); err != nil {
		return nil, err
	}
	digest, err := img.Digest()
	if err != nil {
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
	// One pusher for the artifact and its tags: one ping and one token
	// for the repository, not one per request.
	pusher, err := remote.NewPusher(remoteOptions(ctx, ref, opts)...)
	if err != nil {
		return nil, explain(repo, err)
	}
	if err := remote.Write(repo.Digest(digest.String()), img, remote.WithContext(ctx), remote.Reuse(pusher)); err != nil {
		return nil, explain(repo, err)
	}
	for _, t := range tags {
		if err := remote.Tag(repo.Tag(t), img, remote.WithContext(ctx), remote.Reuse(pusher)); err != nil {
			return nil, explain(repo, err)
		}
	}
	return &Pushed{Repository: repo.String(), Digest: digest.String(), Tags: tags, Ref: repo.Digest(digest.String()).String()}, nil
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

func remoteOptions(ctx context.Context, ref name.Reference, opts PushOptions) []remote.Option {
	kc := opts.Keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	tr := opts.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	retries := opts.Retries
	if retries <= 0 {
		retries = 3
	}
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(kc),
		remote.WithTransport(tlsOnly{next: tr, allowHTTP: opts.Insecure || loopback(ref.Context().RegistryStr())}),
		remote.WithRetryBackoff(remote.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: retries + 1}),
		remote.WithRetryStatusCodes(http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
			http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout),
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
