package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/internal/nodegen"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/artifact"
	"github.com/accelc/accelc/pkg/render"
)

const profileYAML = `# Rendered by accelc for cluster lab. Do not edit: change the CUE and run ` + "`accelc render`" + `.
apiVersion: infrastructure.opendatahub.io/v1
kind: HardwareProfile
metadata:
  annotations:
    accelc.io/source-revision: main@sha1:0123456789abcdef0123456789abcdef01234567
    accelc.io/version: v1.2.0
    opendatahub.io/display-name: A100
  name: a100
spec:
  count: 12345678901234567890
`

// TestContentDigest: the digest is what the files say. The provenance
// annotations, comments, key order and the order files are given in do
// not count; a changed value, a file renamed or added does.
func TestContentDigest(t *testing.T) {
	base := map[string][]byte{
		"kustomization.yaml":  []byte("resources:\n- profiles\n"),
		"profiles/a100.yaml":  []byte(profileYAML),
		"profiles/notes.bin":  {0xff, 0x00, 'x'},
		"profiles/empty.yaml": {},
	}
	d := artifact.ContentDigest(base)
	assert.Regexp(t, `^sha256:[0-9a-f]{64}$`, d)

	same := func(edit func(map[string][]byte)) map[string][]byte {
		out := map[string][]byte{}
		for k, v := range base {
			out[k] = v
		}
		edit(out)
		return out
	}
	for name, files := range map[string]map[string][]byte{
		"another commit and accelc": same(func(f map[string][]byte) {
			f["profiles/a100.yaml"] = []byte(`apiVersion: infrastructure.opendatahub.io/v1
kind: HardwareProfile
metadata:
  annotations:
    accelc.io/source-revision: feature@sha1:fedcba9876543210fedcba9876543210fedcba98
    accelc.io/version: v1.3.0-dev
    opendatahub.io/display-name: A100
  name: a100
spec: {count: 12345678901234567890}
`)
		}),
		"a comment": same(func(f map[string][]byte) {
			f["profiles/a100.yaml"] = []byte(profileYAML + "# end\n")
		}),
		"keys in another order, no header": same(func(f map[string][]byte) {
			f["profiles/a100.yaml"] = []byte(`kind: HardwareProfile
spec:
  count: 12345678901234567890
metadata:
  name: a100
  annotations:
    opendatahub.io/display-name: A100
apiVersion: infrastructure.opendatahub.io/v1
`)
		}),
	} {
		assert.Equal(t, d, artifact.ContentDigest(files), name)
	}

	for name, files := range map[string]map[string][]byte{
		"a value": same(func(f map[string][]byte) {
			f["profiles/a100.yaml"] = []byte(profileYAML[:len(profileYAML)-2] + "1\n")
		}),
		"another resource listed": same(func(f map[string][]byte) {
			f["kustomization.yaml"] = []byte("resources:\n- profiles\n- nodes\n")
		}),
		"another annotation": same(func(f map[string][]byte) {
			f["profiles/a100.yaml"] = []byte(profileYAML[:len(profileYAML)-len("  name: a100\nspec:\n  count: 12345678901234567890\n")] +
				"    accelc.io/team: a\n  name: a100\nspec:\n  count: 12345678901234567890\n")
		}),
		"a file renamed": same(func(f map[string][]byte) {
			f["profiles/a100-80gb.yaml"] = f["profiles/a100.yaml"]
			delete(f, "profiles/a100.yaml")
		}),
		"a file added": same(func(f map[string][]byte) { f["x.yaml"] = []byte("a: 1\n") }),
		"bytes of a file that is not YAML": same(func(f map[string][]byte) {
			f["profiles/notes.bin"] = []byte{0xff, 0x00, 'y'}
		}),
	} {
		assert.NotEqual(t, d, artifact.ContentDigest(files), name)
	}

	// Only the provenance annotations are left out; an object whose only
	// annotations they were counts as one without annotations.
	bare := same(func(f map[string][]byte) {
		f["kustomization.yaml"] = []byte("metadata:\n  annotations:\n    accelc.io/version: v1\nresources:\n- profiles\n")
	})
	withEmpty := same(func(f map[string][]byte) {
		f["kustomization.yaml"] = []byte("metadata: {}\nresources:\n- profiles\n")
	})
	assert.Equal(t, artifact.ContentDigest(withEmpty), artifact.ContentDigest(bare))
}

// TestContentDigestAnnotation: Build annotates the manifest with the
// content digest of the files it packed, the one ContentDigest gives for
// them; the tree's other files do not count.
func TestContentDigestAnnotation(t *testing.T) {
	dir := tree(t, 0o644)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nodes/rule.yaml~"), []byte("backup"), 0o644))
	img, _, err := artifact.Build(dir, treePaths(), artifact.Metadata{Created: created})
	require.NoError(t, err)
	m, err := img.Manifest()
	require.NoError(t, err)
	files := map[string][]byte{}
	for p, body := range treeFiles {
		files[p] = []byte(body)
	}
	assert.Equal(t, artifact.ContentDigest(files), m.Annotations[artifact.AnnotationContentDigest])
}

// TestProvenanceAnnotations: the annotations the digest leaves out are
// the ones render writes.
func TestProvenanceAnnotations(t *testing.T) {
	assert.ElementsMatch(t, []string{render.AnnotationRevision, render.AnnotationVersion}, artifact.ProvenanceAnnotations)
}

// TestRenderedContentDigest: the digest render computes from its objects
// (accelc.Result.ContentDigest, recorded beside the tree for push) is the
// one ContentDigest computes from the files, for every example, with the
// provenance annotations, and for the hetero-prod tree of 5,000 nodes.
func TestRenderedContentDigest(t *testing.T) {
	dirs, err := filepath.Glob("../../examples/clusters/*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs)
	nodes := filepath.Join(t.TempDir(), "nodes.json")
	require.NoError(t, os.WriteFile(nodes, nodegen.List(nodegen.Generated(5000)), 0o644))
	type run struct {
		dir string
		src accelc.Source
	}
	runs := []run{{"../../examples/clusters/hetero-prod", accelc.Source{File: nodes}}}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "cluster.cue")); err == nil {
			runs = append(runs, run{dir: d})
		}
	}
	prov := &render.Provenance{Revision: "main@sha1:0123456789abcdef0123456789abcdef01234567", Version: "v1.2.0"}
	for _, r := range runs {
		res, err := accelc.Cluster(context.Background(), r.dir, accelc.Options{Stages: accelc.Rendered, Inventory: r.src, Provenance: prov})
		require.NoError(t, err, r.dir)
		require.Regexp(t, `^sha256:[0-9a-f]{64}$`, res.ContentDigest, r.dir)
		assert.Equal(t, artifact.ContentDigest(res.Tree), res.ContentDigest, "%s (%d files)", r.dir, len(res.Tree))
	}
}
