package artifact_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/artifact"
)

var created = time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC)

// tree writes a small rendered tree.
func tree(t testing.TB, mode os.FileMode) string {
	t.Helper()
	dir := t.TempDir()
	for path, body := range treeFiles {
		p := filepath.Join(dir, path)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), mode))
	}
	return dir
}

// untar lists a tarball's entries and file contents.
func untar(t testing.TB, data []byte) map[string]string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	out := map[string]string{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		body, err := io.ReadAll(tr)
		require.NoError(t, err)
		assert.Zero(t, hdr.Uid)
		assert.Empty(t, hdr.Uname)
		assert.True(t, hdr.ModTime.IsZero() || hdr.ModTime.Unix() == 0, hdr.Name)
		out[hdr.Name] = string(body)
	}
}

// TestReproducible: the same files give the same digest, whatever their
// times and modes on disk; a changed file gives another.
func TestReproducible(t *testing.T) {
	meta := artifact.Metadata{Source: "https://git.example.com/fleet", Revision: "main@sha1:0123456789abcdef0123456789abcdef01234567", Created: created}
	a, b := tree(t, 0o644), tree(t, 0o664)
	require.NoError(t, os.Chtimes(filepath.Join(b, "nodes/rule.yaml"), time.Now(), time.Now().Add(-time.Hour)))
	imgA, tarA, err := artifact.Build(a, treePaths(), meta)
	require.NoError(t, err)
	imgB, tarB, err := artifact.Build(b, treePaths(), meta)
	require.NoError(t, err)
	assert.Equal(t, tarA, tarB)
	da, _ := imgA.Digest()
	db, _ := imgB.Digest()
	assert.Equal(t, da, db)

	require.NoError(t, os.WriteFile(filepath.Join(b, "nodes/rule.yaml"), []byte("kind: Changed\n"), 0o644))
	imgC, _, err := artifact.Build(b, treePaths(), meta)
	require.NoError(t, err)
	dc, _ := imgC.Digest()
	assert.NotEqual(t, da, dc)

	files := untar(t, tarA)
	assert.Equal(t, "kind: NodeFeatureRule\n", files["nodes/rule.yaml"])
	assert.Contains(t, files, "nodes/")

	// Only the files listed are packed: what else the folder holds is
	// never read.
	require.NoError(t, os.WriteFile(filepath.Join(a, "nodes/rule.yaml~"), []byte("backup"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(a, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(a, ".git/config"), []byte("url = https://bot:s3cret@git.example.com/x"), 0o644))
	_, tarD, err := artifact.Build(a, treePaths(), meta)
	require.NoError(t, err)
	assert.Equal(t, tarA, tarD, "unlisted files leave the artifact as it was")

	require.NoError(t, os.Symlink("rule.yaml", filepath.Join(a, "nodes/link.yaml")))
	_, _, err = artifact.Build(a, treePaths(), meta)
	require.NoError(t, err, "a link that is not listed is not packed")
	_, _, err = artifact.Build(a, append(treePaths(), "nodes/link.yaml"), meta)
	assert.ErrorContains(t, err, "nodes/link.yaml: not a regular file")
	_, _, err = artifact.Build(a, append(treePaths(), "nodes/missing.yaml"), meta)
	assert.ErrorContains(t, err, "1 listed file(s) not found in the tree, or under a link: nodes/missing.yaml")
	_, _, err = artifact.Build(a, []string{"../outside.yaml"}, meta)
	assert.ErrorContains(t, err, "not a path inside the tree")
}

// checkPulled pulls the artifact back and checks what Flux's
// source-controller reads: media types, annotations, the layer.
func checkPulled(t *testing.T, ref string, want map[string]string) {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	require.NoError(t, err)
	img, err := remote.Image(r)
	require.NoError(t, err)
	m, err := img.Manifest()
	require.NoError(t, err)
	assert.Equal(t, "application/vnd.oci.image.manifest.v1+json", string(m.MediaType))
	assert.Equal(t, artifact.ConfigMediaType, m.Config.MediaType)
	require.Len(t, m.Layers, 1)
	assert.Equal(t, artifact.ContentMediaType, m.Layers[0].MediaType)
	assert.Equal(t, "https://git.example.com/fleet", m.Annotations[artifact.AnnotationSource])
	assert.Equal(t, "main@sha1:0123456789abcdef0123456789abcdef01234567", m.Annotations[artifact.AnnotationRevision])
	assert.Equal(t, "2026-11-20T09:30:00Z", m.Annotations[artifact.AnnotationCreated])
	layers, err := img.Layers()
	require.NoError(t, err)
	rc, err := layers[0].Compressed()
	require.NoError(t, err)
	data, err := io.ReadAll(rc)
	require.NoError(t, err)
	got := untar(t, data)
	if want == nil {
		return
	}
	files := map[string]string{}
	for path, body := range got {
		if !strings.HasSuffix(path, "/") {
			files[path] = body
		}
	}
	assert.Equal(t, want, files, "the layer unpacks to the same tree")
}

// treePaths lists treeFiles' paths.
func treePaths() []string {
	return slices.Sorted(maps.Keys(treeFiles))
}

// treeFiles is what tree writes.
var treeFiles = map[string]string{
	"kustomization.yaml":              "resources:\n- nodes\n",
	"nodes/kustomization.yaml":        "resources:\n- rule.yaml\n",
	"nodes/rule.yaml":                 "kind: NodeFeatureRule\n",
	"profiles/hardwareprofile-a.yaml": "kind: HardwareProfile\n",
}

func pushTo(t *testing.T, host string, opts artifact.PushOptions) (*artifact.Pushed, error) {
	t.Helper()
	img, _, err := artifact.Build(tree(t, 0o644), treePaths(), artifact.Metadata{Source: "https://git.example.com/fleet",
		Revision: "main@sha1:0123456789abcdef0123456789abcdef01234567", Created: created})
	require.NoError(t, err)
	ref, err := artifact.ParseURL("oci://"+host+"/accelc/hetero-prod:v1", false)
	require.NoError(t, err)
	if opts.Keychain == nil {
		opts.Keychain = authn.NewMultiKeychain() // no credentials
	}
	return artifact.Push(context.Background(), img, ref, opts)
}

// TestPushInProcess pushes to go-containerregistry's registry: twice
// gives one digest; the artifact and its tags share one ping, and each
// tag is one manifest PUT, sent after every blob is in; a registry that
// fails the manifest or a blob leaves no tag; 5xx answers are retried,
// a blob's upload with its content.
func TestPushInProcess(t *testing.T) {
	var failManifests, failBlobs, fail5xx, failBlobPut5xx, pings atomic.Int32
	var mu sync.Mutex
	var requests []string
	reg := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests = append(requests, r.Method+" "+r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/v2/" {
			pings.Add(1)
		}
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") && failManifests.Load() > 0 {
			failManifests.Add(-1)
			http.Error(w, "disk full", http.StatusInsufficientStorage)
			return
		}
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads/") {
			if failBlobs.Load() > 0 {
				failBlobs.Add(-1)
				http.Error(w, "disk full", http.StatusInsufficientStorage)
				return
			}
			if failBlobPut5xx.Load() > 0 {
				failBlobPut5xx.Add(-1)
				_, _ = io.Copy(io.Discard, r.Body)
				http.Error(w, "try later", http.StatusServiceUnavailable)
				return
			}
		}
		if fail5xx.Load() > 0 {
			fail5xx.Add(-1)
			http.Error(w, "try later", http.StatusServiceUnavailable)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	sent := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := requests
		requests = nil
		return out
	}

	first, err := pushTo(t, host, artifact.PushOptions{Tags: []string{"latest"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"v1", "latest"}, first.Tags)
	assert.Equal(t, int32(1), pings.Load(), "one ping for the artifact and its two tags")
	assert.Equal(t, host+"/accelc/hetero-prod@"+first.Digest, first.Ref)
	reqs := sent()
	var manifests []string
	blobPuts := 0
	for _, r := range reqs {
		switch {
		case strings.HasPrefix(r, "PUT ") && strings.Contains(r, "/manifests/"):
			manifests = append(manifests, r)
		case strings.HasPrefix(r, "PUT ") && strings.Contains(r, "/blobs/uploads/"):
			assert.Empty(t, manifests, "a blob sent after the manifest: %v", reqs)
			blobPuts++
		}
	}
	assert.Equal(t, 2, blobPuts, "the layer and the config, each one PUT: %v", reqs)
	assert.ElementsMatch(t, []string{"PUT /v2/accelc/hetero-prod/manifests/v1", "PUT /v2/accelc/hetero-prod/manifests/latest"}, manifests)
	assert.Equal(t, "PUT /v2/accelc/hetero-prod/manifests/v1", manifests[0], "the reference's tag first")
	second, err := pushTo(t, host, artifact.PushOptions{})
	require.NoError(t, err)
	assert.Equal(t, first.Digest, second.Digest, "the same tree pushed twice has the same digest")
	checkPulled(t, host+"/accelc/hetero-prod:latest", treeFiles)
	d, err := remote.Head(mustRef(t, first.Ref))
	require.NoError(t, err, "the artifact is there by digest too")
	assert.Equal(t, first.Digest, d.Digest.String())

	fail5xx.Store(2)
	_, err = pushTo(t, host, artifact.PushOptions{Tags: []string{"retried"}})
	require.NoError(t, err, "two 503s are retried")

	// A new tree, so that its blobs are uploaded.
	ref, err := artifact.ParseURL("oci://"+host+"/accelc/other:v1", false)
	require.NoError(t, err)
	img, _, err := artifact.BuildFiles([]artifact.File{{Path: "a.yaml", Data: []byte("kind: A\n")}}, artifact.Metadata{Created: created})
	require.NoError(t, err)
	failBlobPut5xx.Store(2)
	_, err = artifact.Push(context.Background(), img, ref, artifact.PushOptions{Keychain: authn.NewMultiKeychain()})
	require.NoError(t, err, "a blob's PUT answered 503 is sent again, with its content")
	pulled, err := artifact.Pull(context.Background(), ref, artifact.PushOptions{Keychain: authn.NewMultiKeychain()}, artifact.ReadOptions{})
	require.NoError(t, err)
	assert.Equal(t, map[string][]byte{"a.yaml": []byte("kind: A\n")}, pulled)

	failManifests.Store(100)
	_, err = pushTo(t, host, artifact.PushOptions{Tags: []string{"broken"}})
	require.Error(t, err)
	_, err = remote.Head(mustRef(t, host+"/accelc/hetero-prod:broken"))
	assert.Error(t, err, "a failed push leaves no tag")
	failManifests.Store(0)

	// The in-process registry holds blobs for every repository: a tree
	// of its own, so that its blobs are uploaded.
	ref, err = artifact.ParseURL("oci://"+host+"/accelc/blobfail:v1", false)
	require.NoError(t, err)
	img, _, err = artifact.BuildFiles([]artifact.File{{Path: "b.yaml", Data: []byte("kind: B\n")}}, artifact.Metadata{Created: created})
	require.NoError(t, err)
	failBlobs.Store(1)
	sent()
	_, err = artifact.Push(context.Background(), img, ref, artifact.PushOptions{Keychain: authn.NewMultiKeychain(), Tags: []string{"latest"}})
	assert.ErrorContains(t, err, "disk full")
	for _, r := range sent() {
		assert.NotContains(t, r, "/manifests/", "no manifest is sent when a blob fails")
	}
	for _, tag := range []string{"v1", "latest"} {
		_, err = remote.Head(mustRef(t, host+"/accelc/blobfail:"+tag))
		assert.Error(t, err, "a push whose blob failed leaves no tag")
	}
}

func mustRef(t *testing.T, s string) name.Reference {
	r, err := name.ParseReference(s, name.Insecure)
	require.NoError(t, err)
	return r
}

// TestTLSByDefault: plain HTTP is refused off loopback unless asked for.
func TestTLSByDefault(t *testing.T) {
	ref, err := artifact.ParseURL("oci://10.0.0.5:5000/accelc/x:v1", false)
	require.NoError(t, err)
	img, _, err := artifact.Build(tree(t, 0o644), treePaths(), artifact.Metadata{Created: created})
	require.NoError(t, err)
	_, err = artifact.Push(context.Background(), img, ref, artifact.PushOptions{Keychain: authn.NewMultiKeychain(), Retries: 1})
	assert.ErrorContains(t, err, "refusing plain HTTP to 10.0.0.5:5000")

	for _, bad := range []string{"ghcr.io/x/y:v1", "oci://", "oci://Host/UPPER:v1"} {
		_, err := artifact.ParseURL(bad, false)
		assert.Error(t, err, bad)
	}
}

// TestPushDistribution pushes to the CNCF distribution registry (Debian's
// docker-registry) on 127.0.0.1 and pulls back.
func TestPushDistribution(t *testing.T) {
	addr := testutil.Registry(t)
	first, err := pushTo(t, addr, artifact.PushOptions{Tags: []string{"latest"}})
	require.NoError(t, err)
	again, err := pushTo(t, addr, artifact.PushOptions{})
	require.NoError(t, err)
	assert.Equal(t, first.Digest, again.Digest)
	checkPulled(t, addr+"/accelc/hetero-prod:latest", treeFiles)
	checkPulled(t, first.Ref, nil)
}

// TestBuildFiles: files handed in already read pack as Build packs them
// from the folder, whatever order they come in: entries in the order a
// walk meets them (nodes/ and what it holds before nodes.yaml, which a
// plain sort of the paths would not give),
// executables 0755. Paths listed twice, a file that is also a folder, and
// paths outside the tree are refused.
func TestBuildFiles(t *testing.T) {
	meta := artifact.Metadata{Created: created}
	dir := tree(t, 0o644)
	extra := map[string]string{"nodes.yaml": "kind: A\n", "nodes/z/deep.yaml": "kind: B\n", "run.sh": "#!/bin/sh\n"}
	paths := treePaths()
	for p, body := range extra {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644))
		paths = append(paths, p)
	}
	require.NoError(t, os.Chmod(filepath.Join(dir, "run.sh"), 0o700))
	imgDir, tarDir, err := artifact.Build(dir, paths, meta)
	require.NoError(t, err)

	read, err := artifact.ReadFiles(dir, paths)
	require.NoError(t, err)
	require.Len(t, read, len(paths))
	slices.Reverse(read)
	imgFiles, tarFiles, err := artifact.BuildFiles(read, meta)
	require.NoError(t, err)
	assert.Equal(t, tarDir, tarFiles)
	d1, err := imgDir.Digest()
	require.NoError(t, err)
	d2, err := imgFiles.Digest()
	require.NoError(t, err)
	assert.Equal(t, d1, d2)

	gz, err := gzip.NewReader(bytes.NewReader(tarFiles))
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	var names []string
	modes := map[string]int64{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		names = append(names, hdr.Name)
		modes[hdr.Name] = hdr.Mode
	}
	assert.Equal(t, []string{"kustomization.yaml", "nodes/", "nodes/kustomization.yaml", "nodes/rule.yaml", "nodes/z/", "nodes/z/deep.yaml", "nodes.yaml",
		"profiles/", "profiles/hardwareprofile-a.yaml", "run.sh"}, names)
	assert.Equal(t, int64(0o755), modes["run.sh"])
	assert.Equal(t, int64(0o644), modes["nodes.yaml"])
	assert.Equal(t, int64(0o755), modes["nodes/"])

	for _, c := range []struct {
		files []artifact.File
		err   string
	}{
		{[]artifact.File{{Path: "a.yaml"}, {Path: "a.yaml"}}, `"a.yaml": listed twice`},
		{[]artifact.File{{Path: "a"}, {Path: "a/b.yaml"}}, `"a": listed as a file, and it is a folder of other files listed`},
		{[]artifact.File{{Path: "../a.yaml"}}, `"../a.yaml": not a path inside the tree`},
		{[]artifact.File{{Path: "/a.yaml"}}, `"/a.yaml": not a path inside the tree`},
		{[]artifact.File{{Path: "."}}, `".": not a path inside the tree`},
	} {
		_, _, err := artifact.BuildFiles(c.files, meta)
		assert.EqualError(t, err, c.err)
	}
}

// TestFluxLayout: the artifact is what `flux push artifact` builds with
// go-containerregistry's mutate from the same layer and annotations: the
// same config and manifest bytes.
func TestFluxLayout(t *testing.T) {
	meta := artifact.Metadata{Source: "https://git.example.com/fleet", Revision: "main@sha1:0123456789abcdef0123456789abcdef01234567", Created: created,
		Annotations: map[string]string{"x": "y"}}
	img, tgz, err := artifact.Build(tree(t, 0o644), treePaths(), meta)
	require.NoError(t, err)
	m, err := img.Manifest()
	require.NoError(t, err)

	want := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	want = mutate.ConfigMediaType(want, artifact.ConfigMediaType)
	want = mutate.Annotations(want, m.Annotations).(v1.Image)
	want, err = mutate.Append(want, mutate.Addendum{Layer: static.NewLayer(tgz, artifact.ContentMediaType)})
	require.NoError(t, err)
	for _, f := range []func(v1.Image) ([]byte, error){v1.Image.RawManifest, v1.Image.RawConfigFile} {
		got, err := f(img)
		require.NoError(t, err)
		exp, err := f(want)
		require.NoError(t, err)
		assert.Equal(t, string(exp), string(got))
	}
	assert.Equal(t, "y", m.Annotations["x"])
	files := map[string][]byte{}
	for p, body := range treeFiles {
		files[p] = []byte(body)
	}
	assert.Equal(t, artifact.ContentDigest(files), m.Annotations[artifact.AnnotationContentDigest])
	for _, want := range []v1.Hash{m.Layers[0].Digest, m.Config.Digest} {
		l, err := img.LayerByDigest(want)
		require.NoError(t, err)
		got, err := l.Digest()
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
}

// TestBuildLeavesNoGoroutine: an image built and dropped before its
// manifest is asked for leaves no goroutine behind once its files are
// hashed.
func TestBuildLeavesNoGoroutine(t *testing.T) {
	dir := tree(t, 0o644)
	before := runtime.NumGoroutine()
	for range 5 {
		_, _, err := artifact.Build(dir, treePaths(), artifact.Metadata{Created: created})
		require.NoError(t, err)
		_, _, err = artifact.BuildFiles([]artifact.File{{Path: "a.yaml", Data: []byte("a: 1\n")}}, artifact.Metadata{Created: created})
		require.NoError(t, err)
	}
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines before, %d after:\n%s", before, runtime.NumGoroutine(), stacks())
		}
	}
}

func stacks() string {
	buf := make([]byte, 1<<16)
	return string(buf[:runtime.Stack(buf, true)])
}

// staticKeychain gives one user and password for every registry.
type staticKeychain struct{ user, password string }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) {
	return authn.FromConfig(authn.AuthConfig{Username: k.user, Password: k.password}), nil
}

// TestPushLoopbackCredentials: a registry on loopback that asks for
// credentials gets them on every request (the plain HTTP ping finds the
// challenge and leaves the log-in to go-containerregistry's), and one
// that gets wrong ones fails the push with the registry's answer.
func TestPushLoopbackCredentials(t *testing.T) {
	reg := registry.New()
	var unauthorized atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ci" || p != "s3cret" {
			if r.URL.Path != "/v2/" {
				unauthorized.Add(1)
			}
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	pushed, err := pushTo(t, host, artifact.PushOptions{Keychain: staticKeychain{"ci", "s3cret"}, Tags: []string{"latest"}})
	require.NoError(t, err)
	assert.Zero(t, unauthorized.Load(), "every request but the pings carries the credentials")
	ref, err := name.ParseReference(host+"/accelc/hetero-prod:latest", name.Insecure)
	require.NoError(t, err)
	d, err := remote.Head(ref, remote.WithAuthFromKeychain(staticKeychain{"ci", "s3cret"}))
	require.NoError(t, err)
	assert.Equal(t, pushed.Digest, d.Digest.String())

	_, err = pushTo(t, host, artifact.PushOptions{Keychain: staticKeychain{"ci", "wrong"}, Retries: 1})
	assert.ErrorContains(t, err, "401 Unauthorized")
}

// TestPushByDigest: a reference by digest and no tag writes the manifest
// by its digest alone.
func TestPushByDigest(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	img, _, err := artifact.BuildFiles([]artifact.File{{Path: "a.yaml", Data: []byte("kind: A\n")}}, artifact.Metadata{Created: created})
	require.NoError(t, err)
	d, err := img.Digest()
	require.NoError(t, err)
	ref, err := artifact.ParseURL("oci://"+host+"/accelc/bydigest@"+d.String(), false)
	require.NoError(t, err)
	pushed, err := artifact.Push(context.Background(), img, ref, artifact.PushOptions{Keychain: authn.NewMultiKeychain()})
	require.NoError(t, err)
	assert.Empty(t, pushed.Tags)
	assert.Equal(t, d.String(), pushed.Digest)
	got, err := remote.Head(mustRef(t, pushed.Ref))
	require.NoError(t, err)
	assert.Equal(t, d, got.Digest)
	tags, err := remote.List(mustRef(t, host+"/accelc/bydigest:x").Context())
	require.NoError(t, err)
	assert.Empty(t, tags)
}
