package rendered_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/accelc/accelc/pkg/rendered"
)

// TestRead: Read finds the files Files lists, each with the bytes and
// mode the folder has, and the same extra paths; a folder accelc did not
// render is an error for both.
func TestRead(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/golden/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden trees: %v", err)
	}
	for _, dir := range dirs {
		files, extra, err := rendered.Files(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		tree, err := rendered.Read(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		var paths []string
		for _, f := range tree.Files {
			paths = append(paths, f.Path)
			want, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Path)))
			if err != nil || string(want) != string(f.Data) {
				t.Errorf("%s/%s: Read's bytes differ from the file's (%v)", dir, f.Path, err)
			}
			if !f.Mode.IsRegular() {
				t.Errorf("%s/%s: mode %v", dir, f.Path, f.Mode)
			}
		}
		if !slices.Equal(paths, files) || !slices.Equal(tree.Extra, extra) {
			t.Errorf("%s: Read lists %v %v, Files %v %v", dir, paths, tree.Extra, files, extra)
		}
	}
	if _, err := rendered.Read(t.TempDir()); err == nil {
		t.Error("an empty folder read as a rendered tree")
	}
}

// TestReadRefusesAnotherHeader: a listed file without the tree's header
// is not the tree accelc rendered.
func TestReadRefusesAnotherHeader(t *testing.T) {
	dir := t.TempDir()
	head := "# Rendered by accelc for cluster a. Do not edit.\n"
	write := func(p, data string) {
		t.Helper()
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("kustomization.yaml", head+"resources: [nodes]\n")
	write("nodes/kustomization.yaml", head+"resources: [a.yaml]\n")
	write("nodes/a.yaml", "# Rendered by accelc for cluster b. Do not edit.\nkind: X\n")
	if _, err := rendered.Read(dir); err == nil {
		t.Fatal("another cluster's file read as this tree's")
	}
	write("nodes/a.yaml", head+"kind: X\n")
	tree, err := rendered.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Files) != 3 || tree.Files[1].Path != "nodes/a.yaml" || string(tree.Files[1].Data) != head+"kind: X\n" {
		t.Errorf("read %d file(s), the second %s: %q", len(tree.Files), tree.Files[1].Path, tree.Files[1].Data)
	}
}

// BenchmarkRead reads the largest golden tree, as push does.
func BenchmarkRead(b *testing.B) {
	for b.Loop() {
		if _, err := rendered.Read("../../testdata/golden/hetero-prod"); err != nil {
			b.Fatal(err)
		}
	}
}
