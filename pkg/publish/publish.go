// Package publish packs a rendered tree as Flux's OCI artifact and pushes
// it: `accelc push`. It reads the tree with pkg/rendered and the Git
// checkout with git itself, and imports neither the compiler nor a
// Kubernetes client, so that push starts as fast as the registry client
// allows; pkg/accelc re-exports it.
package publish

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/accelc/accelc/internal/errkind"
	"github.com/accelc/accelc/pkg/artifact"
	"github.com/accelc/accelc/pkg/rendered"
	"github.com/accelc/accelc/pkg/safeurl"
)

// Options say what to publish, where, and how to annotate and sign
// it.
type Options struct {
	// Dir is the tree `accelc render` wrote.
	Dir string
	// Dest is oci://HOST/REPOSITORY:TAG.
	Dest string
	// Tags are more tags to point at the artifact.
	Tags []string
	// Annotations are extra manifest annotations, each key=value.
	Annotations []string
	// Source and Revision annotate the artifact; empty, they come from
	// the Git checkout Dir is in (origin's URL, <branch>@sha1:<commit>).
	Source, Revision string
	// Created is the creation time, RFC 3339; empty, the commit's.
	Created string
	// Insecure allows plain HTTP to a registry that is not on loopback.
	Insecure bool
	// SignKey signs the artifact as cosign does with this key file.
	SignKey string
	// Password is the cosign key's password; nil reads $COSIGN_PASSWORD.
	Password []byte
	// Log gets the notes (paths left out, no source annotation, the
	// creation time when there is no commit); nil discards them.
	Log io.Writer
	// Checkout reads the Git facts; nil is Checkout.
	Checkout func(dir string) GitCheckout
}

// Push packs the rendered tree in opts.Dir as Flux's OCI artifact and
// pushes it (its blobs, then its manifest to each tag), signing it where
// asked. Wrong options are UsageErrors, a tree that is not accelc's is
// the input's error, and a registry that fails is an OutsideError; a
// signature that fails after the push says that the artifact is there,
// unsigned.
//
// The registry is pinged and logged in to while the tree is read and
// packed (a round trip or two to a registry across the network), and git
// runs meanwhile too; nothing is sent that writes until the artifact is
// built and the signing key read.
func Push(ctx context.Context, opts Options) (*artifact.Pushed, error) {
	ref, meta, err := opts.check()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	popts := artifact.PushOptions{Tags: opts.Tags, Insecure: opts.Insecure}
	type connected struct {
		registry *artifact.Registry
		err      error
	}
	conn := make(chan connected, 1)
	go func() {
		r, err := artifact.Connect(ctx, ref, popts)
		conn <- connected{r, err}
	}()
	img, key, err := opts.pack(meta)
	if err != nil {
		cancel()
		<-conn
		return nil, err
	}
	c := <-conn
	if c.err != nil {
		return nil, &errkind.OutsideError{Err: c.err}
	}
	pushed, err := c.registry.Push(ctx, img)
	if err != nil {
		return nil, &errkind.OutsideError{Err: err}
	}
	if key != nil {
		if pushed.Signature, err = artifact.Sign(ctx, ref.Context().Digest(pushed.Digest), key, popts); err != nil {
			return pushed, &errkind.OutsideError{Err: fmt.Errorf("the artifact is pushed (%s) but not signed: %w", pushed.Ref, err)}
		}
	}
	return pushed, nil
}

// pack reads the tree (git runs meanwhile, where meta lacks what it
// gives), builds the artifact and reads the signing key: the key is read
// before anything is sent, for a wrong password must not leave an
// unsigned artifact behind.
func (o *Options) pack(meta artifact.Metadata) (v1.Image, *ecdsa.PrivateKey, error) {
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	if st, err := os.Stat(o.Dir); err != nil || !st.IsDir() {
		return nil, nil, fmt.Errorf("%s: not a directory: give the tree `accelc render` wrote", o.Dir)
	}
	git := make(chan GitCheckout, 1)
	go func() { git <- o.checkout(meta) }()
	tree, err := rendered.Read(o.Dir)
	if err != nil {
		<-git
		return nil, nil, err
	}
	if len(tree.Extra) > 0 {
		fmt.Fprintf(log, "note: %d path(s) in %s that accelc did not render are left out: %s\n", len(tree.Extra), o.Dir, listSome(tree.Extra, 10))
	}
	// render's record of the content digest spares reading the YAML
	// again; a tree edited since, or not rendered by this accelc, is read.
	digest, ok, why := tree.ContentDigest()
	if ok {
		meta.ContentDigest = digest
	} else if why != "" {
		fmt.Fprintf(log, "note: %s: computing the content digest from the files\n", why)
	}
	fromCheckout(&meta, <-git, log)
	files := make([]artifact.File, len(tree.Files))
	for i, f := range tree.Files {
		files[i] = artifact.File{Path: f.Path, Data: f.Data, Mode: f.Mode}
	}
	img, _, err := artifact.BuildFiles(files, meta)
	if err != nil {
		return nil, nil, fmt.Errorf("packing %s: %w", o.Dir, err)
	}
	if o.SignKey == "" {
		return img, nil, nil
	}
	password := o.Password
	if password == nil {
		password = []byte(os.Getenv("COSIGN_PASSWORD"))
	}
	key, err := artifact.LoadSigningKey(o.SignKey, password)
	if err != nil {
		return nil, nil, err
	}
	return img, key, nil
}

// check reads the options that need no file or network: the destination,
// tags, annotations, source and creation time.
func (o *Options) check() (ref name.Reference, meta artifact.Metadata, err error) {
	if ref, err = artifact.ParseURL(o.Dest, o.Insecure); err != nil {
		return nil, meta, usage(err)
	}
	if err := artifact.CheckTags(o.Tags); err != nil {
		return nil, meta, usage(fmt.Errorf("--%w", err))
	}
	if meta.Annotations, err = parseAnnotations(o.Annotations); err != nil {
		return nil, meta, usage(err)
	}
	meta.Revision = o.Revision
	if o.Source != "" {
		src, ok := safeurl.Source(o.Source)
		if !ok {
			return nil, meta, usage(errors.New("--source: not a URL accelc can publish: write scheme://HOST/PATH (https, http, ssh or git) or HOST:PATH, without credentials"))
		}
		meta.Source = src
	}
	if o.Created != "" {
		if meta.Created, err = time.Parse(time.RFC3339, o.Created); err != nil {
			return nil, meta, usage(fmt.Errorf("--created %s: give an RFC 3339 time, such as 2026-11-20T09:30:00Z", o.Created))
		}
	}
	return ref, meta, nil
}

// checkout reads the Git checkout where meta lacks something it gives:
// with the source, revision and creation time all given, git never runs.
func (o *Options) checkout(meta artifact.Metadata) GitCheckout {
	if meta.Source != "" && meta.Revision != "" && !meta.Created.IsZero() {
		return GitCheckout{}
	}
	if o.Checkout != nil {
		return o.Checkout(o.Dir)
	}
	return Checkout(o.Dir)
}

// fromCheckout fills what the options left out of meta from the Git
// checkout: origin's URL (cleaned), the revision and the commit's time.
func fromCheckout(meta *artifact.Metadata, git GitCheckout, log io.Writer) {
	if meta.Source == "" && git.Remote != "" {
		src, ok := safeurl.Source(git.Remote)
		if !ok {
			fmt.Fprintln(log, "note: origin's URL is not one accelc can publish safely (scheme://HOST/PATH or USER@HOST:PATH): the artifact has no source annotation; pass --source")
		}
		meta.Source = src
	}
	if meta.Revision == "" {
		meta.Revision = git.Revision
	}
	switch {
	case !meta.Created.IsZero():
	case !git.Committed.IsZero():
		meta.Created = git.Committed
	default:
		meta.Created = time.Unix(0, 0)
		fmt.Fprintln(log, "note: not a Git checkout and no --created: the artifact's creation time is 1970-01-01T00:00:00Z, as `flux push artifact --reproducible` sets it")
	}
}

func usage(err error) error { return &errkind.UsageError{Err: err} }

func parseAnnotations(kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--annotation %q: write key=value", kv)
		}
		out[k] = v
	}
	return out, nil
}

// listSome joins up to n items, and says how many more there are.
func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
