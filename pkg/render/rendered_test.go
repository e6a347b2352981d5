package render_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/render"
)

// TestRenderedFiles: every example's tree, as Write leaves it, lists
// exactly the files rendered; what else lands in the folder (a Git
// checkout, an editor's backup, a link) is set apart; a folder accelc did
// not render, or a tree with a listed file gone or replaced, is refused.
func TestRenderedFiles(t *testing.T) {
	for _, name := range exampleClusters(t) {
		t.Run(name, func(t *testing.T) {
			tree := renderExample(t, name)
			dir := filepath.Join(t.TempDir(), name)
			require.NoError(t, tree.Write(dir))
			files, extra, err := render.RenderedFiles(dir)
			require.NoError(t, err)
			assert.Equal(t, tree.Paths(), files)
			assert.Empty(t, extra)
		})
	}

	tree := renderExample(t, "small-lab")
	dir := filepath.Join(t.TempDir(), "small-lab")
	require.NoError(t, tree.Write(dir))
	put := func(p, body string) {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(body), 0o644))
	}
	put(".git/config", "[remote \"origin\"]\n\turl = https://bot:s3cret@git.example.com/fleet.git\n")
	put("profiles/hardwareprofile-gpu.yaml~", "backup")
	put("profiles/.hardwareprofile-gpu.yaml.swp", "swap")
	put("notes/todo.txt", "todo")
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(dir, "nodes", "passwd.yaml")))
	files, extra, err := render.RenderedFiles(dir)
	require.NoError(t, err)
	assert.Equal(t, tree.Paths(), files)
	assert.Equal(t, []string{".git/", "nodes/passwd.yaml", "notes/", "profiles/.hardwareprofile-gpu.yaml.swp", "profiles/hardwareprofile-gpu.yaml~"}, extra)

	// A listed file that is a link, or gone, or not accelc's.
	gpu := filepath.Join(dir, "profiles", "hardwareprofile-gpu.yaml")
	require.NoError(t, os.Remove(gpu))
	require.NoError(t, os.Symlink("/etc/passwd", gpu))
	_, _, err = render.RenderedFiles(dir)
	assert.ErrorContains(t, err, "profiles/hardwareprofile-gpu.yaml (listed in profiles/kustomization.yaml): a symbolic link, not a regular file")
	require.NoError(t, os.Remove(gpu))
	_, _, err = render.RenderedFiles(dir)
	assert.ErrorContains(t, err, "profiles/hardwareprofile-gpu.yaml (listed in profiles/kustomization.yaml): missing")
	put("profiles/hardwareprofile-gpu.yaml", "apiVersion: v1\nkind: Secret\n")
	_, _, err = render.RenderedFiles(dir)
	assert.ErrorContains(t, err, "not the tree accelc rendered: render it again")
	assert.ErrorContains(t, err, "profiles/hardwareprofile-gpu.yaml (listed in profiles/kustomization.yaml): not written by accelc")

	// A Git checkout, or any folder accelc did not render.
	checkout := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(checkout, "kustomization.yaml"), []byte("resources: [x]\n"), 0o644))
	_, _, err = render.RenderedFiles(checkout)
	assert.ErrorContains(t, err, "not a tree accelc rendered (kustomization.yaml has no accelc header)")
	_, _, err = render.RenderedFiles(t.TempDir())
	assert.ErrorContains(t, err, "not a tree accelc rendered (missing)")
}
