// Package testutil holds what accelc's tests share: the -update flag that
// refreshes golden files, and a golden-file comparison. Every test package
// imports it, so `go test ./... -update` is accepted by all of them.
package testutil

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Update is set by -update: golden files are rewritten, not compared.
var Update = flag.Bool("update", false, "rewrite golden files instead of comparing with them")

// Golden compares got with the file at path, byte for byte, or writes it
// under -update.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "golden file missing: run `go test ./... -update` (make golden)")
	assert.Equal(t, string(want), string(got), "%s differs: if the change is intended, run `make golden` and review the diff", path)
}
