// Package codeshape holds tests of the code's shape: rules a reader can
// count on, such as the loader's and the classifier's functions fitting
// on a screen. Each rule is a row of rules; a new one names the packages
// it covers, what it measures and the most it allows.
package codeshape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// root is the repository's root, from this package's directory.
const root = "../.."

// span is one measured piece of code: a function, or a function literal
// where a rule looks for one.
type span struct {
	name  string
	start token.Position
	lines int
}

// rule is one shape the code keeps.
type rule struct {
	// name says what the rule is about, in the failure.
	name string
	// dirs are the directories it covers, from the repository's root,
	// with the packages under them.
	dirs []string
	// find lists what the rule measures in one parsed non-test file.
	find func(fset *token.FileSet, f *ast.File) []span
	// max is the most lines a span may have.
	max int
	// why is what to do about a span over max.
	why string
}

var rules = []rule{
	{
		name: "non-test functions in pkg/compile and pkg/inventory",
		dirs: []string{"pkg/compile", "pkg/inventory"},
		find: funcDecls,
		max:  80,
		why:  "split it into named phases, each a function that says what it does (see compile's loadUnbounded and inventory's classifyNode)",
	},
	{
		name: "non-test files in pkg",
		dirs: []string{"pkg"},
		find: wholeFile,
		max:  700,
		why:  "a file holds one idea: split it along the lines the code already has (see pkg/serve: server, views, respond, update, routes, listen, metrics), each file's first comment saying its purpose",
	},
	{
		name: "cobra RunE functions in cmd/accelc-core and internal/cli",
		dirs: []string{"cmd/accelc-core", "internal/cli"},
		find: cobraRunEs,
		max:  30,
		why:  "a command is flags, one library call and printing: move the work into pkg/accelc (or the domain package) behind typed options and a result, and the printing into a write function",
	},
}

// funcDecls are a file's functions and methods, from func to the closing
// brace (the doc comment not counted).
func funcDecls(fset *token.FileSet, f *ast.File) []span {
	var out []span
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) > 0 {
			name = "(" + typeName(fd.Recv.List[0].Type) + ")." + name
		}
		start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
		out = append(out, span{name: name, start: start, lines: end.Line - start.Line + 1})
	}
	return out
}

// wholeFile is the file itself, from its first line.
func wholeFile(fset *token.FileSet, f *ast.File) []span {
	tf := fset.File(f.Pos())
	return []span{{name: "the file", start: token.Position{Filename: tf.Name(), Line: 1}, lines: tf.LineCount()}}
}

func typeName(x ast.Expr) string {
	switch x := x.(type) {
	case *ast.StarExpr:
		return "*" + typeName(x.X)
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr:
		return typeName(x.X)
	case *ast.IndexListExpr:
		return typeName(x.X)
	}
	return fmt.Sprintf("%T", x)
}

// TestShape checks every rule over every non-test Go file it covers.
func TestShape(t *testing.T) {
	for _, r := range rules {
		t.Run(strings.ReplaceAll(r.name, " ", "_"), func(t *testing.T) {
			spans := 0
			for _, dir := range r.dirs {
				for _, file := range goFiles(t, filepath.Join(root, dir)) {
					fset := token.NewFileSet()
					f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
					if err != nil {
						t.Fatalf("%s: %v", file, err)
					}
					for _, s := range r.find(fset, f) {
						spans++
						if s.lines > r.max {
							rel, _ := filepath.Rel(root, s.start.Filename)
							t.Errorf("%s:%d: %s is %d lines, over the %d of the rule %q: %s",
								filepath.ToSlash(rel), s.start.Line, s.name, s.lines, r.max, r.name, r.why)
						}
					}
				}
			}
			if spans == 0 {
				t.Fatalf("rule %q measured nothing under %s: has the code moved?", r.name, strings.Join(r.dirs, ", "))
			}
		})
	}
}

// goFiles are the non-test .go files under dir, its subdirectories'
// included (testdata's not).
func goFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go"):
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestRuleCatches checks that the measure sees a function over the limit
// and names it at its file and line.
func TestRuleCatches(t *testing.T) {
	src := "package p\n\nfunc short() {}\n\ntype T struct{}\n\n// long is long.\nfunc (t *T) long() {\n" + strings.Repeat("\t_ = 1\n", 10) + "}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := funcDecls(fset, f)
	if len(got) != 2 {
		t.Fatalf("got %d functions, want 2: %+v", len(got), got)
	}
	if s := got[0]; s.name != "short" || s.lines != 1 || s.start.Line != 3 {
		t.Errorf("short: got %s at line %d, %d lines; want short at 3, 1 line", s.name, s.start.Line, s.lines)
	}
	if s := got[1]; s.name != "(*T).long" || s.lines != 12 || s.start.Line != 8 {
		t.Errorf("long: got %s at line %d, %d lines; want (*T).long at 8, 12 lines", s.name, s.start.Line, s.lines)
	}
}
