package compile

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"cuelang.org/go/cue/ast"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"
)

// cueDiagnostics turns CUE errors into diagnostics positioned at the
// user's file (not the embedded schema) wherever CUE knows one, or where
// the error's path leads in the user's files when it knows none, with the
// cause CUE wraps (an import's or an @embed's).
func cueDiagnostics(err error, src *source, files []*ast.File) []Diagnostic {
	var out []Diagnostic
	seen := map[string]bool{}
	for _, e := range cueerrors.Errors(err) {
		var user, schema token.Pos
		var also []string
		for _, p := range cueerrors.Positions(e) {
			switch {
			case !filepath.IsAbs(p.Filename()):
				if !schema.IsValid() {
					schema = p
				}
			case !user.IsValid():
				user = p
			default:
				also = append(also, relPos(p, src.cwd))
			}
		}
		path := e.Path()
		if len(path) > 0 && path[0] == "#Config" {
			path = path[1:]
		}
		if !user.IsValid() {
			user = fieldPos(files, path)
		}
		at := Path{src: src, cuePath: strings.Join(path, "."), pos: user}
		msg := cueMsg(e)
		full := msg
		if at.cuePath != "" {
			full = at.cuePath + ": " + msg
		}
		if !user.IsValid() && strings.Contains(full, "embed") {
			at.pos = attrPos(files, "embed")
		}
		msg += hint(full)
		if len(also) > 0 {
			msg += " (also " + strings.Join(also, ", ") + ")"
		}
		if schema.IsValid() {
			msg += " (schema: " + relPos(schema, "") + ")"
			if !at.pos.IsValid() {
				at.pos = schema
			}
		}
		d := Diagnostic{Path: at, Msg: msg}
		if !seen[d.String()] {
			seen[d.String()] = true
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		out = append(out, Diagnostic{Msg: err.Error()})
	}
	// CUE heads the errors of each branch of a disjunction with a summary
	// line that has no position; the branch errors say it all.
	kept := out[:0]
	for _, d := range out {
		if !d.Path.Position().IsValid() && strings.Contains(d.Msg, "errors in empty disjunction") && len(out) > 1 {
			continue
		}
		kept = append(kept, d)
	}
	return kept
}

// cueMsg is an error's message followed by the causes it wraps: CUE's
// Msg alone says "import failed" or "@embed" and drops why.
func cueMsg(e cueerrors.Error) string {
	format, args := e.Msg()
	msg := fmt.Sprintf(format, args...)
	for u := errors.Unwrap(e); u != nil; u = errors.Unwrap(u) {
		var m string
		if ce, ok := u.(cueerrors.Error); ok {
			format, args := ce.Msg()
			m = fmt.Sprintf(format, args...)
		} else {
			m = u.Error()
		}
		switch {
		case msg == "":
			msg = m
		case m != "" && !strings.Contains(msg, m):
			msg += ": " + m
		}
	}
	return msg
}

// fieldPos finds where the user's files declare path, or the longest
// prefix of it they declare (a profile's name comes from its key, so an
// error in profiles.x.name belongs at profiles.x). It looks through
// struct literals and the operands of &.
func fieldPos(files []*ast.File, path []string) token.Pos {
	var best token.Pos
	bestDepth := 0
	var walk func(decls []ast.Decl, depth int)
	walk = func(decls []ast.Decl, depth int) {
		if depth >= len(path) {
			return
		}
		for _, d := range decls {
			f, ok := d.(*ast.Field)
			if !ok {
				if em, ok := d.(*ast.EmbedDecl); ok {
					walk(declsOf(em.Expr), depth)
				}
				continue
			}
			name, _, err := ast.LabelName(f.Label)
			if err != nil || name != unquote(path[depth]) {
				continue
			}
			if depth+1 > bestDepth {
				best, bestDepth = f.Label.Pos(), depth+1
			}
			walk(declsOf(f.Value), depth+1)
		}
	}
	for _, f := range files {
		walk(f.Decls, 0)
	}
	return best
}

func declsOf(x ast.Expr) []ast.Decl {
	switch x := x.(type) {
	case *ast.StructLit:
		return x.Elts
	case *ast.BinaryExpr:
		if x.Op == token.AND {
			return append(declsOf(x.X), declsOf(x.Y)...)
		}
	case *ast.ParenExpr:
		return declsOf(x.X)
	}
	return nil
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

// attrPos is the position of the first @name(...) attribute in files
// (also @extern(name)), for errors CUE reports without one.
func attrPos(files []*ast.File, name string) token.Pos {
	var pos token.Pos
	for _, f := range files {
		ast.Walk(f, func(n ast.Node) bool {
			if a, ok := n.(*ast.Attribute); ok && !pos.IsValid() {
				k, body := a.Split()
				if k == name || (k == "extern" && strings.TrimSpace(body) == name) {
					pos = a.Pos()
				}
			}
			return !pos.IsValid()
		}, nil)
	}
	return pos
}

// hint says what to do about a CUE error, by its kind.
func hint(msg string) string {
	switch {
	case strings.Contains(msg, "field not allowed"):
		return ": not in accelc's schema; check the spelling"
	case strings.Contains(msg, "incomplete value"), strings.Contains(msg, "non-concrete"):
		return ": give it a concrete value"
	case strings.Contains(msg, "mismatched types"):
		return ": write a value of the type the schema expects"
	case strings.Contains(msg, "conflicting values"):
		return ": it is set to two different values; keep one, or mark the shared one a default (*4 | int)"
	case strings.Contains(msg, ".name: invalid value") && strings.Contains(msg, "[-a-z0-9]"):
		return ": a name (a profile's or team's is its key) must be a DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit"
	case strings.Contains(msg, "out of bound"), strings.Contains(msg, "invalid value"):
		return ": outside what the schema allows"
	case strings.Contains(msg, "structural cycle"):
		return ": the value contains itself; a field may not refer to a struct that encloses it: break the cycle"
	case strings.Contains(msg, "import failed") && strings.Contains(msg, "cue.mod"):
		return ": imports need a CUE module: add cue.mod/module.cue in the cluster folder or a parent (cue mod init, as examples/clusters does), or inline the imported values"
	case strings.Contains(msg, "import failed"):
		return ": check the import path against the module's packages (cue.mod/module.cue and its folders)"
	case strings.Contains(msg, "embed") && strings.Contains(msg, "not in a module"):
		return ": @embed needs a CUE module: add cue.mod/module.cue in the cluster folder or a parent (cue mod init)"
	case strings.Contains(msg, "@embed"):
		return ": @embed reads files relative to the .cue file's folder, inside the module: add the file or fix its path"
	}
	return ""
}
