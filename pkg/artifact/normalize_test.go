package artifact

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
	// Neighbours of what the fast reader takes, which it must leave to
	// yaml.v2.
	"a: b\nh: {} # x\n",
	"a: b\nj: x # comment\n",
	"a: \"\\/\"\n",
	"a: b\ni: [] x\n",
	"a: b\nh: [ ]\n",
	"a: first line\n  second: line\nb: x\n",
	"a: first line\n  - second line\n",
	"a: 1 first\n  second\n",
	"b: 'x' y\n",
	"b: \"bad \\q\"\n",
	"a: \"x\\ud800\"\n",
	"e: >\n  folded\n",
	"a: |\n  \n  x\n",
	"a:\n  b: 1\n   c: 2\n",
	"a:\n  b: 1\n c: 2\n",
	"a: 1\na: 2\n",
	"1: x\n",
	"a: &x 1\nb: *x\nc: !!str 1\n",
	"a:\tb\n",
	"a: b\r\n",
	"a: b\n---\nc: d\n",
	"--- \na: b\n",
	"a: b\n...\n",
	"\ufeffa: b\n",
	"a: \u0085b\n",
	"a: x\u2028y\n",
	"? a\n: b\n",
	"a: 'unterminated\n",
	"a: \"unterminated\n",
	"a: b\n  c: d\n",
	"a:\n- b\n  - c\n",
}

// fastCases are YAML the fast reader takes: yaml.v2's emitter's styles.
var fastCases = []string{
	"a: b\nc:\nd: ''\ne: \"\"\nf: {}\ng: []\nk: x#y\n",
	"a: first line\n  second line\n\n  after a blank\nb: x\n",
	"a: first line\n  > second line\n  ', '-') in ['x']\n",
	"a: 'it''s\n  folded\n\n  twice'\n",
	"a: \"esc \\\" \\\\ \\t \\n \\x41 \\u00e9 \\U0001F600 \\r \\0 \\a \\b \\e \\f \\v \\N \\_ \\L \\P \\' \\ \"\n",
	"a: \"folded\n  line \\\n  joined\\\n  \\ spaced\n\n  broken\"\n",
	"a: \"trailing   \n  spaces\"\n",
	"a: |\n  keep\n   more\n\n  end\nb: |-\n  strip\n\n\nc: |+\n  keep\n\n\nd: |2\n    indented\nf: |\ng: x\n",
	"a: |-\n  x\n\n\n",
	"a: |+\n  x\n\n",
	"a:\n  - b: 1\n    c: 2\n  - - x\n    - z\n  -\n    d: 3\n  - e\nf:\n- g\n-\n- h: []\n",
	"\"a b\": 1\n'c''d': 2\n\"e\\u0041\": 3\n",
	"- a: b\n",
	"a: ãb\nb: ^a$\nc: =x\nd: (a)\ne: 'true'\nf: \"null\"\ng: ~\nh: null\ni: true\nj: false\n",
	"metadata:\n  annotations:\n    accelc.io/version: v1\n    accelc.io/source-revision: r\n  name: x\n",
	"metadata:\n  annotations:\n    accelc.io/version: v1\n    x: z\n",
	"metadata:\n  annotations: {}\n",
}

// scalars are plain scalars yaml.v2 reads as strings, numbers, booleans,
// nulls or dates: each is tried as a value, an item and a key.
var scalars = []string{"1m", "8Gi", "738c", "738e", "0bd9", "0b101", "-0b1", "-0bx", "+0b1", "0x1F", "0o17", "017", "1e3", "1e", ".5", ".spec.team",
	"1_000", "+1", "-1", "0", "-0", "2026-01-01", "2026-1-2x", "2026-11-20T09:30:00Z", "2026-11-20 09:30:00", "12345678901234567890",
	"123456789012345678", "1234567890123456789", "-123456789012345678", "1.5", "1.", "+.inf", ".NaN", ".nan", "-.Inf", "0x", "1:30", "190:20:30",
	"yes", "Yes", "yEs", "y", "n", "On", "OFF", "~", "Null", "NULL", "null", "true", "True", "tRue", "<<", "^a$", "=x", "(a)", "ã", "Inf", "NaN",
	"infinity", "-inf", "+Infinity", "0x1p-2", "1_0.5", "0b1_0", "_1", "-", "--", "-a", "+a", "+", ".", "..", "a.b"}

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
		}
	}
	assert.Greater(t, objects, len(files)/2, "most rendered files are objects")

	// Every rendered file is read the fast way, to YAMLToJSON's very
	// value.
	for p, data := range files {
		v, ok := fastYAML(data)
		if !assert.True(t, ok, "%s: a rendered file is read the fast way", p) {
			continue
		}
		want, err := yaml.YAMLToJSON(data)
		require.NoError(t, err, p)
		got, err := json.Marshal(v)
		require.NoError(t, err, p)
		assert.Equal(t, string(want), string(got), p)
	}
	for _, c := range normalizeCases {
		assert.Equal(t, string(normalizeSlow([]byte(c))), string(normalize([]byte(c))), "%.200q", c)
	}
	for _, c := range fastCases {
		_, ok := fastYAML([]byte(c))
		assert.True(t, ok, "%q is read the fast way", c)
		assert.Equal(t, string(normalizeSlow([]byte(c))), string(normalize([]byte(c))), "%q", c)
	}
	fast := 0
	for _, c := range scalarCases() {
		if _, ok := fastYAML([]byte(c)); ok {
			fast++
		}
		assert.Equal(t, string(normalizeSlow([]byte(c))), string(normalize([]byte(c))), "%q", c)
	}
	assert.Greater(t, fast, len(scalars), "scalars read the fast way")
	// Deeper than maxFastDepth goes the slow way, to the same bytes.
	nested := func(depth int) []byte {
		var b strings.Builder
		for i := range depth {
			b.WriteString(strings.Repeat(" ", i) + "a:\n")
		}
		b.WriteString(strings.Repeat(" ", depth) + "b: c\n")
		return []byte(b.String())
	}
	_, ok := fastYAML(nested(maxFastDepth - 10))
	assert.True(t, ok, "nested below maxFastDepth")
	_, ok = fastYAML(nested(maxFastDepth + 1))
	assert.False(t, ok, "nested deeper than maxFastDepth")
	assert.Equal(t, string(normalizeSlow(nested(maxFastDepth+1))), string(normalize(nested(maxFastDepth+1))))
}

// scalarCases puts each of scalars in a mapping as a value, an item and
// a key.
func scalarCases() []string {
	var out []string
	for _, s := range scalars {
		out = append(out, "a: "+s+"\n", "a:\n- "+s+"\n- x\n", s+": x\n", "a: "+s+" and\n  more\n")
	}
	return out
}

// FuzzNormalize: normalize is normalizeSlow, whatever the YAML.
func FuzzNormalize(f *testing.F) {
	for _, c := range slices.Concat(normalizeCases, fastCases, scalarCases()) {
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

// BenchmarkNormalize normalizes every file of the rendered trees under
// testdata, the fast way (normalize) and by the definition
// (normalizeSlow).
func BenchmarkNormalize(b *testing.B) {
	files := renderedFiles(b)
	for _, c := range []struct {
		name string
		f    func([]byte) []byte
	}{{"normalize", normalize}, {"normalizeSlow", normalizeSlow}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				for _, data := range files {
					c.f(data)
				}
			}
		})
	}
}

// FuzzNormalizeEmitted: objects as render writes them (sigs.k8s.io/yaml's
// Marshal, yaml.v2's emitter) of fuzzed strings and numbers normalize to
// normalizeSlow's bytes: the ground the fast reader covers.
func FuzzNormalizeEmitted(f *testing.F) {
	f.Add("a", "b", int64(1), 1.5)
	f.Add("key with spaces", "a long value with spaces that the emitter folds over more than one line, since it is longer than eighty columns", int64(-7), 0.0)
	f.Add("x", "line one\nline two\n\n  indented\n", int64(0), 1e21)
	f.Add("q'uote", "\"quoted\" and 'single' # not a comment: here", int64(9007199254740993), -0.5)
	f.Add("yes", "no", int64(12345678901234567), 3.0)
	f.Add("8Gi", "0bd9", int64(10), 1e-7)
	f.Add("tab\there", "trailing spaces   \n  and\ttabs\t", int64(2), 2.5)
	f.Add("ü", "…\u00a0\u2028é", int64(3), 0.1)
	f.Fuzz(func(t *testing.T, a, b string, n int64, x float64) {
		obj := map[string]any{
			"apiVersion": "v1",
			"metadata":   map[string]any{"annotations": map[string]any{"accelc.io/version": b, a: b}, "name": a},
			a:            []any{b, n, x, true, nil, map[string]any{b: a, "list": []any{a, []any{b}}}, []any{}, map[string]any{}},
			"text":       strings.Repeat(b+" ", 3) + a,
			"lines":      b + "\n" + a + "\n",
		}
		data, err := yaml.Marshal(obj)
		if err != nil {
			return
		}
		if want, got := normalizeSlow(data), normalize(data); !bytes.Equal(want, got) {
			t.Fatalf("normalize(%q) = %q, want %q", data, got, want)
		}
	})
}
