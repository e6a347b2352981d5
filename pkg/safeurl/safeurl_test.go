package safeurl_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"

	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/safeurl"
)

// TestSource: the Git remotes the hardening review found leaking through
// net/url, and the usual ones, rebuilt from scheme, host and path.
func TestSource(t *testing.T) {
	for raw, want := range map[string]string{
		"https://git.example.com/acme/fleet.git":                      "https://git.example.com/acme/fleet.git",
		"https://bot:s3cret@git.example.com/acme/fleet.git":           "https://git.example.com/acme/fleet.git",
		"https://alice:pa%zzSECRET@git.example.com/acme/fleet.git":    "https://git.example.com/acme/fleet.git",
		"https://alice:pa ssSECRET@git.example.com/acme/fleet.git":    "https://git.example.com/acme/fleet.git",
		"https://alice:p@ssSECRET@git.example.com:8443/acme/fleet":    "https://git.example.com:8443/acme/fleet",
		"https://git.example.com/acme/fleet.git?private_token=SECRET": "https://git.example.com/acme/fleet.git",
		"https://git.example.com/acme/fleet.git#SECRET":               "https://git.example.com/acme/fleet.git",
		"HTTPS://Git.Example.COM/Acme/Fleet":                          "https://git.example.com/Acme/Fleet",
		"alice:SECRET@git.example.com:acme/fleet.git":                 "ssh://git.example.com/acme/fleet.git",
		"git@github.com:acme/fleet.git":                               "ssh://github.com/acme/fleet.git",
		"github.com:acme/fleet.git":                                   "ssh://github.com/acme/fleet.git",
		"ssh://git@[2001:db8::1]:2222/acme/fleet.git":                 "ssh://[2001:db8::1]:2222/acme/fleet.git",
		"  https://git.example.com/x\n":                               "https://git.example.com/x",
	} {
		got, ok := safeurl.Source(raw)
		assert.True(t, ok, raw)
		assert.Equal(t, want, got, raw)
		assert.NotContains(t, got, "SECRET", raw)
	}
	for _, raw := range []string{
		"",
		"/srv/git/fleet.git",       // a local path
		"../fleet",                 // a local path
		"file:///home/alice/fleet", // not a remote
		"https://alice:12/SECRET@git.example.com/x",  // '/' in the password: ambiguous
		"https://alice:12?SECRET@git.example.com/x",  // '?' in the password: ambiguous
		"https://alice:12#SECRET@git.example.com/x",  // '#' in the password: ambiguous
		"alice:se/cretSECRET@git.example.com:org/x",  // scp-like, '/' in the password
		"https://git example.com/x",                  // a space in the host
		"https://git.example.com/a b",                // a space in the path
		"https://git.example.com:99999999/x",         // not a port
		"https://git.example.com/%zz",                // a bad escape in the path
		"https://git.example.com/x\x1b[2J",           // a control sequence
		"c:\\Users\\alice\\fleet",                    // a Windows path
		"https://:SECRET@/x",                         // no host
		"ftp://git.example.com/x",                    // not a Git scheme
		"https://git.example.com/\u202eterces/fleet", // a bidi override
	} {
		got, ok := safeurl.Source(raw)
		assert.False(t, ok, raw)
		assert.Empty(t, got, raw)
	}
}

// TestRedact: URLs in an error message lose userinfo and query, and the
// secrets given are replaced even where a space cut the URL short.
func TestRedact(t *testing.T) {
	for _, c := range []struct{ msg, server, want string }{
		{`Get "https://alice:***@127.0.0.1:6443/api/v1/nodes?limit=500": dial tcp 127.0.0.1:6443: connect: connection refused`,
			"https://alice:SECRET@127.0.0.1:6443",
			`Get "https://127.0.0.1:6443/api/v1/nodes": dial tcp 127.0.0.1:6443: connect: connection refused`},
		{`the API server https://alice:SECRET@127.0.0.1:6443: cannot reach it`, "https://alice:SECRET@127.0.0.1:6443",
			`the API server https://127.0.0.1:6443: cannot reach it`},
		{`host must be a URL or a host:port pair: "https://alice:pa ssSECRET@127.0.0.1:6443"`, "https://alice:pa ssSECRET@127.0.0.1:6443",
			`host must be a URL or a host:port pair: "https://127.0.0.1:6443"`},
		{`parse "https://alice:pa%zzSECRET@127.0.0.1:6443": invalid URL escape "%zz"`, "https://alice:pa%zzSECRET@127.0.0.1:6443",
			`parse "https://127.0.0.1:6443": invalid URL escape "%zz"`},
		{`Get "https://127.0.0.1:6443/api?token=SECRET": EOF`, "https://127.0.0.1:6443/?token=SECRET",
			`Get "https://127.0.0.1:6443/api": EOF`},
		{`https://alice:12/SECRET@host/x failed`, "", `https://[redacted] failed`},
	} {
		got := safeurl.Redact(c.msg, safeurl.UserInfo(c.server))
		assert.Equal(t, c.want, got)
		assert.NotContains(t, got, "SECRET")
	}
	assert.Equal(t, "a message with no URL", safeurl.Redact("a message with no URL", "ab"), "short secrets are not replaced")
	// A secret that shares characters with "[redacted]" is replaced by
	// what cannot form it again.
	assert.Equal(t, "00*****00", safeurl.Redact("0000[00", "00["))
	assert.Equal(t, "token red-act: *****", safeurl.Redact("token red-act: secret-red", "secret-red"))
	assert.Equal(t, "[message withheld]", safeurl.Redact("x", `[r*#~^|=_`))
}

// FuzzSource: whatever a remote's URL holds, what Source publishes has no
// userinfo, query or fragment, parses as a URL of a Git scheme, is stable
// when sanitised again, and never holds the user, password or query of
// the input unless the host or path do too. Every input shape is built
// from the same parts: URL with userinfo, scp-like, and the raw string.
func FuzzSource(f *testing.F) {
	f.Add(uint8(0), "https", "alice", "s3cret", "git.example.com", "/acme/fleet.git", "private_token=tok")
	f.Add(uint8(0), "https", "alice", "pa%zz", "git.example.com", "/acme/fleet.git", "")
	f.Add(uint8(0), "https", "alice", "pa ss", "git.example.com:8443", "/acme/fleet.git", "")
	f.Add(uint8(0), "https", "alice", "12/x", "git.example.com", "/acme/fleet.git", "")
	f.Add(uint8(1), "", "alice", "secret", "git.example.com", "org/repo.git", "")
	f.Add(uint8(1), "", "git", "", "github.com", "acme/fleet.git", "")
	f.Add(uint8(2), "ssh", "", "", "[::1]:22", "/x", "a=b")
	f.Add(uint8(3), "https://a:b@c/d?e#f", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, form uint8, scheme, user, pass, host, path, query string) {
		var raw string
		switch form % 4 {
		case 0: // URL with userinfo and query
			raw = scheme + "://" + user + ":" + pass + "@" + host + path + "?" + query
		case 1: // scp-like
			raw = user + ":" + pass + "@" + host + ":" + path
		case 2: // URL without userinfo, with a fragment
			raw = scheme + "://" + host + path + "#" + query
		default: // anything
			raw = scheme
		}
		out, ok := safeurl.Source(raw)
		if !ok {
			if out != "" {
				t.Fatalf("Source(%q) = %q, not ok: want empty", raw, out)
			}
			return
		}
		if strings.ContainsAny(out, "@?# \t\r\n\\") || strings.IndexFunc(out, func(r rune) bool { return r > unicode.MaxASCII || unicode.IsControl(r) }) >= 0 {
			t.Fatalf("Source(%q) = %q: userinfo, query, fragment, space or control characters", raw, out)
		}
		u, err := url.Parse(out)
		if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
			t.Fatalf("Source(%q) = %q: parses as %#v, %v", raw, out, u, err)
		}
		if !slices.Contains([]string{"https", "http", "ssh", "git", "git+ssh", "ssh+git"}, u.Scheme) {
			t.Fatalf("Source(%q) = %q: scheme %q", raw, out, u.Scheme)
		}
		if again, ok := safeurl.Source(out); !ok || again != out {
			t.Fatalf("Source(%q) = %q, but Source(%q) = %q, %v", raw, out, out, again, ok)
		}
		if form%4 == 3 {
			return
		}
		// The input without its userinfo and query, and the forms Source
		// may write it in: a secret found only there came from the host
		// or path (the fuzzer puts ':' and '@' in those too).
		safe := strings.ToLower(scheme + "://" + host + path + " " + host + ":" + path + " ssh://" + host + "/" + path)
		for _, secret := range []string{user, pass, query, user + ":" + pass} {
			if len(secret) >= 3 && !strings.Contains(safe, strings.ToLower(secret)) && strings.Contains(strings.ToLower(out), strings.ToLower(secret)) {
				t.Fatalf("Source(%q) = %q holds %q", raw, out, secret)
			}
		}
	})
}

// FuzzRedact: a message with a URL holding a secret never keeps the
// secret, whatever surrounds it.
func FuzzRedact(f *testing.F) {
	f.Add("Get \"", "https://alice:", "s3cret", "@127.0.0.1:6443/api?limit=1", "\": EOF")
	f.Add("parse ", "https://alice:", "pa%zz", "@h:1", " failed")
	f.Add("", "https://h/x?token=", "s3cret", "", "")
	f.Fuzz(func(t *testing.T, before, prefix, secret, suffix, after string) {
		if len(secret) < 3 {
			return
		}
		msg := before + prefix + secret + suffix + after
		got := safeurl.Redact(msg, secret)
		if strings.Contains(got, secret) {
			t.Fatalf("Redact(%q) = %q holds %q", msg, got, secret)
		}
	})
}
