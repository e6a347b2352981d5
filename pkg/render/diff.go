package render

// Diffing a rendered tree against one on disk (accelc diff): the changed
// files, written readably and safely.

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/rendered"
)

// Change is one file that differs between a rendered tree and what is
// deployed (a previous output or a pulled artifact).
type Change struct {
	Path string `json:"path"`
	// Op is "add" (the render adds the file), "remove" or "change".
	Op string `json:"op"`
	// Diff is a unified diff of the file, for "change".
	Diff string `json:"diff,omitempty"`
}

// maxDiffSize is the largest file Diff reads as YAML and diffs line by
// line. The API server stores no object over 1.5 MiB, so only a file that
// is no object of the tree goes past it; it is compared byte for byte,
// not parsed, so a deployed file cannot make diff take gigabytes.
const maxDiffSize = 4 << 20

// Diff compares what a render would write (tree) with what was deployed
// (old), file by file. Objects are compared without accelc's provenance
// annotations, so a new commit that changes nothing shows no change.
func Diff(tree, old Tree) ([]Change, error) {
	var out []Change
	seen := map[string]bool{}
	for _, p := range tree.Paths() {
		seen[p] = true
		prev, ok := old[p]
		if !ok {
			out = append(out, Change{Path: p, Op: "add"})
			continue
		}
		if len(prev) > maxDiffSize || len(tree[p]) > maxDiffSize {
			if !bytes.Equal(prev, tree[p]) {
				out = append(out, Change{Path: p, Op: "change", Diff: fmt.Sprintf(
					"(not shown: %d bytes deployed, %d rendered; a file over 4 MiB is compared byte for byte)\n", len(prev), len(tree[p]))})
			}
			continue
		}
		a, err := comparable(prev)
		if err != nil {
			return nil, fmt.Errorf("%s (deployed): %w", p, err)
		}
		b, err := comparable(tree[p])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if a == b {
			continue
		}
		d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: difflib.SplitLines(a), B: difflib.SplitLines(b),
			FromFile: "deployed/" + p, ToFile: "rendered/" + p, Context: 3,
		})
		if err != nil {
			return nil, err
		}
		out = append(out, Change{Path: p, Op: "change", Diff: d})
	}
	for _, p := range old.Paths() {
		if !seen[p] {
			out = append(out, Change{Path: p, Op: "remove"})
		}
	}
	return out, nil
}

// comparable is a file as Diff compares it: YAML re-marshalled without
// comments and without the provenance annotations; anything else as is.
func comparable(data []byte) (string, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil || obj == nil {
		return string(data), nil //nolint:nilerr // not YAML: compare bytes
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		if ann, ok := md["annotations"].(map[string]any); ok {
			delete(ann, AnnotationRevision)
			delete(ann, AnnotationVersion)
			if len(ann) == 0 {
				delete(md, "annotations")
			}
		}
	}
	out, err := yaml.Marshal(obj)
	return string(out), err
}

// WriteChanges prints changes as a reviewer reads them: a line per file
// (+ added, - removed, ~ changed) and the diff of each change. What came
// from the deployed side (a pulled artifact, a folder) is printed
// escaped: control characters but tab and newline, C1 controls, bidi
// overrides and bytes that are not UTF-8 appear as \xNN or \uNNNN, so a
// file cannot move the cursor, rewrite the screen or hide a line.
func WriteChanges(w io.Writer, changes []Change) error {
	var b bytes.Buffer
	for _, c := range changes {
		mark := map[string]string{"add": "+", "remove": "-", "change": "~"}[c.Op]
		fmt.Fprintf(&b, "%s %s\n", mark, escape(c.Path, false))
		if c.Diff != "" {
			b.WriteString(indent(escape(c.Diff, true)))
		}
	}
	if len(changes) == 0 {
		b.WriteString("no changes\n")
	} else {
		fmt.Fprintf(&b, "%d file(s) would change\n", len(changes))
	}
	_, err := w.Write(b.Bytes())
	return err
}

// escape writes what a terminal would act on as Go escapes it: control
// characters (but tab, and newline where newlines is true), C1 controls,
// bidirectional formatting characters, and bytes that are not UTF-8.
func escape(s string, newlines bool) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unsafeRune(r, newlines) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && unsafeRune(r, newlines):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r, newlines):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func unsafeRune(r rune, newlines bool) bool {
	switch {
	case r == '\t', r == '\n' && newlines:
		return false
	case unicode.IsControl(r): // C0, DEL and C1
		return true
	}
	return unicode.Is(unicode.Bidi_Control, r)
}

func indent(s string) string {
	lines := strings.SplitAfter(strings.TrimRight(s, "\n"), "\n")
	return "    " + strings.Join(lines, "    ") + "\n"
}

// LoadTree reads a directory (a previous render, or an unpacked artifact)
// into a tree: its regular files by slash path. It reads nothing outside
// dir: a symbolic link, which accelc never writes, is an error that names
// it, and so is any other special file. render's record of the content
// digest (rendered.ContentFile) is no file of the tree, and is left out.
func LoadTree(dir string) (Tree, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fsys := root.FS()
	t := Tree{}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == rendered.ContentFile {
			return err
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: a %s: accelc renders none, and diff reads nothing outside %s: remove it, or diff against the published artifact",
				filepath.Join(dir, filepath.FromSlash(p)), rendered.Kind(d.Type()), dir)
		}
		data, err := rendered.ReadRegular(fsys, p)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, filepath.FromSlash(p)), err)
		}
		t[p] = data
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}
