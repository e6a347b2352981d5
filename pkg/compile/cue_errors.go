package compile

// Turning CUE's errors into diagnostics: each at its file, line and
// field, with a message a person can act on.

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
// cause CUE wraps (an import's or an @embed's) and, from the kind of
// problem scope finds it is, what to do.
func cueDiagnostics(err error, src *source, scope *cueScope) []Diagnostic {
	type found struct {
		d          Diagnostic
		positioned bool
	}
	var all []found
	seen := map[string]bool{}
	located := map[string]bool{} // paths of errors CUE positions
	for _, e := range cueerrors.Errors(err) {
		d, positioned := cueDiagnostic(e, src, scope)
		if positioned {
			located[d.Path.cuePath] = true
		}
		if !seen[d.String()] {
			seen[d.String()] = true
			all = append(all, found{d, positioned})
		}
	}
	if len(all) == 0 {
		return []Diagnostic{{Msg: err.Error()}}
	}
	// CUE heads the errors of each branch of a disjunction with a summary
	// at the field's path that has no position; the branch errors, at the
	// same path, say it all.
	var out []Diagnostic
	for _, f := range all {
		if !f.positioned && f.d.Path.cuePath != "" && located[f.d.Path.cuePath] {
			continue
		}
		out = append(out, f.d)
	}
	return out
}

// cueDiagnostic is the diagnostic of one CUE error; positioned is false
// when CUE gave it no position (it is placed where the user's files write
// its path, or at the schema).
func cueDiagnostic(e cueerrors.Error, src *source, scope *cueScope) (d Diagnostic, positioned bool) {
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
	positioned = user.IsValid() || schema.IsValid()
	path := e.Path()
	if len(path) > 0 && path[0] == "#Config" {
		path = path[1:]
	}
	at := Path{src: src, cuePath: strings.Join(path, "."), pos: user}
	if !user.IsValid() {
		at.pos = fieldPos(scope.files, path)
	}
	problem := scope.classify(e, path)
	if !at.pos.IsValid() && (problem == problemEmbed || problem == problemEmbedNoModule) {
		at.pos = attrPos(scope.files, "embed")
	}
	msg := cueMsg(e)
	if problem == problemOneOf {
		msg, schema = scope.notOneOf(path), token.NoPos
	}
	msg += problem.hint()
	if len(also) > 0 {
		msg += " (also " + strings.Join(also, ", ") + ")"
	}
	if schema.IsValid() {
		msg += " (schema: " + relPos(schema, "") + ")"
		if !at.pos.IsValid() {
			at.pos = schema
		}
	}
	return Diagnostic{Path: at, Msg: msg}, positioned
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
