package render_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/accelc/accelc/internal/nodegen"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// BenchmarkRender5000 is one whole `accelc render` of the hetero-prod
// example against a generated 5,000-node inventory: compile the CUE, read
// and classify the snapshot, render and write the tree. Target (issue 2):
// under 1 s and 300 MB. `make bench` also times the binary.
func BenchmarkRender5000(b *testing.B) {
	dir := b.TempDir()
	snap := filepath.Join(dir, "nodes.json")
	if err := os.WriteFile(snap, nodegen.List(nodegen.Generated(5000)), 0o644); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	b.ReportAllocs()
	for b.Loop() {
		res, err := accelc.Cluster(context.Background(), filepath.Join(examplesDir, "hetero-prod"), accelc.Options{
			Stages: accelc.Rendered, Inventory: accelc.Source{File: snap},
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := res.Tree.Write(out); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClassify5000 isolates reading and classifying the snapshot.
func BenchmarkClassify5000(b *testing.B) {
	data := nodegen.List(nodegen.Generated(5000))
	m, err := compile.Load(filepath.Join(examplesDir, "hetero-prod"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		raw, _, err := inventory.Decode(data)
		if err != nil {
			b.Fatal(err)
		}
		inventory.Classify(raw, m.Catalog, inventory.Options{Pins: m.Pins})
	}
}

// BenchmarkCompile isolates loading the cluster's CUE with the schema.
func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compile.Load(filepath.Join(examplesDir, "hetero-prod")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidate isolates the API-server validation pass over the
// objects of the hetero-prod example with a 5,000-node inventory.
func BenchmarkValidate(b *testing.B) {
	m, err := compile.Load(filepath.Join(examplesDir, "hetero-prod"))
	if err != nil {
		b.Fatal(err)
	}
	raw, _, err := inventory.Decode(nodegen.List(nodegen.Generated(5000)))
	if err != nil {
		b.Fatal(err)
	}
	objs, err := render.Render(m, inventory.Classify(raw, m.Catalog, inventory.Options{Pins: m.Pins}))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := render.Validate(m, objs); err != nil {
			b.Fatal(err)
		}
	}
}
