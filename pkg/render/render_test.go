package render_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/policies"
)

const examplesDir = "../../examples/clusters"

// exampleClusters lists the example cluster directories: those with an
// inventory snapshot beside their CUE.
func exampleClusters(t testing.TB) []string {
	t.Helper()
	entries, err := os.ReadDir(examplesDir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if e.IsDir() && compile.DefaultInventory(filepath.Join(examplesDir, e.Name())) != "" {
			out = append(out, e.Name())
		}
	}
	require.NotEmpty(t, out)
	return out
}

func renderExample(t testing.TB, name string) render.Tree {
	t.Helper()
	res, err := accelc.Cluster(context.Background(), filepath.Join(examplesDir, name), accelc.Options{Stages: accelc.Rendered})
	require.NoError(t, err)
	return res.Tree
}

// TestGolden renders every example and compares each file byte for byte
// with testdata/golden/<cluster>/; `go test ./... -update` refreshes them.
func TestGolden(t *testing.T) {
	for _, name := range exampleClusters(t) {
		t.Run(name, func(t *testing.T) {
			goldenTree(t, filepath.Join("../../testdata/golden", name), renderExample(t, name))
		})
	}
}

func TestRenderIsDeterministic(t *testing.T) {
	for _, name := range exampleClusters(t) {
		a, b := renderExample(t, name), renderExample(t, name)
		assert.Equal(t, a, b, name)
	}
}

// TestKustomizeBuildsTree builds each rendered tree with krusty, the
// library behind `kubectl kustomize`.
func TestKustomizeBuildsTree(t *testing.T) {
	for _, name := range exampleClusters(t) {
		t.Run(name, func(t *testing.T) {
			tree := renderExample(t, name)
			fs := filesys.MakeFsInMemory()
			for _, p := range tree.Paths() {
				require.NoError(t, fs.WriteFile("/out/"+p, tree[p]))
			}
			// The root, then the folders applied on their own.
			kinds := map[string]int{}
			built := 0
			for _, dir := range []string{"/out", "/out/" + render.DirConstraints, "/out/" + render.DirFlux, "/out/" + render.DirMonitoring} {
				if !fs.Exists(dir + "/kustomization.yaml") {
					continue
				}
				res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, dir)
				require.NoError(t, err, dir)
				for _, r := range res.Resources() {
					kinds[r.GetKind()]++
				}
				built += len(res.Resources())
			}
			assert.Equal(t, 1, kinds[policies.Admission.Kind], "the constraint, on its own")
			assert.Equal(t, 1, kinds["NodeFeatureRule"])
			assert.GreaterOrEqual(t, kinds["ConfigMap"], 1, "the catalog, and the mig-parted config where the cluster partitions GPUs")
			assert.Positive(t, kinds["HardwareProfile"])
			// Every file but the kustomizations is one object.
			files := 0
			for _, p := range tree.Paths() {
				if !strings.HasSuffix(p, "kustomization.yaml") {
					files++
				}
			}
			assert.Equal(t, files, built)
		})
	}
}

func TestWriteIsAtomicAndGuarded(t *testing.T) {
	tree := renderExample(t, "small-lab")
	out := filepath.Join(t.TempDir(), "out", "small-lab")
	require.NoError(t, tree.Write(out))
	// A second write replaces the tree, leaving no temporary siblings
	// (only the lock file that serialises renders).
	require.NoError(t, os.WriteFile(filepath.Join(out, "stale.yaml"), []byte("x"), 0o644))
	require.NoError(t, tree.Write(out))
	_, err := os.Stat(filepath.Join(out, "stale.yaml"))
	assert.True(t, os.IsNotExist(err), "stale files are gone after a render")
	siblings, err := os.ReadDir(filepath.Dir(out))
	require.NoError(t, err)
	require.Len(t, siblings, 2)
	assert.Equal(t, ".small-lab.lock", siblings[0].Name())
	info, err := os.Stat(filepath.Join(out, "kustomization.yaml"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())

	// A directory accelc did not write is never replaced.
	foreign := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644))
	err = tree.Write(foreign)
	require.ErrorContains(t, err, "refusing to replace")
	b, err := os.ReadFile(filepath.Join(foreign, "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "mine", string(b))
}

// TestProvenance: with provenance every object carries the source revision
// and accelc's version, the kustomizations stay bare, and rendering the
// same commit twice gives the same bytes.
func TestProvenance(t *testing.T) {
	dir := filepath.Join(examplesDir, "hetero-prod")
	m, err := compile.Load(dir)
	require.NoError(t, err)
	inv, err := inventory.Load(compile.DefaultInventory(dir), m.Catalog, inventory.Options{Pins: m.Pins})
	require.NoError(t, err)
	prov := render.Provenance{Revision: "main@sha1:0123456789abcdef0123456789abcdef01234567", Version: "v0.4.0"}
	tree, err := render.Cluster(m, inv, prov)
	require.NoError(t, err)
	again, err := render.Cluster(m, inv, prov)
	require.NoError(t, err)
	assert.Equal(t, tree, again)
	plain := renderExample(t, "hetero-prod")
	for _, p := range tree.Paths() {
		if strings.HasSuffix(p, "kustomization.yaml") {
			assert.Equal(t, string(plain[p]), string(tree[p]), p)
			continue
		}
		var obj struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		require.NoError(t, yaml.Unmarshal(tree[p], &obj), p)
		assert.Equal(t, prov.Revision, obj.Metadata.Annotations[render.AnnotationRevision], p)
		assert.Equal(t, "v0.4.0", obj.Metadata.Annotations[render.AnnotationVersion], p)
	}
}

// TestConstraintParameters: the admission constraint sets every
// parameter its template declares (policies.AdmissionParams), and no
// other.
func TestConstraintParameters(t *testing.T) {
	tree := renderExample(t, "small-lab")
	var c struct {
		Spec struct {
			Parameters map[string]any `json:"parameters"`
		} `json:"spec"`
	}
	file := render.DirConstraints + "/" + strings.ToLower(policies.Admission.Kind) + "-" + render.ConstraintName + ".yaml"
	require.NoError(t, yaml.Unmarshal(tree[file], &c))
	// labelledFromQueue is rendered only before Kubernetes 1.36
	// (TestOlderMinorLabelsFromQueue).
	want := slices.DeleteFunc(policies.AdmissionParams(), func(p string) bool { return p == "labelledFromQueue" })
	assert.ElementsMatch(t, want, slices.Collect(maps.Keys(c.Spec.Parameters)))
}

// goldenTree compares every file of tree byte for byte with the golden
// directory's (-update rewrites it whole), and fails on a golden file no
// longer rendered: none may be left over from an object that is gone.
func goldenTree(t *testing.T, golden string, tree render.Tree) {
	t.Helper()
	if *testutil.Update {
		require.NoError(t, os.RemoveAll(golden))
	}
	for _, p := range tree.Paths() {
		testutil.Golden(t, filepath.Join(golden, filepath.FromSlash(p)), tree[p])
	}
	var onDisk []string
	require.NoError(t, filepath.WalkDir(golden, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(golden, path)
			onDisk = append(onDisk, filepath.ToSlash(rel))
		}
		return err
	}))
	sort.Strings(onDisk)
	assert.Equal(t, tree.Paths(), onDisk, "%s has files the render has not: run make golden", golden)
}
