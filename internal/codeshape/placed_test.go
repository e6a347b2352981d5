package codeshape

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// perNodeQuestions are the model's questions about nodes, pools and their
// capacity (compile.Model's methods of these names), which place the
// inventory, or search the pools, again on every call. A consumer asks
// them of the placed cluster (compile.Placed, Model.Place), which
// resolves them once; its methods are named apart so that a call of one
// of these names is the model's.
var perNodeQuestions = []string{"PoolOf", "NodeGPUs", "PoolNodes", "PoolCapacity", "ProfileCapacity"}

// placedReaders are the packages that read the placed cluster and must
// not ask the model per node; pkg/serve places a node change on the last
// count's (Placed.Replaced).
var placedReaders = []string{"pkg/render", "pkg/audit", "pkg/cost", "pkg/accelc", "pkg/serve"}

// modelQuestions are the call sites of perNodeQuestions in a file, each
// as a one-line span named after the call.
func modelQuestions(fset *token.FileSet, f *ast.File) []span {
	var out []span
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if ok && slices.Contains(perNodeQuestions, sel.Sel.Name) {
			out = append(out, span{name: exprString(sel.X) + "." + sel.Sel.Name, start: fset.Position(call.Pos()), lines: 1})
		}
		return true
	})
	return out
}

// exprString is a selector's receiver as written, for the failure.
func exprString(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.CallExpr:
		return exprString(x.Fun) + "(…)"
	}
	return "…"
}

// TestPlacedCluster: render, audit, cost and the library read the placed
// cluster, never the model's per-node questions.
func TestPlacedCluster(t *testing.T) {
	// The questions are the model's: a rename must move this list too,
	// or the rule would pass for want of anything to find.
	have := map[string]bool{}
	for _, file := range goFiles(t, filepath.Join(root, "pkg/compile")) {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && typeName(fd.Recv.List[0].Type) == "*Model" {
				have[fd.Name.Name] = true
			}
		}
	}
	for _, q := range perNodeQuestions {
		if !have[q] {
			t.Errorf("compile.Model has no method %s: update perNodeQuestions", q)
		}
	}
	for _, dir := range placedReaders {
		files := goFiles(t, filepath.Join(root, dir))
		if len(files) == 0 {
			t.Fatalf("no Go files under %s: has the code moved?", dir)
		}
		for _, file := range files {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			for _, s := range modelQuestions(fset, f) {
				rel, _ := filepath.Rel(root, s.start.Filename)
				t.Errorf("%s:%d: %s asks the model per node: place the inventory once (compile.Model.Place) and ask the placed cluster (NodePool, GPUs, Members, Capacity, SharedCapacity)",
					filepath.ToSlash(rel), s.start.Line, s.name)
			}
		}
	}
}

// TestPlacedRuleCatches: the measure finds the model's questions however
// the model is reached, and not the placed cluster's.
func TestPlacedRuleCatches(t *testing.T) {
	src := `package p

func f() {
	_ = m.PoolOf(n.Name, n.AcceleratorType)
	_, _ = a.m.NodeGPUs(n)
	_ = res.Model.PoolCapacity(pool, "", inv)
	_ = pl.NodePool(n)
	_, _ = pl.GPUs(n)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range modelQuestions(fset, f) {
		got = append(got, s.name+"@"+strings.TrimPrefix(s.start.String(), "p.go:"))
	}
	want := []string{"m.PoolOf@4:6", "a.m.NodeGPUs@5:9", "res.Model.PoolCapacity@6:6"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
