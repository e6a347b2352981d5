package compile

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
)

// Diagnostic is one finding about a configuration.
type Diagnostic struct {
	Severity Severity
	// Pos is "file:line:col" relative to the working directory, or empty.
	Pos string
	Msg string
}

func (d Diagnostic) String() string {
	var b strings.Builder
	if d.Severity == Warning {
		b.WriteString("warning: ")
	}
	if d.Pos != "" {
		b.WriteString(d.Pos)
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
