package render_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/render"
)

func smallTree(n int) render.Tree {
	t := render.Tree{"kustomization.yaml": []byte("# Rendered by accelc for c\nresources:\n- a\n")}
	for i := range n {
		t[fmt.Sprintf("a/f%03d.yaml", i)] = fmt.Appendf(nil, "n: %d\n", i)
	}
	return t
}

// TestWriteRemovesLeftovers: what a render killed mid-way left beside the
// output (its temporary tree, marked partial; the previous tree moved
// aside; an emptied one) is removed by the next render, which says so;
// look-alikes that are not accelc's are kept.
func TestWriteRemovesLeftovers(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "c")
	require.NoError(t, smallTree(2).Write(out))

	mk := func(name string, files map[string]string) string {
		p := filepath.Join(parent, name)
		require.NoError(t, os.MkdirAll(p, 0o755))
		for f, body := range files {
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(p, f)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(p, f), []byte(body), 0o644))
		}
		return p
	}
	partial := mk(".c.tmp-111", map[string]string{".accelc-partial": "", "a/f000.yaml": "n: 0\n"})
	whole := mk(".c.tmp-222", map[string]string{"kustomization.yaml": "# Rendered by accelc for c\n"})
	old := mk(".c.tmp-222.old", map[string]string{".accelc-partial": "", "a/f001.yaml": "n: 1\n"})
	empty := mk(".c.tmp-333", nil)
	foreign := mk(".c.tmp-444", map[string]string{"notes.txt": "mine"})
	otherName := mk(".c.tmp-abc", map[string]string{".accelc-partial": ""})
	otherOut := mk(".d.tmp-555", map[string]string{".accelc-partial": ""})

	var log bytes.Buffer
	require.NoError(t, smallTree(3).WriteWith(out, render.WriteOptions{Log: &log}))
	for _, p := range []string{partial, whole, old, empty} {
		assert.NoDirExists(t, p)
		assert.Contains(t, log.String(), "removed "+p+", left by an interrupted render\n")
	}
	for _, p := range []string{foreign, otherName, otherOut} {
		assert.DirExists(t, p)
		assert.NotContains(t, log.String(), p)
	}
	assert.FileExists(t, filepath.Join(out, "a/f002.yaml"))
	assert.NoFileExists(t, filepath.Join(out, ".accelc-partial"))

	// Nothing left: nothing said.
	log.Reset()
	require.NoError(t, smallTree(3).WriteWith(out, render.WriteOptions{Log: &log}))
	assert.Empty(t, log.String())
}

// TestWriteConcurrent: renders of one directory at once serialise on its
// lock; every one succeeds, and the tree is always one render's whole.
func TestWriteConcurrent(t *testing.T) {
	out := filepath.Join(t.TempDir(), "c")
	for round := range 10 {
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { errs[i] = smallTree(20 + i).Write(out) })
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "round %d, writer %d", round, i)
		}
		entries, err := os.ReadDir(filepath.Join(out, "a"))
		require.NoError(t, err)
		n := len(entries)
		require.True(t, n >= 20 && n <= 23, "round %d: %d files", round, n)
		for i := range n {
			b, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("a/f%03d.yaml", i)))
			require.NoError(t, err)
			assert.Equal(t, fmt.Sprintf("n: %d\n", i), string(b))
		}
		siblings, err := os.ReadDir(filepath.Dir(out))
		require.NoError(t, err)
		var names []string
		for _, s := range siblings {
			names = append(names, s.Name())
		}
		assert.ElementsMatch(t, []string{"c", ".c.lock"}, names, "round %d", round)
	}
}

// TestWriteLockBusy: a render that cannot take the lock within its
// timeout fails with a message naming the lock, and writes nothing.
func TestWriteLockBusy(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "c")
	// A leftover for the first writer to report, so that it blocks in
	// its Log holding the lock.
	require.NoError(t, os.MkdirAll(filepath.Join(parent, ".c.tmp-1"), 0o755))
	started, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		var once sync.Once
		done <- smallTree(1).WriteWith(out, render.WriteOptions{Log: blockingWriter(func() {
			once.Do(func() { close(started) })
			<-release
		})})
	}()
	<-started
	err := smallTree(2).WriteWith(out, render.WriteOptions{LockTimeout: time.Nanosecond})
	require.Error(t, err)
	assert.Equal(t, out+": another accelc render has held its lock ("+filepath.Join(parent, ".c.lock")+") for more than 1ns: wait for it to finish, then render again", err.Error())
	close(release)
	require.NoError(t, <-done)
	assert.NoFileExists(t, filepath.Join(out, "a/f001.yaml"))
}

type blockingWriter func()

func (w blockingWriter) Write(p []byte) (int, error) { w(); return len(p), nil }
