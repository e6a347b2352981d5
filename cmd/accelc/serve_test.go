package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWatchConfig: serve --reload sees a .cue file of the directory change
// (as a ConfigMap volume does when the kubelet swaps it) and nothing else.
func TestWatchConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cluster.cue")
	require.NoError(t, os.WriteFile(file, []byte("package cluster\n"), 0o644))
	changed := make(chan struct{}, 10)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go watchConfig(ctx, dir, 10*time.Millisecond, func() { changed <- struct{}{} })
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
