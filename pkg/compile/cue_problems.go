package compile

// Classifying a CUE error by what went wrong (a misspelt field, a value
// not among the choices, an import) so that its diagnostic says what to
// do.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"
	"k8s.io/apimachinery/pkg/util/validation"
)

// cueProblem is the kind of mistake a CUE error reports, which says what
// to do about it. It is found from where the error is (its path, its
// positions against the user's files) and from the values there (the
// user's, the schema's and their unification: whether each exists, is
// concrete, of what kind), never from the error's wording, which CUE
// may change from one release to the next.
type cueProblem int

const (
	problemOther cueProblem = iota
	// problemNotAllowed: a field the schema has no place for.
	problemNotAllowed
	// problemIncomplete: a value left a type or constraint.
	problemIncomplete
	// problemKind: a value of another kind than the schema's.
	problemKind
	// problemConflict: two values the user's files give one field.
	problemConflict
	// problemName: a profile's or team's key that is not a DNS label.
	problemName
	// problemBound: a value of the schema's kind that its constraints
	// refuse.
	problemBound
	// problemOneOf: a value the schema allows only one of a few of.
	problemOneOf
	// problemCycle: a value that refers to a struct enclosing it.
	problemCycle
	// problemImportNoModule, problemImport: an import outside a CUE
	// module, or of a package the module does not have.
	problemImportNoModule
	problemImport
	// problemEmbedNoModule, problemEmbed: @embed outside a CUE module, or
	// of a file it cannot read.
	problemEmbedNoModule
	problemEmbed
)

// problemHints say what to do about each kind of problem, after CUE's
// message.
var problemHints = map[cueProblem]string{
	problemNotAllowed:     "not in accelc's schema; check the spelling",
	problemIncomplete:     "give it a concrete value",
	problemKind:           "write a value of the type the schema expects",
	problemConflict:       "it is set to two different values; keep one, or mark the shared one a default (*4 | int)",
	problemName:           "a name (a profile's or team's is its key) must be a DNS-1123 label: lower-case letters, digits and '-', starting and ending with a letter or digit",
	problemBound:          "outside what the schema allows",
	problemOneOf:          "write one of them",
	problemCycle:          "the value contains itself; a field may not refer to a struct that encloses it: break the cycle",
	problemImportNoModule: "imports need a CUE module: add cue.mod/module.cue in the cluster folder or a parent (cue mod init, as examples/clusters does), or inline the imported values",
	problemImport:         "check the import path against the module's packages (cue.mod/module.cue and its folders)",
	problemEmbedNoModule:  "@embed needs a CUE module: add cue.mod/module.cue in the cluster folder or a parent (cue mod init)",
	problemEmbed:          "@embed reads files relative to the .cue file's folder, inside the module: add the file or fix its path",
}

// hint is what to do about a problem, as ": ..." to follow CUE's
// message; "" for a problem accelc has no advice on.
func (p cueProblem) hint() string {
	if h, ok := problemHints[p]; ok {
		return ": " + h
	}
	return ""
}

// cueScope is what a CUE error is classified against: the package's
// files and whether it is in a module, and once it builds, the values.
type cueScope struct {
	files  []*ast.File
	module bool
	// user is the user's package evaluated alone, schema accelc's
	// #Config, cfg the two unified; each zero until built.
	user, schema, cfg cue.Value
}

// classify tells what kind of problem e is. path is e's path with the
// schema's #Config dropped.
func (s *cueScope) classify(e cueerrors.Error, path []string) cueProblem {
	if s.inImport(e) {
		if !s.module {
			return problemImportNoModule
		}
		return problemImport
	}
	if len(path) == 0 {
		if s.embedError(e) {
			if !s.module {
				return problemEmbedNoModule
			}
			return problemEmbed
		}
		return problemOther
	}
	return s.classifyValue(path)
}

// classifyValue tells the problem at path from the values there: the
// user's alone (a conflict or cycle of their own), the schema's (a field
// it does not have, another kind) and the unified value (incomplete, out
// of bounds).
func (s *cueScope) classifyValue(path []string) cueProblem {
	sel, ok := selectors(path)
	if !ok || !s.user.Exists() {
		return problemOther
	}
	at := cue.MakePath(sel...)
	user := s.user.LookupPath(at)
	if user.Exists() && user.Err() != nil {
		if refersToEnclosing(user, sel) {
			return problemCycle
		}
		return problemConflict
	}
	if len(path) == 3 && (path[0] == "profiles" || path[0] == "teams") && path[2] == "name" {
		if errs := validation.IsDNS1123Label(unquote(path[1])); len(errs) > 0 {
			return problemName
		}
	}
	if !s.schema.Exists() {
		return problemOther
	}
	schema, known := schemaAt(s.schema, sel)
	switch {
	case !known:
		return problemNotAllowed
	case !schema.Exists():
	case user.Exists() && user.IncompleteKind()&schema.IncompleteKind() == cue.BottomKind:
		return problemKind
	case user.IsConcrete() && len(choices(schema)) > 0:
		return problemOneOf
	}
	switch v := s.cfg.LookupPath(at); {
	case !v.Exists():
		return problemOther
	case v.Err() != nil:
		return problemBound
	case !v.IsConcrete():
		return problemIncomplete
	}
	return problemOther
}

// choices are the values a schema's disjunction of concrete values
// allows ("dryrun" | "warn" | *"deny"), as CUE writes them; none for any
// other schema.
func choices(schema cue.Value) []string {
	op, args := schema.Expr()
	if op != cue.OrOp {
		return nil
	}
	var out []string
	for _, a := range args {
		if !a.IsConcrete() {
			return nil
		}
		out = append(out, fmt.Sprint(a))
	}
	return out
}

// notOneOf is the message for a value at path that is none of the
// schema's choices.
func (s *cueScope) notOneOf(path []string) string {
	sel, _ := selectors(path)
	schema, _ := schemaAt(s.schema, sel)
	user := s.user.LookupPath(cue.MakePath(sel...))
	return fmt.Sprintf("%v is not one of %s", user, strings.Join(choices(schema), ", "))
}

// inImport reports whether e is positioned at one of the files' imports.
func (s *cueScope) inImport(e cueerrors.Error) bool {
	for _, p := range cueerrors.Positions(e) {
		for _, f := range s.files {
			if f.Filename != p.Filename() {
				continue
			}
			for spec := range f.ImportSpecs() {
				if spec.Pos().Line() <= p.Line() && p.Line() <= spec.End().Line() {
					return true
				}
			}
		}
	}
	return false
}

// embedError reports whether e, an error without a path, is @embed's:
// positioned at an @embed attribute, or at nothing in a package that has
// one.
func (s *cueScope) embedError(e cueerrors.Error) bool {
	embed := attrPos(s.files, "embed")
	if !embed.IsValid() {
		return false
	}
	positions := cueerrors.Positions(e)
	return len(positions) == 0 || slices.ContainsFunc(positions, func(p token.Pos) bool { return attrAt(s.files, "embed", p) })
}

// attrAt reports whether an @name attribute (or @extern(name)) is at p.
func attrAt(files []*ast.File, name string, p token.Pos) bool {
	found := false
	for _, f := range files {
		if f.Filename != p.Filename() {
			continue
		}
		ast.Walk(f, func(n ast.Node) bool {
			if a, ok := n.(*ast.Attribute); ok && a.Pos().Line() == p.Line() && a.Pos().Column() == p.Column() {
				k, body := a.Split()
				found = found || k == name || (k == "extern" && strings.TrimSpace(body) == name)
			}
			return !found
		}, nil)
	}
	return found
}

// refersToEnclosing reports whether v is a reference to a value that
// encloses sel, the path v is at: a structural cycle.
func refersToEnclosing(v cue.Value, sel []cue.Selector) bool {
	root, ref := v.ReferencePath()
	if !root.Exists() {
		return false
	}
	refSel := ref.Selectors()
	if len(refSel) >= len(sel) {
		return false
	}
	for i, s := range refSel {
		if s.String() != sel[i].String() {
			return false
		}
	}
	return true
}

// schemaAt is the schema's value at sel, through its optional fields,
// pattern constraints ([string]: #Profile) and list element types; known
// is false where the schema has no place for the path. A path into an
// open struct is known, with no value (it may be anything).
func schemaAt(schema cue.Value, sel []cue.Selector) (cue.Value, bool) {
	v := schema
	for _, s := range sel {
		next := v.LookupPath(cue.MakePath(s))
		switch {
		case next.Exists():
		case s.Type() == cue.IndexLabel:
			next = v.LookupPath(cue.MakePath(cue.AnyIndex))
		case s.Type() == cue.StringLabel:
			// An optional (max?:) or required (name!:) field, else a
			// pattern's ([string]: #Profile).
			if next = v.LookupPath(cue.MakePath(s.Optional())); !next.Exists() {
				if next = v.LookupPath(cue.MakePath(s.Required())); !next.Exists() {
					next = v.LookupPath(cue.MakePath(cue.AnyString))
				}
			}
		}
		if !next.Exists() {
			// A scalar, or an open struct, allows the field as any
			// value: known, but no schema value to compare with.
			open := v.IncompleteKind()&(cue.StructKind|cue.ListKind) == cue.BottomKind || v.Allows(s)
			return cue.Value{}, open
		}
		v = next
	}
	return v, true
}

// selectors turns a CUE error's path (its elements as CUE prints them:
// name, "quoted name", #Def, 0) into selectors.
func selectors(path []string) ([]cue.Selector, bool) {
	out := make([]cue.Selector, 0, len(path))
	for _, p := range path {
		switch {
		case p == "":
			return nil, false
		case p[0] == '"':
			s, err := strconv.Unquote(p)
			if err != nil {
				return nil, false
			}
			out = append(out, cue.Str(s))
		case p[0] == '#':
			out = append(out, cue.Def(p))
		case p[0] >= '0' && p[0] <= '9':
			i, err := strconv.Atoi(p)
			if err != nil {
				return nil, false
			}
			out = append(out, cue.Index(i))
		default:
			out = append(out, cue.Str(p))
		}
	}
	return out, true
}
