package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
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

// pushLayer pushes an artifact whose content layer is layer, bytes as
// given, to the registry, and returns its oci:// reference.
func pushLayer(t *testing.T, reg, repo string, layer []byte) string {
	t.Helper()
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, artifact.ConfigMediaType)
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(layer, artifact.ContentMediaType)})
	require.NoError(t, err)
	ref, err := name.ParseReference(reg+"/"+repo+":v1", name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.Write(ref, img))
	return "oci://" + ref.String()
}

// tarGz writes files as a gzipped tar, in the order given.
func tarGz(t *testing.T, files ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	gw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gw)
	for _, f := range files {
		require.NoError(t, tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f[0], Mode: 0o644, Size: int64(len(f[1]))}))
		_, err := tw.Write([]byte(f[1]))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gw.Close())
	return buf.Bytes()
}

// TestDiffArtifactLimits (issue 15, finding 4): the layers the review
// built against diff --against oci://, on the distribution registry: 48
// files of zeros that together pass the size limit, a 1 TiB sparse file,
// more entries than the count limit, a layer that is not gzip. Each
// exits 3 with the artifact named and the limit to raise, and no NUL
// reaches stdout.
func TestDiffArtifactLimits(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	reg := testutil.Registry(t)
	const lab = "../../examples/clusters/small-lab"

	var zeros [][2]string
	for i := range 48 {
		zeros = append(zeros, [2]string{fmt.Sprintf("zeros/zero-%02d.yaml", i), string(make([]byte, 64<<10))})
	}
	ref := pushLayer(t, reg, "evil/zeros", tarGz(t, zeros...))
	code, stdout, stderr := runMain("diff", lab, "--against", ref, "--max-artifact-size", "1MiB")
	assert.Equal(t, exitOutside, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "artifact "+ref+`: reading its content layer: the layer holds more than 1MiB uncompressed (at "zeros/zero-16.yaml", 64KiB): if the artifact is what you expect, raise --max-artifact-size`+"\n", stderr)
	code, _, stderr = runMain("diff", lab, "--against", ref, "--max-artifact-size", "4MiB")
	assert.Equal(t, exitInput, code, "within the limit: the diff runs, and finds changes: %s", stderr)

	ref = pushLayer(t, reg, "evil/sparse", testutil.SparseLayer(t, "kustomization.yaml", 1<<40))
	code, stdout, stderr = runMain("diff", lab, "--against", ref)
	assert.Equal(t, exitOutside, code)
	assert.Empty(t, stdout, "no NULs")
	assert.Equal(t, "artifact "+ref+`: reading its content layer: the layer holds more than 256MiB uncompressed (at "kustomization.yaml", 1TiB): if the artifact is what you expect, raise --max-artifact-size`+"\n", stderr)

	ref = pushLayer(t, reg, "evil/many", tarGz(t, zeros[:20]...))
	code, _, stderr = runMain("diff", lab, "--against", ref, "--max-artifact-files", "10")
	assert.Equal(t, exitOutside, code)
	assert.Equal(t, "artifact "+ref+`: reading its content layer: the layer holds more than 10 entries (at "zeros/zero-10.yaml"): if the artifact is what you expect, raise --max-artifact-files`+"\n", stderr)

	ref = pushLayer(t, reg, "evil/notgzip", []byte("{\"kind\": \"not a tarball\"}\n"))
	code, _, stderr = runMain("diff", lab, "--against", ref)
	assert.Equal(t, exitOutside, code)
	assert.Equal(t, "artifact "+ref+": reading its content layer: not a gzipped tar: gzip: invalid header\n", stderr)

	for _, bad := range [][]string{{"--max-artifact-size", "0"}, {"--max-artifact-size", "lots"}, {"--max-artifact-files", "0"}} {
		code, _, stderr = runMain(append([]string{"diff", lab, "--against", ref}, bad...)...)
		assert.Equal(t, exitUsage, code, bad)
		assert.Contains(t, stderr, "Run 'accelc diff --help' for usage.", bad)
	}
}

// TestDiffEscapesArtifactContent (issue 15, finding 4): what a pulled
// artifact holds reaches the terminal escaped: no escape sequence, NUL or
// carriage return from it is printed as is.
func TestDiffEscapesArtifactContent(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	reg := testutil.Registry(t)
	const lab = "../../examples/clusters/small-lab"
	hostile := "\x1b]0;owned\x07\x1b[2J\x1b[1;1H# all clear\x00\r\xff\n"
	ref := pushLayer(t, reg, "evil/escapes", tarGz(t,
		[2]string{"kustomization.yaml", "kind: Kustomization\n" + hostile},
		[2]string{"stale\x1b[8m.yaml", hostile}))
	code, stdout, stderr := runMain("diff", lab, "--against", ref)
	assert.Equal(t, exitInput, code, stderr)
	for _, c := range []string{"\x1b", "\x00", "\r", "\x07", "\xff"} {
		assert.NotContains(t, stdout, c)
		assert.NotContains(t, stderr, c)
	}
	assert.Contains(t, stdout, `-\x1b]0;owned\x07\x1b[2J\x1b[1;1H# all clear\x00\x0d\xff`)
	assert.Contains(t, stdout, "- stale\\x1b[8m.yaml\n")
}

// TestDiffAgainstDirFollowsNoLinks (issue 15, finding 5): a previous
// output with a link in it, to a file or a folder outside, is refused
// (exit 1) and nothing outside it is read or printed.
func TestDiffAgainstDirFollowsNoLinks(t *testing.T) {
	const lab = "../../examples/clusters/small-lab"
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("kind: Secret\ndata: {password: OutsideS3cret}\n"), 0o644))
	for link, target := range map[string]string{
		"profiles/hardwareprofile-gpu.yaml": filepath.Join(outside, "secret.yaml"),
		"nodes/elsewhere":                   outside,
	} {
		out := filepath.Join(t.TempDir(), "small-lab")
		code, _, errOut := runMain("render", lab, "-o", out)
		require.Equal(t, exitOK, code, errOut)
		full := filepath.Join(out, filepath.FromSlash(link))
		_ = os.Remove(full)
		require.NoError(t, os.Symlink(target, full))
		code, stdout, stderr := runMain("diff", lab, "--against", out)
		assert.Equal(t, exitInput, code, link)
		assert.Empty(t, stdout)
		assert.Equal(t, full+": a symbolic link: accelc renders none, and diff reads nothing outside "+out+": remove it, or diff against the published artifact\n", stderr)
		assert.False(t, strings.Contains(stdout+stderr, "OutsideS3cret"))
	}
}
