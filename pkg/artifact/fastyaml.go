package artifact

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxFastDepth is the deepest nesting fastYAML takes on; deeper YAML goes
// the slow way, where yaml.v2's and encoding/json's own limits say what
// happens.
const maxFastDepth = 1000

// fastYAML reads YAML in the style go.yaml.in/yaml/v2's emitter writes it
// (what render writes through sigs.k8s.io/yaml): block mappings and
// sequences, plain, quoted and literal scalars, {} and []. It returns
// what sigs.k8s.io/yaml's YAMLToJSON decodes it to (maps with string keys,
// lists, strings, int64s, bools and nils), and false for anything it does
// not read exactly as yaml.v2 does: other styles, anchors, tags, several
// documents, a plain scalar that is not a string, a decimal integer,
// true, false or null (yaml.v2 reads yes, on, 1.5 or 2026-01-01 its own
// way), a key twice, characters YAML forbids or folds. normalize then
// reads the file with yaml.v2. TestNormalizeFast and FuzzNormalize hold
// the two to the same result.
func fastYAML(data []byte) (v any, ok bool) {
	// A slip of this reader must cost the slow way, never the process.
	defer func() {
		if recover() != nil {
			v, ok = nil, false
		}
	}()
	// A file ends with a line break, which a literal scalar's last line
	// keeps.
	if len(data) == 0 || data[len(data)-1] != '\n' || !fastChars(data) {
		return nil, false
	}
	p := &yamlParser{lines: strings.Split(string(data[:len(data)-1]), "\n")}
	p.skipBlank()
	if p.i >= len(p.lines) {
		return nil, false
	}
	v, ok = p.node(p.i, indentOf(p.lines[p.i]), -1, 0)
	if !ok {
		return nil, false
	}
	p.skipBlank()
	if p.i < len(p.lines) {
		return nil, false
	}
	return v, true
}

// fastChars: printable ASCII and newlines, or UTF-8 of characters YAML
// allows and does not read as a line break; no tabs, carriage returns,
// byte order marks or document markers.
func fastChars(data []byte) bool {
	for i := 0; i < len(data); {
		c := data[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError || r < 0xa0 || (r >= 0xd800 && r <= 0xdfff) || r == 0xfeff || r == 0xfffe || r == 0xffff ||
			r == 0x2028 || r == 0x2029 {
			return false
		}
		i += n
	}
	return true
}

type yamlParser struct {
	lines []string
	i     int // the next line to read
}

func indentOf(line string) int {
	return len(line) - len(strings.TrimLeft(line, " "))
}

// blank: empty, spaces or a comment line.
func blank(line string) bool {
	t := strings.TrimLeft(line, " ")
	return t == "" || t[0] == '#'
}

func (p *yamlParser) skipBlank() {
	for p.i < len(p.lines) && blank(p.lines[p.i]) {
		p.i++
	}
}

// node reads the node that starts on line at column col (the line's
// indentation, or after "- " on it); parent is the indentation of the
// collection that holds it (-1 at the top).
func (p *yamlParser) node(line, col, parent, depth int) (any, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	rest := p.lines[line][col:]
	if strings.HasPrefix(rest, "---") || strings.HasPrefix(rest, "...") {
		return nil, false
	}
	if rest == "-" || strings.HasPrefix(rest, "- ") {
		return p.sequence(line, col, depth)
	}
	if _, _, ok := splitKey(rest); ok {
		return p.mapping(line, col, depth)
	}
	// A scalar alone: not an object, and not what rendered files hold.
	return nil, false
}

// sequence reads "- " items at column col, the first on line.
func (p *yamlParser) sequence(line, col, depth int) (any, bool) {
	out := []any{}
	p.i = line
	for {
		l := p.lines[p.i]
		rest := l[col:]
		var v any
		var ok bool
		switch {
		case rest == "-":
			v, ok = p.nested(col, true, depth)
		case strings.TrimRight(rest, " ") == "-":
			v, ok = p.nested(col, true, depth)
		case strings.HasPrefix(rest, "- "):
			item := col + 2
			for item < len(l) && l[item] == ' ' {
				item++
			}
			v, ok = p.inline(p.i, item, col, true, depth)
		default:
			return nil, false
		}
		if !ok {
			return nil, false
		}
		out = append(out, v)
		p.skipBlank()
		if p.i >= len(p.lines) {
			return out, true
		}
		next := p.lines[p.i]
		if ind := indentOf(next); ind < col {
			return out, true
		} else if ind > col {
			return nil, false
		}
		if r := next[col:]; r != "-" && !strings.HasPrefix(r, "- ") {
			return out, true // the key after an indentless sequence
		}
	}
}

// mapping reads "key: value" pairs at column col, the first on line.
func (p *yamlParser) mapping(line, col, depth int) (any, bool) {
	out := map[string]any{}
	p.i = line
	for {
		l := p.lines[p.i]
		key, value, ok := splitKey(l[col:])
		if !ok {
			return nil, false
		}
		k, ok := scalarKey(key)
		if !ok {
			return nil, false
		}
		if _, dup := out[k]; dup {
			return nil, false
		}
		var v any
		if value == "" {
			v, ok = p.nested(col, false, depth)
		} else {
			start := len(l) - len(value)
			v, ok = p.inline(p.i, start, col, false, depth)
		}
		if !ok {
			return nil, false
		}
		out[k] = v
		p.skipBlank()
		if p.i >= len(p.lines) {
			return out, true
		}
		next := p.lines[p.i]
		ind := indentOf(next)
		if ind < col {
			return out, true
		}
		if ind > col {
			return nil, false
		}
	}
}

// nested reads the value of "key:" or "-" with nothing after it on its
// line (p.i): a block below, more indented (or, for a key, a sequence at
// the key's column), or null.
func (p *yamlParser) nested(col int, item bool, depth int) (any, bool) {
	p.i++
	p.skipBlank()
	if p.i >= len(p.lines) {
		return nil, true
	}
	next := p.lines[p.i]
	ind := indentOf(next)
	r := next[ind:]
	switch {
	case ind > col:
		return p.node(p.i, ind, col, depth+1)
	case ind == col && !item && (r == "-" || strings.HasPrefix(r, "- ")):
		return p.sequence(p.i, col, depth+1)
	}
	return nil, true
}

// inline reads the value that starts on line at column start: a node of
// its own after "- " (item: a mapping or a sequence), or a scalar, which
// may go on over the lines below indented more than parent.
func (p *yamlParser) inline(line, start, parent int, item bool, depth int) (any, bool) {
	rest := p.lines[line][start:]
	if rest == "" {
		return nil, false
	}
	switch rest[0] {
	case '"':
		return p.doubleQuoted(line, start, parent)
	case '\'':
		return p.singleQuoted(line, start, parent)
	case '|':
		return p.literal(line, start, parent)
	case '{', '[':
		p.i = line + 1
		switch strings.TrimRight(rest, " ") {
		case "{}":
			return map[string]any{}, true
		case "[]":
			return []any{}, true
		}
		return nil, false
	case '-':
		if rest == "-" || strings.HasPrefix(rest, "- ") {
			if !item {
				return nil, false
			}
			return p.sequence(line, start, depth+1)
		}
	}
	if _, _, ok := splitKey(rest); ok {
		if !item {
			return nil, false
		}
		return p.mapping(line, start, depth+1)
	}
	return p.plain(line, start, parent)
}

// splitKey splits "key: value" or "key:" where the key is plain or quoted
// on one line.
func splitKey(s string) (key, value string, ok bool) {
	end := -1
	switch {
	case s == "":
		return "", "", false
	case s[0] == '"':
		end = closingDouble(s)
	case s[0] == '\'':
		end = closingSingle(s)
	default:
		for i := 0; i < len(s); i++ {
			if s[i] == ':' && (i+1 == len(s) || s[i+1] == ' ') {
				end = i
				break
			}
		}
		if end <= 0 {
			return "", "", false
		}
	}
	if end < 0 || end >= len(s) || s[end] != ':' {
		return "", "", false
	}
	if end+1 == len(s) {
		return s[:end], "", true
	}
	if s[end+1] != ' ' {
		return "", "", false
	}
	return s[:end], strings.TrimLeft(s[end+1:], " "), true
}

// closingDouble is the index after the closing quote of the
// double-quoted scalar s starts with, -1 where it does not end on s.
func closingDouble(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

func closingSingle(s string) int {
	for i := 1; i < len(s); i++ {
		if s[i] == '\'' {
			if i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			return i + 1
		}
	}
	return -1
}

// scalarKey reads a key: quoted, or a plain scalar that is a string.
func scalarKey(key string) (string, bool) {
	switch key[0] {
	case '"':
		return unescapeDouble(key[1 : len(key)-1])
	case '\'':
		return strings.ReplaceAll(key[1:len(key)-1], "''", "'"), true
	}
	key = strings.TrimRight(key, " ")
	if !plainSafe(key) {
		return "", false
	}
	v, ok := resolvePlain(key)
	s, isString := v.(string)
	return s, ok && isString
}

// resolvePlain is a plain scalar's value as yaml.v2 reads it, where it is
// sure: false for anything but a string, a decimal integer (int64),
// true, false and null.
func resolvePlain(s string) (any, bool) {
	if s == "" {
		return nil, false
	}
	switch s {
	case "true":
		return true, true
	case "false":
		return false, true
	case "null", "~":
		return nil, true
	}
	c := s[0]
	switch {
	case stringStart(c):
		switch strings.ToLower(s) {
		case "y", "yes", "n", "no", "on", "off", "true", "false", "null":
			return nil, false // YAML 1.1's booleans and nulls in other cases
		}
		return s, true
	case '0' <= c && c <= '9', c == '-', c == '+', c == '.':
		if numberLikeString(s) {
			return s, true
		}
		digits := s
		if c == '-' {
			digits = s[1:]
		}
		if digits == "" || len(digits) > 18 || (digits[0] == '0' && (len(digits) > 1 || c == '-')) {
			return nil, false
		}
		for i := 0; i < len(digits); i++ {
			if digits[i] < '0' || digits[i] > '9' {
				return nil, false
			}
		}
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	return nil, false
}

// numberLikeString: a plain scalar that starts as a number might (a digit,
// a sign or a dot) and that yaml.v2 reads as a string: 8Gi, 1m, 738c,
// .spec.team. yaml.v2 tries a timestamp, an integer of any base, a float
// and a binary integer (YAML 1.1): where any might match, false.
func numberLikeString(s string) bool {
	switch strings.ToLower(s) {
	case ".nan", ".inf", "+.inf", "-.inf":
		return false
	}
	if s[0] == '.' {
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	}
	digits := 0
	for digits < len(s) && '0' <= s[digits] && s[digits] <= '9' {
		digits++
	}
	if digits == 4 && len(s) > 4 && s[4] == '-' {
		return false // a date, maybe
	}
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return false
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return false
	}
	// yaml.v2 takes a float where its pattern matches and ParseFloat
	// reads it: where ParseFloat fails, it is none.
	if _, err := strconv.ParseFloat(plain, 64); err == nil {
		return false
	}
	// YAML 1.1's binary integers, as yaml.v2 reads them.
	if b, ok := strings.CutPrefix(plain, "0b"); ok {
		_, errInt := strconv.ParseInt(b, 2, 64)
		_, errUint := strconv.ParseUint(b, 2, 64)
		return errInt != nil && errUint != nil
	}
	if b, ok := strings.CutPrefix(plain, "-0b"); ok {
		_, err := strconv.ParseInt("-"+b, 2, 64)
		return err != nil
	}
	return true
}

// stringStart: a plain scalar that starts with c is a string, but for
// the words yaml.v2 reads as booleans and null.
func stringStart(c byte) bool {
	if c <= ' ' || c == 0x7f || c == '<' {
		return false // '<<' merges
	}
	// Numbers' first characters, ~ (null), YAML's indicators.
	return !strings.ContainsRune("+-0123456789.~?:,[]{}#&*!|>'\"%@`", rune(c))
}

// plain reads a plain scalar from line at column start, folding the
// lines below it that are indented more than parent.
func (p *yamlParser) plain(line, start, parent int) (any, bool) {
	first := p.lines[line][start:]
	if !plainSafe(first) {
		return nil, false
	}
	text := strings.TrimRight(first, " ")
	p.i = line + 1
	multi := false
	var b strings.Builder
	b.WriteString(text)
	breaks := 0
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		t := strings.TrimLeft(l, " ")
		if t == "" {
			breaks++
			p.i++
			continue
		}
		if indentOf(l) <= parent || t[0] == '#' {
			break
		}
		if !plainContinues(t) {
			return nil, false
		}
		multi = true
		if breaks == 0 {
			b.WriteByte(' ')
		}
		for ; breaks > 0; breaks-- {
			b.WriteByte('\n')
		}
		b.WriteString(strings.TrimRight(t, " "))
		p.i++
	}
	if breaks > 0 {
		// Blank lines after the scalar: give them back.
		for p.i > line+1 && strings.TrimLeft(p.lines[p.i-1], " ") == "" {
			p.i--
		}
	}
	if multi {
		// Folded, it holds spaces: a string, where it does not start as
		// a number, a date or a YAML 1.1 word might.
		if !stringStart(text[0]) {
			return nil, false
		}
		return b.String(), true
	}
	return resolvePlain(text)
}

// plainSafe: a line of a plain scalar with none of what would end it or
// change what it means (": ", " #", a trailing ':', a flow or indicator
// character first).
func plainSafe(s string) bool {
	if s == "" {
		return false
	}
	switch s[0] {
	case '&', '*', '!', '%', '@', '`', '|', '>', '#', '{', '}', '[', ']', ',', '"', '\'':
		return false
	}
	t := strings.TrimRight(s, " ")
	switch {
	case t == "-", t == "?", strings.HasPrefix(t, "- "), strings.HasPrefix(t, "? "):
		return false // a sequence's or a complex key's indicator
	}
	return !strings.Contains(t, ": ") && !strings.Contains(t, " #") && !strings.HasSuffix(t, ":")
}

// plainContinues: a line that goes on a plain scalar, none of it read
// otherwise (a sequence's or a mapping's indicator first, ": " or " #").
func plainContinues(t string) bool {
	switch t[0] {
	case '-', '?', ':':
		return false
	}
	t = strings.TrimRight(t, " ")
	return !strings.Contains(t, ": ") && !strings.Contains(t, " #") && !strings.HasSuffix(t, ":")
}

// singleQuoted reads a single-quoted scalar from line at column start,
// over the lines below where it goes on.
func (p *yamlParser) singleQuoted(line, start, parent int) (any, bool) {
	var b strings.Builder
	l := p.lines[line][start+1:]
	breaks := -1 // before the first line
	for {
		if breaks >= 0 {
			t := strings.TrimLeft(l, " ")
			if t != "" && indentOf(l) <= parent {
				return nil, false
			}
			l = t
		}
		end := -1
		for i := 0; i < len(l); i++ {
			if l[i] == '\'' {
				if i+1 < len(l) && l[i+1] == '\'' {
					i++
					continue
				}
				end = i
				break
			}
		}
		seg := l
		if end >= 0 {
			seg = l[:end]
		}
		if breaks >= 0 && (seg != "" || end >= 0) {
			if breaks == 0 {
				b.WriteByte(' ')
			}
			for ; breaks > 0; breaks-- {
				b.WriteByte('\n')
			}
		}
		if end >= 0 {
			b.WriteString(strings.ReplaceAll(seg, "''", "'"))
			p.i = line + 1
			return b.String(), strings.TrimRight(l[end+1:], " ") == ""
		}
		seg = strings.TrimRight(seg, " ")
		b.WriteString(strings.ReplaceAll(seg, "''", "'"))
		if seg == "" && breaks >= 0 {
			breaks++
		} else {
			breaks = 0
		}
		line++
		if line >= len(p.lines) {
			return nil, false
		}
		l = p.lines[line]
	}
}

// doubleQuoted reads a double-quoted scalar from line at column start,
// over the lines below where it goes on.
func (p *yamlParser) doubleQuoted(line, start, parent int) (any, bool) {
	var b strings.Builder
	l := p.lines[line][start+1:]
	first := true
	breaks := 0
	escapedBreak := false
	for {
		if !first {
			t := strings.TrimLeft(l, " ")
			if t != "" && indentOf(l) <= parent {
				return nil, false
			}
			l = t
		}
		end := closingDouble(`"` + l)
		seg := l
		if end >= 0 {
			seg = l[:end-2]
		}
		if !first {
			if seg == "" && end < 0 {
				if escapedBreak {
					return nil, false
				}
				breaks++
				line++
				if line >= len(p.lines) {
					return nil, false
				}
				l = p.lines[line]
				continue
			}
			if !escapedBreak {
				if breaks == 0 {
					b.WriteByte(' ')
				}
				for ; breaks > 0; breaks-- {
					b.WriteByte('\n')
				}
			}
			breaks = 0
		}
		first = false
		if end >= 0 {
			s, ok := unescapeDouble(seg)
			if !ok {
				return nil, false
			}
			b.WriteString(s)
			p.i = line + 1
			return b.String(), strings.TrimRight(l[end-1:], " ") == ""
		}
		// The line goes on below: an escaped line break joins the lines;
		// else trailing spaces go and the break folds.
		escapedBreak = trailingBackslashes(seg)%2 == 1
		if escapedBreak {
			seg = seg[:len(seg)-1]
		} else {
			seg = strings.TrimRight(seg, " ")
			if trailingBackslashes(seg)%2 == 1 {
				return nil, false // an escaped space before the break
			}
		}
		s, ok := unescapeDouble(seg)
		if !ok {
			return nil, false
		}
		b.WriteString(s)
		line++
		if line >= len(p.lines) {
			return nil, false
		}
		l = p.lines[line]
	}
}

func trailingBackslashes(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n
}

// unescapeDouble reads the escapes of a double-quoted scalar's line: the
// ones yaml.v2's emitter writes.
func unescapeDouble(s string) (string, bool) {
	if !strings.Contains(s, `\`) {
		return s, !strings.Contains(s, `"`)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			return "", false
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", false
		}
		// YAML 1.1's escapes, as yaml.v2 reads them (no \/, which came
		// with YAML 1.2).
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '\\':
			b.WriteByte('\\')
		case '"':
			b.WriteByte('"')
		case '\'':
			b.WriteByte('\'')
		case ' ':
			b.WriteByte(' ')
		case 'r':
			b.WriteByte('\r')
		case '0':
			b.WriteByte(0)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'N':
			b.WriteRune(0x85)
		case '_':
			b.WriteRune(0xa0)
		case 'L':
			b.WriteRune(0x2028)
		case 'P':
			b.WriteRune(0x2029)
		case 'x', 'u', 'U':
			n := 2
			switch s[i] {
			case 'u':
				n = 4
			case 'U':
				n = 8
			}
			if i+1+n > len(s) {
				return "", false
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil || (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff {
				return "", false
			}
			b.WriteRune(rune(v))
			i += n
		default:
			return "", false
		}
	}
	return b.String(), true
}

// literal reads a literal block scalar ("|", "|-" or "|+") whose header
// is on line at column start; its lines are those below indented more
// than parent.
func (p *yamlParser) literal(line, start, parent int) (any, bool) {
	header := strings.TrimRight(p.lines[line][start:], " ")
	chomp := byte(0)
	explicit := 0
	for _, c := range []byte(header[1:]) {
		switch {
		case (c == '-' || c == '+') && chomp == 0:
			chomp = c
		case '1' <= c && c <= '9' && explicit == 0:
			explicit = int(c - '0')
		default:
			return nil, false
		}
	}
	indent := -1
	if explicit > 0 {
		indent = parent + explicit
		if parent < 0 {
			indent = explicit
		}
	}
	var content []string
	i := line + 1
	for ; i < len(p.lines); i++ {
		l := p.lines[i]
		if strings.TrimLeft(l, " ") == "" {
			if indent >= 0 && len(l) > indent {
				content = append(content, l[indent:])
			} else {
				if indent < 0 && len(l) > 0 {
					return nil, false // spaces before the first line sets the indentation
				}
				content = append(content, "")
			}
			continue
		}
		ind := indentOf(l)
		if indent < 0 {
			if ind <= parent {
				break
			}
			indent = ind
		}
		if ind < indent {
			break
		}
		content = append(content, l[indent:])
	}
	// Trailing empty lines belong to the chomping, then to what follows.
	last := len(content)
	for last > 0 && content[last-1] == "" {
		last--
	}
	trailing := len(content) - last
	body := strings.Join(content[:last], "\n")
	switch {
	case last == 0:
		body = ""
		if chomp == '+' {
			body = strings.Repeat("\n", trailing)
		}
	case chomp == '-':
	case chomp == '+':
		body += "\n" + strings.Repeat("\n", trailing)
	default:
		body += "\n"
	}
	if indent < 0 && last == 0 && trailing > 0 {
		return nil, false
	}
	p.i = i
	// Give back the trailing blank lines to the lines that follow.
	for p.i > line+1 && strings.TrimLeft(p.lines[p.i-1], " ") == "" && trailing > 0 {
		p.i--
		trailing--
	}
	return body, true
}
