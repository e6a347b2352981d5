package compile

// Diagnostics: the severity, position and message of a problem in a
// cluster's configuration, and how a list of them prints as an error.

import (
	"path/filepath"
	"strconv"
	"strings"

	"cuelang.org/go/cue/token"
)

// Severity tells errors from warnings.
type Severity int

const (
	Error Severity = iota
	Warning
	// Note explains what a setting does; vet --explain prints notes.
	Note
)

// Diagnostic is one finding about a configuration.
type Diagnostic struct {
	Severity Severity
	// Path is what in the configuration the finding is about, and where
	// the user's files write it; zero for a finding about no one place.
	Path Path
	// Pos is "file:line:col", or a file, for a finding no configuration
	// path locates: an evaluation that overran its limits, or an object
	// render.Validate positions at its origin. It prints when Path has no
	// position.
	Pos string
	// Msg is what was found and what to do, after the path.
	Msg string
}

// String is the diagnostic as accelc prints it:
// [warning: ]file:line:col: path: message.
func (d Diagnostic) String() string {
	var b strings.Builder
	switch d.Severity {
	case Warning:
		b.WriteString("warning: ")
	case Note:
		b.WriteString("note: ")
	}
	pos := d.Path.Where()
	if pos == "" {
		pos = d.Pos
	}
	if pos != "" {
		b.WriteString(pos)
		b.WriteString(": ")
	}
	if path := d.Path.String(); path != "" {
		b.WriteString(path)
		b.WriteString(": ")
	}
	b.WriteString(d.Msg)
	return b.String()
}

// Errors is a list of diagnostics with at least one error. It is the error
// Load returns for a configuration that is wrong.
type Errors []Diagnostic

func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, d := range e {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// relPos formats a CUE position relative to cwd.
func relPos(p token.Pos, cwd string) string {
	if !p.IsValid() {
		return ""
	}
	pos := p.Position()
	name := pos.Filename
	if filepath.IsAbs(name) && cwd != "" {
		if r, err := filepath.Rel(cwd, name); err == nil {
			name = r
		}
	}
	name = filepath.ToSlash(name)
	return name + ":" + strconv.Itoa(pos.Line) + ":" + strconv.Itoa(pos.Column)
}
