package codeshape

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// cobraRunEs are the RunE function literals of a file's cobra commands,
// each named by its command's Use (its first word), from func to the
// closing brace.
func cobraRunEs(fset *token.FileSet, f *ast.File) []span {
	var out []span
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		use := "a command"
		var runE *ast.FuncLit
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			key, ok := kv.Key.(*ast.Ident)
			if !ok {
				continue
			}
			switch key.Name {
			case "Use":
				if s, ok := kv.Value.(*ast.BasicLit); ok && s.Kind == token.STRING {
					if v, err := strconv.Unquote(s.Value); err == nil && v != "" {
						use = strings.Fields(v)[0]
					}
				}
			case "RunE":
				runE, _ = kv.Value.(*ast.FuncLit)
			}
		}
		if runE != nil {
			start, end := fset.Position(runE.Pos()), fset.Position(runE.End())
			out = append(out, span{name: "the RunE of " + use, start: start, lines: end.Line - start.Line + 1})
		}
		return true
	})
	return out
}

// TestRunERuleCatches checks that the measure finds a command's RunE,
// names it by its command, and counts its lines.
func TestRunERuleCatches(t *testing.T) {
	src := "package p\n\nvar c = &cobra.Command{\n\tUse: \"push OUT_DIR\",\n\tRunE: func(cmd *cobra.Command, args []string) error {\n" + strings.Repeat("\t\t_ = 1\n", 31) + "\t\treturn nil\n\t},\n}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := cobraRunEs(fset, f)
	if len(got) != 1 {
		t.Fatalf("got %d RunEs, want 1: %+v", len(got), got)
	}
	if got[0].name != "the RunE of push" || got[0].start.Line != 5 || got[0].lines != 34 {
		t.Errorf("got %s at line %d, %d lines; want the RunE of push at line 5, 34 lines", got[0].name, got[0].start.Line, got[0].lines)
	}
}
