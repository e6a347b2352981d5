package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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

// logLines is a Log that hands each line to a channel.
type logLines chan string

func (l logLines) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		select {
		case l <- line:
		default:
		}
	}
	return len(p), nil
}

// TestRunMultiKueueManager: serve on a MultiKueue manager counts, for a
// dispatched profile, the nodes of the workers it goes to (their
// snapshots beside it), as the rendered catalog does: the example
// fleet's manager has no GPU, its workers 24 H200s and 16 A100s.
func TestRunMultiKueueManager(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	log := make(logLines, 100)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, RunOptions{Dir: "../../examples/clusters/fleet-multikueue/manager", Listen: "127.0.0.1:0", Grace: time.Second, Log: log})
	}()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	var addr string
	for addr == "" {
		select {
		case line := <-log:
			if rest, ok := strings.CutPrefix(line, "serving manager on http://"); ok {
				addr, _, _ = strings.Cut(rest, "/")
			}
		case err := <-done:
			t.Fatalf("serve ended: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not listen")
		}
	}
	// Ready once the snapshot is read.
	var body []byte
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get("http://" + addr + "/api/v1/profiles")
		require.NoError(t, err)
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/api/v1/profiles: %s %s", resp.Status, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var doc struct {
		Profiles []struct {
			Name      string   `json:"name"`
			Available int      `json:"available"`
			Workers   []string `json:"workers"`
		} `json:"profiles"`
	}
	require.NoError(t, json.Unmarshal(body, &doc), "%s", body)
	got := map[string]string{}
	for _, p := range doc.Profiles {
		got[p.Name] = fmt.Sprintf("%d on %v", p.Available, p.Workers)
	}
	assert.Equal(t, map[string]string{"h200-train": "24 on [gpu-east gpu-west]", "a100-train": "16 on [gpu-west]"}, got)
}
