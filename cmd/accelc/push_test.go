package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/artifact"
)

// TestPushCommand renders small-lab in a Git checkout and pushes it:
// provenance comes from the checkout (origin without credentials, the
// branch and commit, the commit's time), and pushing twice gives one
// digest.
func TestPushCommand(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials from the machine
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	repo := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-11-20T09:30:00Z", "GIT_COMMITTER_DATE=2026-11-20T09:30:00Z",
			"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	git("init", "-q", "-b", "main")
	git("remote", "add", "origin", "https://bot:s3cret@git.example.com/acme/fleet.git")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "README"), []byte("fleet\n"), 0o644))
	git("add", "README")
	git("commit", "-q", "-m", "init")
	head, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	require.NoError(t, err)

	run := runMain
	out := filepath.Join(repo, "out", "small-lab")
	code, _, errOut := run("render", "../../examples/clusters/small-lab", "-o", out)
	require.Equal(t, exitOK, code, errOut)

	code, stdout, errOut := run("push", out, "oci://"+host+"/accelc/small-lab:v1", "--tag", "latest", "-o", "json")
	require.Equal(t, exitOK, code, errOut)
	var pushed artifact.Pushed
	require.NoError(t, json.Unmarshal([]byte(stdout), &pushed))
	assert.Equal(t, []string{"v1", "latest"}, pushed.Tags)

	ref, err := name.ParseReference(host+"/accelc/small-lab:latest", name.Insecure)
	require.NoError(t, err)
	img, err := remote.Image(ref)
	require.NoError(t, err)
	m, err := img.Manifest()
	require.NoError(t, err)
	assert.Equal(t, "https://git.example.com/acme/fleet.git", m.Annotations[artifact.AnnotationSource], "credentials are dropped")
	assert.Equal(t, "main@sha1:"+strings.TrimSpace(string(head)), m.Annotations[artifact.AnnotationRevision])
	assert.Equal(t, "2026-11-20T09:30:00Z", m.Annotations[artifact.AnnotationCreated])

	code, stdout, _ = run("push", out, "oci://"+host+"/accelc/small-lab:v1")
	require.Equal(t, exitOK, code)
	assert.Contains(t, stdout, pushed.Digest, "the same tree pushed twice has the same digest")

	code, _, errOut = run("push", out, host+"/accelc/small-lab:v1")
	assert.Equal(t, exitUsage, code, errOut)
	code, _, errOut = run("push", filepath.Join(repo, "missing"), "oci://"+host+"/x:v1")
	assert.Equal(t, exitInput, code, errOut)
	code, _, errOut = run("push", out, "oci://"+host+"/x:v1", "--created", "yesterday")
	assert.Equal(t, exitUsage, code, errOut)
	code, _, errOut = run("push", out, "oci://192.168.77.1:1/x:v1", "--created", "2026-11-20T09:30:00Z")
	assert.Equal(t, exitOutside, code)
	assert.Contains(t, errOut, "refusing plain HTTP to 192.168.77.1:1")
}
