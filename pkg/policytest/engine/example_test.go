package engine_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// example loads an example cluster, its inventory and its rendered tree.
func example(t *testing.T, name string) (string, *compile.Model, *inventory.Inventory, render.Tree) {
	t.Helper()
	dir := filepath.Join("../../../examples/clusters", name)
	m, err := compile.Load(dir)
	require.NoError(t, err)
	inv, err := inventory.Load(compile.DefaultInventory(dir), m.Catalog, inventory.Options{Pins: m.Pins})
	require.NoError(t, err)
	tree, err := render.Cluster(m, inv)
	require.NoError(t, err)
	return dir, m, inv, tree
}
