package safeurl

// URLs and messages made safe to print: credentials redacted from sources
// and errors.

import (
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// sourceSchemes are the schemes a Git remote is published with.
var sourceSchemes = []string{"https", "http", "ssh", "git", "git+ssh", "ssh+git"}

// Source returns a Git remote's URL as it may be published:
// scheme://host[:port]/path for https, http, ssh and git URLs, and
// ssh://host/path for the scp-like user@host:path that Git also accepts.
// ok is false, and the result empty, where raw is none of these (a local
// path, another scheme) or cannot be split safely: a character a URL does
// not allow in the host or path, or an '@' after the host (a password
// holding '/', '?' or '#' would leave part of it there).
func Source(raw string) (string, bool) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", false
	}
	if strings.Contains(raw, "://") {
		scheme, host, path, ok := split(raw)
		scheme, host = strings.ToLower(scheme), strings.ToLower(host)
		if !ok || !slices.Contains(sourceSchemes, scheme) {
			return "", false
		}
		return scheme + "://" + host + path, true
	}
	host, path, ok := splitSCP(raw)
	if !ok {
		return "", false
	}
	return "ssh://" + host + "/" + strings.TrimPrefix(path, "/"), true
}

// URL returns raw, a URL of any scheme, without userinfo, query and
// fragment; ok is false, and the result empty, where it cannot be split
// safely into scheme, host and path.
func URL(raw string) (string, bool) {
	scheme, host, path, ok := split(raw)
	if !ok {
		return "", false
	}
	return scheme + "://" + host + path, true
}

// Redacted stands for what Redact removes, unless a secret shares a
// character with it; then a run of a character no secret holds does.
const Redacted = "[redacted]"

// markers are what Redact writes for a secret, in order of preference:
// the first that shares no character with any secret. A secret cannot
// then be formed again across what was replaced.
var markers = []string{Redacted, "*****", "#####", "~~~~~", "^^^^^", "|||||", "=====", "_____"}

// withheld replaces a whole message whose secrets use every marker's
// characters.
const withheld = "[message withheld]"

// minSecret is the shortest secret Redact replaces on its own: a shorter
// one would garble the message (every "a" of it) and guards little.
const minSecret = 3

// Redact returns s, a message, with every secret of three bytes or more
// replaced (as given, and as URLs escape it), and every scheme://… in it
// rebuilt by URL; a URL that cannot be rebuilt becomes
// "scheme://[redacted]". Pass the secrets the message may hold (the
// userinfo of a URL it names, a password): they are what survives where a
// URL was cut short by a space or a quote. Secrets are replaced before
// URLs are rebuilt and again after, so that what rebuilding removes
// cannot join the halves of one.
func Redact(s string, secrets ...string) string {
	var forms []string
	for _, sec := range secrets {
		for _, f := range []string{sec, url.PathEscape(sec), url.QueryEscape(sec), url.UserPassword("", sec).String()[1:]} {
			if len(f) >= minSecret && !slices.Contains(forms, f) {
				forms = append(forms, f)
			}
		}
	}
	// Longest first, so a secret that holds another is replaced whole.
	slices.SortFunc(forms, func(a, b string) int { return len(b) - len(a) })
	mark := ""
	for _, m := range markers {
		if !slices.ContainsFunc(forms, func(f string) bool { return strings.ContainsAny(f, m) }) {
			mark = m
			break
		}
	}
	if mark == "" {
		if slices.ContainsFunc(forms, func(f string) bool { return strings.Contains(withheld, f) }) {
			return ""
		}
		return withheld
	}
	hide := func(s string) string {
		for _, f := range forms {
			s = strings.ReplaceAll(s, f, mark)
		}
		return s
	}
	s = urlInText().ReplaceAllStringFunc(hide(s), func(u string) string {
		// Punctuation that ends a sentence or a clause is not the URL's.
		trimmed := strings.TrimRight(u, ".,;:!")
		punct := u[len(trimmed):]
		if clean, ok := URL(trimmed); ok {
			return clean + punct
		}
		scheme, _, _ := strings.Cut(u, "://")
		return scheme + "://" + mark + punct
	})
	return hide(s)
}

// UserInfo returns what comes before the host in raw (a URL or scp-like
// address), the user and password a message may repeat; empty where
// there is none.
func UserInfo(raw string) string {
	rest := raw
	if _, after, ok := strings.Cut(raw, "://"); ok {
		rest = after
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		return rest[:at]
	}
	return ""
}

// urlInText finds URLs in a message: a scheme, "://", and what follows up
// to a space, a quote or a bracket that messages put around URLs.
var urlInText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("[A-Za-z][A-Za-z0-9+.-]*://[^\\s\"'`<>()]*") })

var schemeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`) })

// split reads scheme://[userinfo@]host[:port][/path][?query][#fragment]
// and returns the scheme, host[:port] and path, each checked against what
// a URL allows.
func split(raw string) (scheme, host, path string, ok bool) {
	scheme, rest, found := strings.Cut(raw, "://")
	if !found || !schemeRE().MatchString(scheme) {
		return "", "", "", false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		authority = authority[at+1:]
	}
	// An '@' after the host means a password held '/', '?' or '#', and
	// part of it would be taken for the path.
	if strings.Contains(tail, "@") {
		return "", "", "", false
	}
	if i := strings.IndexAny(tail, "?#"); i >= 0 {
		tail = tail[:i]
	}
	if !validHostPort(authority) || !validPath(tail) {
		return "", "", "", false
	}
	return scheme, authority, tail, true
}

// splitSCP reads Git's scp-like [userinfo@]host:path, which Git takes
// where no '/' comes before the first ':'.
func splitSCP(raw string) (host, path string, ok bool) {
	seg := raw
	if i := strings.Index(raw, "/"); i >= 0 {
		seg = raw[:i]
	}
	rest := raw
	if at := strings.LastIndex(seg, "@"); at >= 0 {
		rest = raw[at+1:]
	}
	host, path, found := strings.Cut(rest, ":")
	if !found || strings.Contains(host, "/") || path == "" || strings.Contains(path, "@") {
		return "", "", false
	}
	if !validHost(host) || !validPath(path) {
		return "", "", false
	}
	return strings.ToLower(host), path, true
}

// validHostPort is host or host:port, host a name, an IPv4 address or an
// IPv6 address in brackets.
func validHostPort(s string) bool {
	host, port := s, ""
	if i := strings.LastIndex(s, ":"); i >= 0 && !strings.HasSuffix(s, "]") {
		host, port = s[:i], s[i+1:]
		if port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
			return false
		}
	}
	return validHost(host)
}

func validHost(h string) bool {
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		ip, err := netip.ParseAddr(h[1 : len(h)-1])
		return err == nil && ip.Is6() && ip.Zone() == ""
	}
	if h == "" || len(h) > 253 || h[0] == '-' || h[0] == '.' {
		return false
	}
	for _, c := range []byte(h) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}

// validPath allows what RFC 3986 allows in a path but '@' (see split),
// percent escapes included: unreserved characters, sub-delimiters, ':'
// and '/'.
func validPath(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-._~!$&'()*+,;=:/", c) >= 0:
		case c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
