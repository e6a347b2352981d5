package compile

// Paths into the cluster's configuration, and where each is written in
// the CUE files, for diagnostics that point at a line.

import (
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/token"
)

// Path is the place in a cluster's configuration a diagnostic is about,
// as CUE's own errors carry one (errors.Error's Path and Position): a CUE
// path, printed as accelc's messages print it
// (profiles.a100-large.acceleratorTypes[0]), and the position where the
// user's files write it. The zero Path is no place: it prints as "" and
// has no position.
type Path struct {
	src *source
	// sel is the path; at is where it is positioned: sel itself, or
	// another path's selectors (see At).
	sel, at []cue.Selector
	// pos is a position given rather than looked up: a CUE error's.
	pos token.Pos
	// cuePath is a CUE error's path, printed as CUE prints it
	// (profiles."Bad Profile".name); "" for one built from selectors.
	cuePath string
}

// Key is the path of field name under p.
func (p Path) Key(name string) Path { return p.child(cue.Str(name)) }

// Index is the path of element i of the list at p.
func (p Path) Index(i int) Path { return p.child(cue.Index(i)) }

func (p Path) child(s cue.Selector) Path {
	if p.cuePath != "" {
		// A CUE error's path has no selectors to look up: its children
		// keep its position.
		p.cuePath += "." + s.String()
		return p
	}
	sel := append(slices.Clip(p.sel), s)
	return Path{src: p.src, sel: sel, at: sel}
}

// At is p positioned where q is: for a finding about p that is best shown
// at a part of it (a team's quota, at the entry it is about) or at the
// whole it belongs to (a pool's nodes, at the pool).
func (p Path) At(q Path) Path {
	p.at, p.pos = q.at, q.pos
	return p
}

// String is the path as accelc's messages print it: keys unquoted,
// indexes in brackets; a CUE error's path as CUE prints it.
func (p Path) String() string {
	if p.cuePath != "" {
		return p.cuePath
	}
	var b strings.Builder
	for i, s := range p.sel {
		switch s.LabelType() {
		case cue.IndexLabel:
			b.WriteString("[" + s.String() + "]")
			continue
		case cue.StringLabel:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Unquoted())
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.String())
		}
	}
	return b.String()
}

// Position is where the user's files write the path, or the nearest
// enclosing field they write; for a path only the schema gives, the
// schema's position; token.NoPos for none.
func (p Path) Position() token.Pos {
	if p.pos.IsValid() || len(p.at) == 0 {
		return p.pos
	}
	return p.src.find(p.at)
}

// Where is Position as "file:line:col", relative to the working
// directory; "" for none.
func (p Path) Where() string {
	cwd := ""
	if p.src != nil {
		cwd = p.src.cwd
	}
	return relPos(p.Position(), cwd)
}

// source finds where a cluster's CUE files write a path. It looks up
// positions only when a diagnostic is printed.
type source struct {
	// cwd is what positions print relative to.
	cwd string
	// user is the user's package, for where they wrote a value; cfg is
	// it unified with the schema, for a value the schema gives. Both
	// are unset until the package builds.
	user, cfg cue.Value
	built     bool
	// pkg is the cluster package's name.
	pkg string
}

func (s *source) root() Path { return Path{src: s} }

// find is where the user's files write sel, or the nearest enclosing
// field they write (a field left out is shown where its parent is, never
// at the schema's default); failing that, where the schema gives it.
func (s *source) find(sel []cue.Selector) token.Pos {
	if s == nil || !s.built {
		return token.NoPos
	}
	if p := s.written(sel); p.IsValid() {
		return p
	}
	return s.cfg.LookupPath(cue.MakePath(sel...)).Pos()
}

// written is where the user's files write sel or the nearest enclosing
// field they write; token.NoPos when they write none of it.
func (s *source) written(sel []cue.Selector) token.Pos {
	if s == nil || !s.built {
		return token.NoPos
	}
	for i := len(sel); i > 0; i-- {
		if p := s.user.LookupPath(cue.MakePath(sel[:i]...)).Pos(); p.IsValid() {
			return p
		}
	}
	return token.NoPos
}
