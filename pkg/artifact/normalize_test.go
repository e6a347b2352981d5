package artifact

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// normalizeCases are YAML documents where the fast normalize could part
// from its definition: provenance annotations in every place, objects
// that are not objects, strings that are not UTF-8 (!!binary), escapes,
// deep nesting, several documents, anchors, YAML 1.1 scalars.
var normalizeCases = []string{
	"",
	"null\n",
	"~\n",
	"- a\n- b\n",
	"x\n",
	"{}\n",
	"metadata: {}\n",
	"metadata: null\n",
	"metadata: [1, 2]\n",
	"metadata: {annotations: {}}\n",
	"metadata: {annotations: null}\n",
	"metadata: {annotations: [accelc.io/version]}\n",
	"metadata: {annotations: {accelc.io/version: v1}}\n",
	"metadata: {annotations: {accelc.io/version: v1, accelc.io/source-revision: r}, name: x}\n",
	"metadata: {name: x, annotations: {accelc.io/version: v1, a: b}, labels: {accelc.io/version: v1}}\n",
	"metadata: {annotations: {\"accelc.io/version\": v1, \"accelc.io/version2\": v1, \"accelc.io\\u002fversion\": x}}\n",
	"spec: {metadata: {annotations: {accelc.io/version: v1}}}\n",
	"a: {metadata: {annotations: {accelc.io/version: v1}}}\nmetadata: {annotations: {accelc.io/version: v1, z: \"}\"}}\n",
	"metadata: {annotations: {accelc.io/version: \"v1\\\"}, {\", b: '[{'}}\n",
	"metadata:\n  annotations:\n    accelc.io/version: v1\n---\nkind: Second\n",
	"metadata: {annotations: {k: !!binary /w==}}\n",
	"!!binary /w==: x\nmetadata: {annotations: {accelc.io/version: v1}}\n",
	"a: !!binary /w==\nb: !!binary /g==\nmetadata: {annotations: {accelc.io/version: v1}}\n",
	"a: \"\\uFFFD\"\nmetadata: {annotations: {accelc.io/version: v1}}\n",
	"a: \"<&>\\u2028\\x01\\t\"\nmetadata: {annotations: {accelc.io/version: v1}}\n",
	"n: [1, 1.5, 1e3, 0x1F, 0o17, 017, .inf, -.Inf, .nan, 12345678901234567890, -9223372036854775809, 1_000]\n",
	"b: [yes, no, on, off, y, n, true, False, ~, null]\n",
	"1: a\ntrue: b\n1.5: c\nnull: d\n",
	"x: &a {metadata: {annotations: {accelc.io/version: v1}}}\nmetadata: *a\n",
	"t: 2026-11-20T09:30:00Z\nd: 2026-11-20\n",
	"metadata: {annotations: {accelc.io/version: v1}}\nmetadata: {name: dup}\n",
	"a: b: c\n",
	"\t- bad\n",
	strings.Repeat("[", 12000) + strings.Repeat("]", 12000) + "\n",
	"a: " + strings.Repeat("[", 12000) + strings.Repeat("]", 12000) + "\nmetadata: {annotations: {accelc.io/version: v1}}\n",
	"a: " + strings.Repeat("[", 1100) + strings.Repeat("]", 1100) + "\nmetadata: {annotations: {accelc.io/version: v1}}\n",
	"a: " + strings.Repeat("{b: ", 1100) + "1" + strings.Repeat("}", 1100) + "\nmetadata: {annotations: {accelc.io/version: v1}}\n",
}

// renderedFiles are the rendered trees under testdata/golden*.
func renderedFiles(t testing.TB) map[string][]byte {
	t.Helper()
	golden, err := filepath.Glob("../../testdata/golden*")
	require.NoError(t, err)
	require.NotEmpty(t, golden)
	files := map[string][]byte{}
	for _, dir := range golden {
		require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			files[p] = data
			return err
		}))
	}
	return files
}

// TestNormalizeFast: normalize gives normalizeSlow's bytes, the
// definition, for every file of the rendered trees under testdata and
// for the edge cases; and the provenance annotations are gone from the
// rendered files.
func TestNormalizeFast(t *testing.T) {
	files := renderedFiles(t)
	assert.Greater(t, len(files), 500)
	objects := 0
	for p, data := range files {
		fast := normalize(data)
		require.Equal(t, string(normalizeSlow(data)), string(fast), p)
		if !bytes.Equal(fast, data) {
			objects++
			assert.NotContains(t, string(fast), "accelc.io/source-revision", p)
			j, err := yaml.YAMLToJSON(data)
			require.NoError(t, err)
			_, ok := dropProvenance(j)
			assert.True(t, ok, "%s: a rendered file goes the fast way", p)
		}
	}
	assert.Greater(t, objects, len(files)/2, "most rendered files are objects")
	for _, c := range normalizeCases {
		assert.Equal(t, string(normalizeSlow([]byte(c))), string(normalize([]byte(c))), "%.200q", c)
	}
	// A few cases the fast way must not take.
	_, ok := dropProvenance([]byte(`{"a":` + strings.Repeat("[", maxFastDepth+1) + strings.Repeat("]", maxFastDepth+1) + `}`))
	assert.False(t, ok, "deeper than maxFastDepth")
	_, ok = dropProvenance([]byte(`{"a":1}x`))
	assert.False(t, ok, "trailing bytes")
}

// FuzzNormalize: normalize is normalizeSlow, whatever the YAML.
func FuzzNormalize(f *testing.F) {
	for _, c := range normalizeCases {
		f.Add([]byte(c))
	}
	n := 0
	for _, data := range renderedFiles(f) {
		if n++; n > 50 {
			break
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if want, got := normalizeSlow(data), normalize(data); !bytes.Equal(want, got) {
			t.Fatalf("normalize(%q) = %q, want %q", data, got, want)
		}
	})
}
