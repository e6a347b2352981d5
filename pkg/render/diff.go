package render

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"sigs.k8s.io/yaml"
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
// (+ added, - removed, ~ changed) and the diff of each change.
func WriteChanges(w io.Writer, changes []Change) error {
	var b bytes.Buffer
	for _, c := range changes {
		mark := map[string]string{"add": "+", "remove": "-", "change": "~"}[c.Op]
		fmt.Fprintf(&b, "%s %s\n", mark, c.Path)
		if c.Diff != "" {
			b.WriteString(indent(c.Diff))
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

func indent(s string) string {
	lines := strings.SplitAfter(strings.TrimRight(s, "\n"), "\n")
	return "    " + strings.Join(lines, "    ") + "\n"
}

// LoadTree reads a directory (a previous render, or an unpacked artifact)
// into a tree.
func LoadTree(dir string) (Tree, error) {
	t := Tree{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		t[filepath.ToSlash(rel)] = data
		return nil
	})
	return t, err
}
