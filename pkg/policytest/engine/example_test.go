package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// example loads an example cluster, its inventory and its rendered tree.
func example(t *testing.T, name string) (string, *compile.Model, *inventory.Inventory, render.Tree) {
	t.Helper()
	dir := filepath.Join("../../../examples/clusters", name)
	res, err := accelc.Cluster(context.Background(), dir, accelc.Options{Stages: accelc.Rendered})
	require.NoError(t, err)
	return dir, res.Model, res.Inventory, res.Tree
}
