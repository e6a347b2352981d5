package accelc_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/policytest"
)

// TestInitEveryType: for every built-in accelerator type, init either
// writes a cluster whose sample nodes are all of the type and which
// compiles and renders without a warning, with admission cases that read,
// or refuses the type as a usage error that says why (a type no label
// names, typed only by its PCI id).
func TestInitEveryType(t *testing.T) {
	types, err := accelc.Types()
	require.NoError(t, err)
	require.NotEmpty(t, types)
	refused := 0
	for _, ty := range types {
		t.Run(ty.ID, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			res, err := accelc.Init(context.Background(), dir, accelc.InitOptions{Type: ty.ID})
			if len(ty.Labels) == 0 && len(ty.Resources) == 0 {
				require.True(t, accelc.IsUsage(err), "%v", err)
				assert.Contains(t, err.Error(), "no label that identifies it")
				assert.NoDirExists(t, dir)
				refused++
				return
			}
			require.NoError(t, err)
			assert.Equal(t, ty.ID, res.Type)
			assert.Equal(t, 2, res.Typed)
			r, err := accelc.Cluster(context.Background(), dir, accelc.Options{Stages: accelc.Rendered})
			require.NoError(t, err)
			for _, d := range r.Diagnostics {
				assert.NotEqual(t, compile.Warning, d.Severity, "%s", d)
			}
			// The sample nodes the result counts are the ones the cluster
			// reads, each of the type.
			require.Len(t, r.Inventory.Nodes, res.Typed)
			for _, n := range r.Inventory.Nodes {
				assert.Equal(t, ty.ID, n.AcceleratorType, n.Name)
			}
			cases, err := policytest.ReadCases(dir)
			require.NoError(t, err)
			assert.Len(t, cases.Cases, 2)
		})
	}
	assert.Less(t, refused, 3, "init refuses few types")
}

// TestInitRefuses: a directory that holds anything, or a file, is never
// written to; an empty one is used.
func TestInitRefuses(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "notes.txt")
	require.NoError(t, os.WriteFile(keep, []byte("mine"), 0o644))
	_, err := accelc.Init(context.Background(), dir, accelc.InitOptions{})
	require.True(t, errors.Is(err, accelc.ErrNotEmpty), "%v", err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1)

	_, err = accelc.Init(context.Background(), keep, accelc.InitOptions{})
	require.True(t, errors.Is(err, accelc.ErrNotEmpty), "%v", err)

	empty := t.TempDir()
	res, err := accelc.Init(context.Background(), empty, accelc.InitOptions{Name: "lab", Team: "vision"})
	require.NoError(t, err)
	assert.Equal(t, "l40s", res.Profile)
	assert.FileExists(t, filepath.Join(empty, "cluster.cue"))
	// Nothing is left beside it.
	siblings, err := os.ReadDir(filepath.Dir(empty))
	require.NoError(t, err)
	for _, s := range siblings {
		assert.NotContains(t, s.Name(), ".init-")
	}

	for _, bad := range []accelc.InitOptions{{Name: "Big_Lab"}, {Team: "ML Team"}, {Type: "nvidia-h200-140gb"}} {
		_, err := accelc.Init(context.Background(), filepath.Join(t.TempDir(), "x"), bad)
		assert.True(t, accelc.IsUsage(err), "%+v: %v", bad, err)
	}
}
