package serve

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigDigest: the digest of a cluster directory is its .cue files'
// names and contents at the top, and nothing else.
func TestConfigDigest(t *testing.T) {
	dir := fstest.MapFS{"cluster.cue": {Data: []byte("package cluster\n")}}
	before := ConfigDigest(dir)
	dir["notes.txt"] = &fstest.MapFile{Data: []byte("not CUE")}
	dir["sub/other.cue"] = &fstest.MapFile{Data: []byte("package other\n")}
	assert.Equal(t, before, ConfigDigest(dir), "a file that is not CUE, or a .cue file below the top, changed the digest")
	dir["cluster.cue"] = &fstest.MapFile{Data: []byte("package cluster\n\ncluster: name: \"x\"\n")}
	changed := ConfigDigest(dir)
	assert.NotEqual(t, before, changed, "a changed .cue file")
	delete(dir, "cluster.cue")
	dir["renamed.cue"] = &fstest.MapFile{Data: []byte("package cluster\n\ncluster: name: \"x\"\n")}
	assert.NotEqual(t, changed, ConfigDigest(dir), "a renamed .cue file")
}

// TestWatchConfig: serve --reload sees a .cue file of the directory change
// (as a ConfigMap volume does when the kubelet swaps it) and nothing else.
func TestWatchConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cluster.cue")
	require.NoError(t, os.WriteFile(file, []byte("package cluster\n"), 0o644))
	changed := make(chan struct{}, 10)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go WatchConfig(ctx, os.DirFS(dir), 10*time.Millisecond, func() { changed <- struct{}{} })
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not CUE"), 0o644))
	select {
	case <-changed:
		t.Fatal("a file that is not CUE changed nothing")
	case <-time.After(100 * time.Millisecond):
	}
	require.NoError(t, os.WriteFile(file, []byte("package cluster\n\ncluster: name: \"x\"\n"), 0o644))
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("a changed .cue file was not seen")
	}
}
