package compile

// Syntax errors CUE reports badly: an unclosed brace, bracket or string,
// found by scanning the file and reported where it opened.

import (
	"fmt"
	"os"
	"strings"

	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/scanner"
	"cuelang.org/go/cue/token"
)

// closers are the tokens that close each opening bracket, and what the
// brackets hold.
var (
	closers  = map[token.Token]string{token.LBRACE: "}", token.LBRACK: "]", token.LPAREN: ")"}
	enclosed = map[token.Token]string{token.LBRACE: "struct", token.LBRACK: "list", token.LPAREN: "expression"}
)

// opener is an opening bracket the scan has not seen closed.
type opener struct {
	tok token.Token
	pos token.Pos
	// interpolation marks the ( of a string interpolation, \(x): its )
	// resumes the string.
	interpolation bool
}

// unclosedDiagnostics are the diagnostics for parse errors at the end of
// a file that leaves a bracket open (a { without its }): CUE reports the
// end of the file, which says nothing of where the block began, so each
// names where its innermost open bracket opened. ok is false when err has
// no such error; the caller reports it as CUE does.
func unclosedDiagnostics(err error, src *source) (out []Diagnostic, ok bool) {
	for _, e := range cueerrors.Errors(err) {
		pos := e.Position()
		if !pos.IsValid() || !strings.HasSuffix(pos.Filename(), ".cue") {
			continue
		}
		open, end, scanned := openAtEnd(pos.Filename())
		if !scanned || open == nil || pos.Offset() < end {
			continue
		}
		at := Path{src: src, pos: pos}
		out = append(out, Diagnostic{Path: at, Msg: fmt.Sprintf(
			"%s: the %s at %s is never closed: add its %s where that %s ends (check the brackets inside it too), or delete the %s",
			cueMsg(e), open.tok, relPos(open.pos, src.cwd), closers[open.tok], enclosed[open.tok], open.tok)})
	}
	return out, len(out) > 0
}

// openAtEnd scans file and returns the innermost bracket still open at
// its end, and the offset where its last token ends; scanned is false
// for a file it cannot read.
func openAtEnd(file string) (open *opener, end int, scanned bool) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, 0, false
	}
	f := token.NewFile(file, -1, len(src))
	var s scanner.Scanner
	s.Init(f, src, func(token.Pos, string, []any) {}, scanner.DontInsertCommas)
	var stack []opener
	interpolating := false // the next ( opens an interpolation
	for {
		pos, tok, lit := s.Scan()
		switch tok {
		case token.EOF:
			if len(stack) == 0 {
				return nil, end, true
			}
			return &stack[len(stack)-1], end, true
		case token.INTERPOLATION:
			interpolating = strings.HasSuffix(lit, "(")
		case token.LBRACE, token.LBRACK, token.LPAREN:
			stack = append(stack, opener{tok: tok, pos: pos, interpolation: tok == token.LPAREN && interpolating})
			interpolating = false
		case token.RBRACE, token.RBRACK, token.RPAREN:
			if len(stack) == 0 || closers[stack[len(stack)-1].tok] != tok.String() {
				// Brackets out of order: not a bracket left open at
				// the end; CUE's own message says where.
				return nil, end, false
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if top.interpolation {
				interpolating = strings.HasSuffix(s.ResumeInterpolation(), "(")
			}
		}
		end = pos.Offset() + len(lit)
		if lit == "" {
			end = pos.Offset() + len(tok.String())
		}
	}
}
