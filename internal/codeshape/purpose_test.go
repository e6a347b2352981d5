package codeshape

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// TestFilesStateTheirPurpose: every non-test file in pkg/ opens with a
// comment that says what it is for: the package's doc comment, or a
// comment before its first declaration past the imports. With one idea a
// file (the 700-line rule), that comment is where a reader learns which.
func TestFilesStateTheirPurpose(t *testing.T) {
	files := goFiles(t, filepath.Join(root, "pkg"))
	if len(files) == 0 {
		t.Fatal("no file under pkg: has the code moved?")
	}
	for _, file := range files {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if !statesPurpose(f) {
			rel, _ := filepath.Rel(root, file)
			t.Errorf("%s: no comment before its first declaration says what the file is for: open it with one (after the package clause, or as the package's doc)", filepath.ToSlash(rel))
		}
	}
}

// statesPurpose reports whether a file has a comment before its first
// declaration other than its imports (the package doc comment counts).
func statesPurpose(f *ast.File) bool {
	if f.Doc != nil {
		return true
	}
	first := f.End()
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			continue
		}
		first = d.Pos()
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc != nil {
			first = fd.Doc.Pos()
		} else if g, ok := d.(*ast.GenDecl); ok && g.Doc != nil {
			first = g.Doc.Pos()
		}
		break
	}
	for _, c := range f.Comments {
		if c.Pos() < first {
			return true
		}
	}
	return false
}

// TestPurposeRuleCatches: a file whose only comments document its
// declarations states no purpose; one with a comment after its package
// clause does.
func TestPurposeRuleCatches(t *testing.T) {
	for src, want := range map[string]bool{
		"package p\n\nimport \"fmt\"\n\n// F prints.\nfunc F() { fmt.Println() }\n":                                false,
		"package p\n\n// Printing: what p prints.\n\nimport \"fmt\"\n\n// F prints.\nfunc F() { fmt.Println() }\n": true,
		"// Package p prints.\npackage p\n\nfunc F() {}\n":                                                         true,
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if got := statesPurpose(f); got != want {
			t.Errorf("statesPurpose(%q) = %v, want %v", src, got, want)
		}
	}
}
