package engine_test

import (
	"context"
	"os"
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

// retiredExample is hetero-prod with large-gpu retired for large-memory:
// a profile its teams' running pods name, which takes no new pods.
const retiredExample = "hetero-prod-retired"

// exampleRetired loads hetero-prod from a copy of the examples with
// large-gpu retired, as a commit that retires it would render it.
func exampleRetired(t *testing.T) (string, *compile.Model, *inventory.Inventory, render.Tree) {
	t.Helper()
	src, root := "../../../examples/clusters", t.TempDir()
	for _, d := range []string{"cue.mod", "fleet", "hetero-prod"} {
		require.NoError(t, os.CopyFS(filepath.Join(root, d), os.DirFS(filepath.Join(src, d))))
	}
	dir := filepath.Join(root, "hetero-prod")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "retire.cue"), []byte("package cluster\n\nprofiles: \"large-gpu\": retired: replacement: \"large-memory\"\n"), 0o644))
	res, err := accelc.Cluster(context.Background(), dir, accelc.Options{Stages: accelc.Rendered})
	require.NoError(t, err)
	require.False(t, res.Model.Profile("large-gpu").Offered())
	return dir, res.Model, res.Inventory, res.Tree
}
