package publish_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/internal/errkind"
	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/artifact"
	"github.com/accelc/accelc/pkg/publish"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/rendered"
)

// TestCheckoutOnlyWhenNeeded: git runs only where the options leave out
// something it gives (source, revision or creation time).
func TestCheckoutOnlyWhenNeeded(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    publish.Options
		readGit bool
	}{
		{"all given", publish.Options{Source: "https://example.com/fleet", Revision: "main@sha1:0123", Created: "2026-11-20T09:30:00Z"}, false},
		{"no source", publish.Options{Revision: "main@sha1:0123", Created: "2026-11-20T09:30:00Z"}, true},
		{"no revision", publish.Options{Source: "https://example.com/fleet", Created: "2026-11-20T09:30:00Z"}, true},
		{"no creation time", publish.Options{Source: "https://example.com/fleet", Revision: "main@sha1:0123"}, true},
	} {
		var calls atomic.Int32
		c.opts.Dir, c.opts.Dest = t.TempDir(), "oci://127.0.0.1:1/x:v1"
		c.opts.Checkout = func(string) publish.GitCheckout {
			calls.Add(1)
			return publish.GitCheckout{}
		}
		// An empty folder is no rendered tree: Push stops before sending
		// anything, once git (where it runs) is done.
		// The registry (nothing listens on port 1) is dialled meanwhile:
		// the tree's error, the input's, is the one said.
		_, err := publish.Push(context.Background(), c.opts)
		if err == nil {
			t.Fatalf("%s: an empty folder pushed", c.name)
		}
		if errkind.IsOutside(err) || errkind.IsUsage(err) {
			t.Errorf("%s: %v: the registry's or the options' error, not the tree's", c.name, err)
		}
		if got := calls.Load() > 0; got != c.readGit {
			t.Errorf("%s: git ran: %v, want %v", c.name, got, c.readGit)
		}
	}
}

// TestPushContentRecord: push publishes the content digest render
// recorded beside the tree while the files are those it was computed for;
// after an edit, or without a record, it computes it from the files, and
// either way the annotation is artifact.ContentDigest of what was pushed.
func TestPushContentRecord(t *testing.T) {
	addr := testutil.Registry(t)
	res, err := accelc.Cluster(context.Background(), "../../examples/clusters/small-lab", accelc.Options{Stages: accelc.Rendered})
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "out")
	require.NoError(t, res.Tree.WriteWith(dir, render.WriteOptions{ContentDigest: res.ContentDigest}))

	push := func(tag string) (annotation, log string) {
		t.Helper()
		var buf bytes.Buffer
		pushed, err := publish.Push(context.Background(), publish.Options{
			Dir: dir, Dest: "oci://" + addr + "/lab:" + tag, Log: &buf,
			Source: "https://example.com/fleet", Revision: "main@sha1:0123", Created: "2026-11-20T09:30:00Z",
		})
		require.NoError(t, err)
		ref, err := name.ParseReference(pushed.Ref)
		require.NoError(t, err)
		img, err := remote.Image(ref)
		require.NoError(t, err)
		m, err := img.Manifest()
		require.NoError(t, err)
		return m.Annotations[artifact.AnnotationContentDigest], buf.String()
	}
	files := func() map[string][]byte {
		tree, err := rendered.Read(dir)
		require.NoError(t, err)
		out := map[string][]byte{}
		for _, f := range tree.Files {
			out[f.Path] = f.Data
		}
		return out
	}

	got, log := push("recorded")
	assert.Equal(t, res.ContentDigest, got)
	assert.Empty(t, log, "the record is no stray file")

	// The record is what is published, not read again: one that says
	// another digest for these very bytes is taken at its word.
	record := filepath.Join(dir, rendered.ContentFile)
	other := "sha256:" + strings.Repeat("0", 64)
	require.NoError(t, os.WriteFile(record, rendered.FormatContent(other, files()), 0o644))
	got, _ = push("taken")
	assert.Equal(t, other, got)
	require.NoError(t, os.WriteFile(record, rendered.FormatContent(res.ContentDigest, files()), 0o644))

	// A comment changes the bytes, not the content: the record no longer
	// holds, and the digest computed is the same.
	kust := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(kust)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(kust, append(data, "# edited\n"...), 0o644))
	got, log = push("commented")
	assert.Equal(t, res.ContentDigest, got)
	assert.Contains(t, log, "the files changed since render wrote "+rendered.ContentFile)

	// An edit that changes what the tree says changes the digest.
	require.NoError(t, os.WriteFile(kust, bytes.Replace(data, []byte("resources:"), []byte("namespace: x\nresources:"), 1), 0o644))
	got, _ = push("edited")
	assert.NotEqual(t, res.ContentDigest, got)
	assert.Equal(t, artifact.ContentDigest(files()), got)

	// Without a record (a tree rendered by an older accelc), the digest
	// is computed, and nothing is said.
	require.NoError(t, os.Remove(record))
	got, log = push("unrecorded")
	assert.Equal(t, artifact.ContentDigest(files()), got)
	assert.Empty(t, log)
}
