package main

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/artifact"
)

// gitRepo makes dir a Git checkout with origin at remote and one commit of
// what dir holds.
func gitRepo(t *testing.T, dir, remote string) {
	t.Helper()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-11-20T09:30:00Z", "GIT_COMMITTER_DATE=2026-11-20T09:30:00Z",
			"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	git("init", "-q", "-b", "main")
	git("remote", "add", "origin", remote)
	git("add", "-A")
	git("commit", "-q", "--allow-empty", "-m", "init")
}

// pulled is everything a pushed artifact publishes: the manifest and
// config as the registry serves them, and the layer's files.
type pulled struct {
	manifest, config []byte
	annotations      map[string]string
	files            map[string][]byte
}

func pull(t *testing.T, ref string) pulled {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	require.NoError(t, err)
	img, err := remote.Image(r)
	require.NoError(t, err)
	var p pulled
	p.manifest, err = img.RawManifest()
	require.NoError(t, err)
	p.config, err = img.RawConfigFile()
	require.NoError(t, err)
	m, err := img.Manifest()
	require.NoError(t, err)
	p.annotations = m.Annotations
	layers, err := img.Layers()
	require.NoError(t, err)
	require.Len(t, layers, 1)
	rc, err := layers[0].Compressed()
	require.NoError(t, err)
	defer rc.Close()
	gz, err := gzip.NewReader(rc)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	p.files = map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return p
		}
		require.NoError(t, err)
		body, err := io.ReadAll(tr)
		require.NoError(t, err)
		p.files[hdr.Name] = body
	}
}

// assertNowhere fails if secret is in the artifact (manifest, config,
// any file's name or bytes) or in any output.
func assertNowhere(t *testing.T, secret string, p pulled, outputs ...string) {
	t.Helper()
	assert.NotContains(t, string(p.manifest), secret, "manifest")
	assert.NotContains(t, string(p.config), secret, "config")
	for path, body := range p.files {
		assert.NotContains(t, path, secret)
		assert.NotContains(t, string(body), secret, path)
	}
	for _, o := range outputs {
		assert.NotContains(t, o, secret, "output")
	}
}

// repositories lists what the registry holds.
func repositories(t *testing.T, reg string) []string {
	t.Helper()
	resp, err := http.Get("http://" + reg + "/v2/_catalog")
	require.NoError(t, err)
	defer resp.Body.Close()
	var cat struct{ Repositories []string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&cat))
	return cat.Repositories
}

// TestPushOnlyRenderedFiles (issue 15, finding 1): a rendered tree that
// became a Git checkout, with credentials in .git/config and an editor's
// backups beside the files, publishes exactly the files render wrote; a
// folder accelc did not render (a Git checkout) is refused with exit 1
// and nothing reaches the registry.
func TestPushOnlyRenderedFiles(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	reg := testutil.Registry(t)
	const gitSecret, backupSecret = "GitS3cret-1", "BackupS3cret-2"

	out := filepath.Join(t.TempDir(), "small-lab")
	code, _, errOut := runMain("render", "../../examples/clusters/small-lab", "-o", out)
	require.Equal(t, exitOK, code, errOut)
	var rendered []string
	require.NoError(t, filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(out, p)
			rendered = append(rendered, filepath.ToSlash(rel))
		}
		return err
	}))
	require.NoError(t, os.WriteFile(filepath.Join(out, "profiles", "hardwareprofile-gpu.yaml~"), []byte("token: "+backupSecret+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(out, "profiles", ".hardwareprofile-gpu.yaml.swp"), []byte(backupSecret), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(out, "notes.txt"), []byte(backupSecret), 0o644))
	gitRepo(t, out, "https://bot:"+gitSecret+"@git.example.com/acme/fleet.git")

	code, stdout, stderr := runMain("push", out, "oci://"+reg+"/accelc/small-lab:v1")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stderr, "note: 4 path(s) in "+out+" that accelc did not render are left out: .git/, notes.txt, profiles/.hardwareprofile-gpu.yaml.swp, profiles/hardwareprofile-gpu.yaml~\n")
	p := pull(t, reg+"/accelc/small-lab:v1")
	var files []string
	for f := range p.files {
		if !strings.HasSuffix(f, "/") {
			files = append(files, f)
		}
	}
	slices.Sort(files)
	assert.Equal(t, rendered, files, "exactly the rendered files")
	assert.Equal(t, "https://git.example.com/acme/fleet.git", p.annotations[artifact.AnnotationSource])
	for _, secret := range []string{gitSecret, backupSecret} {
		assertNowhere(t, secret, p, stdout, stderr)
	}

	// A Git checkout that is not a rendered tree.
	checkout := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(checkout, "README"), []byte("fleet\n"), 0o644))
	gitRepo(t, checkout, "https://bot:"+gitSecret+"@git.example.com/acme/fleet.git")
	code, stdout, stderr = runMain("push", checkout, "oci://"+reg+"/accelc/checkout:v1")
	assert.Equal(t, exitInput, code)
	assert.Equal(t, checkout+": not a tree accelc rendered (missing): push publishes only what `accelc render` wrote; render into an empty folder and push that\n", stderr)
	assert.Empty(t, stdout)
	assert.Equal(t, []string{"accelc/small-lab"}, repositories(t, reg), "nothing was uploaded")

	// A rendered tree with a listed file swapped for a link out of it.
	gpu := filepath.Join(out, "profiles", "hardwareprofile-gpu.yaml")
	require.NoError(t, os.Remove(gpu))
	require.NoError(t, os.Symlink(filepath.Join(checkout, ".git", "config"), gpu))
	code, _, stderr = runMain("push", out, "oci://"+reg+"/accelc/linked:v1")
	assert.Equal(t, exitInput, code)
	assert.Contains(t, stderr, "profiles/hardwareprofile-gpu.yaml (listed in profiles/kustomization.yaml): a symbolic link, not a regular file")
	assert.NotContains(t, stderr, gitSecret)
	assert.Equal(t, []string{"accelc/small-lab"}, repositories(t, reg), "nothing was uploaded")
}

// TestPushSourceWithoutCredentials (issue 15, finding 2): origin URLs that
// net/url refuses or reads differently, or that carry the secret in the
// query, never put it in the source annotation or anywhere else: the
// annotation is rebuilt from scheme, host and path, or left out with a
// note.
func TestPushSourceWithoutCredentials(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	reg := testutil.Registry(t)
	const secret = "PushS3cret"
	for i, c := range []struct{ origin, source, note string }{
		{origin: "https://alice:pa%zz" + secret + "@git.example.com/acme/fleet.git", source: "https://git.example.com/acme/fleet.git"},
		{origin: "https://alice:pa ss" + secret + "@git.example.com/acme/fleet.git", source: "https://git.example.com/acme/fleet.git"},
		{origin: "alice:" + secret + "@git.example.com:acme/fleet.git", source: "ssh://git.example.com/acme/fleet.git"},
		{origin: "https://git.example.com/acme/fleet.git?private_token=" + secret, source: "https://git.example.com/acme/fleet.git"},
		{origin: "https://git.example.com/acme/fleet.git#" + secret, source: "https://git.example.com/acme/fleet.git"},
		{origin: "https://alice:12/" + secret + "@git.example.com/acme/fleet.git",
			note: "note: origin's URL is not one accelc can publish safely (scheme://HOST/PATH or USER@HOST:PATH): the artifact has no source annotation; pass --source\n"},
	} {
		t.Run(c.origin, func(t *testing.T) {
			repo := t.TempDir()
			out := filepath.Join(repo, "out")
			code, _, errOut := runMain("render", "../../examples/clusters/small-lab", "-o", out)
			require.Equal(t, exitOK, code, errOut)
			gitRepo(t, repo, c.origin)
			ref := reg + "/accelc/source-" + string(rune('a'+i)) + ":v1"
			code, stdout, stderr := runMain("push", out, "oci://"+ref)
			require.Equal(t, exitOK, code, stderr)
			assert.Equal(t, c.note, stderr)
			p := pull(t, ref)
			assert.Equal(t, c.source, p.annotations[artifact.AnnotationSource])
			assertNowhere(t, secret, p, stdout, stderr)
		})
	}

	// --source is rebuilt the same way; one that cannot be is a usage
	// error that does not repeat it.
	out := filepath.Join(t.TempDir(), "out")
	code, _, errOut := runMain("render", "../../examples/clusters/small-lab", "-o", out)
	require.Equal(t, exitOK, code, errOut)
	code, stdout, stderr := runMain("push", out, "oci://"+reg+"/accelc/flag:v1", "--created", "2026-11-20T09:30:00Z",
		"--source", "https://bot:"+secret+"@git.example.com/acme/fleet.git?token="+secret)
	require.Equal(t, exitOK, code, stderr)
	p := pull(t, reg+"/accelc/flag:v1")
	assert.Equal(t, "https://git.example.com/acme/fleet.git", p.annotations[artifact.AnnotationSource])
	assertNowhere(t, secret, p, stdout, stderr)
	// So is the annotation given by hand.
	code, stdout, stderr = runMain("push", out, "oci://"+reg+"/accelc/flag:v3", "--created", "2026-11-20T09:30:00Z",
		"-a", "org.opencontainers.image.source=https://bot:"+secret+"@git.example.com/acme/fleet.git?token="+secret)
	require.Equal(t, exitOK, code, stderr)
	p = pull(t, reg+"/accelc/flag:v3")
	assert.Equal(t, "https://git.example.com/acme/fleet.git", p.annotations[artifact.AnnotationSource])
	assertNowhere(t, secret, p, stdout, stderr)
	code, stdout, stderr = runMain("push", out, "oci://"+reg+"/accelc/flag:v2", "--source", "https://bot:a/"+secret+"@git.example.com/x")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "--source: not a URL accelc can publish")
	assert.NotContains(t, stdout+stderr, secret)
}

// TestPushBadTag (issue 15, finding 9): a tag that breaks the OCI grammar
// is a usage error (exit 2) found before anything is sent: the registry
// holds nothing afterwards, untagged or not.
func TestPushBadTag(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	reg := testutil.Registry(t)
	out := filepath.Join(t.TempDir(), "out")
	code, _, errOut := runMain("render", "../../examples/clusters/small-lab", "-o", out)
	require.Equal(t, exitOK, code, errOut)
	for _, tags := range [][]string{{"-bad!"}, {"latest", ".hidden"}, {strings.Repeat("x", 129)}} {
		args := []string{"push", out, "oci://" + reg + "/accelc/small-lab:v1", "--created", "2026-11-20T09:30:00Z"}
		for _, tag := range tags {
			args = append(args, "--tag="+tag)
		}
		code, stdout, stderr := runMain(args...)
		assert.Equal(t, exitUsage, code, tags)
		assert.Empty(t, stdout)
		assert.Contains(t, stderr, "a tag is 1 to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'", tags)
	}
	code, _, stderr := runMain("push", out, "oci://"+reg+"/accelc/small-lab:v1", "--tag", "-bad!")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "--tag \"-bad!\": a tag is 1 to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'\nRun 'accelc push --help' for usage.\n", stderr)
	assert.Empty(t, repositories(t, reg), "nothing was uploaded")
}
