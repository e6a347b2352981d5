package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/render"
)

// TestLoadTreeLinks: a previous output with a link in it is refused, and
// nothing outside the folder is read, whether the link is to a file or to
// a folder.
func TestLoadTreeLinks(t *testing.T) {
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.yaml"), []byte("kind: Secret\ndata: OUTSIDE\n"), 0o644))
	for link, target := range map[string]string{
		"profiles/hardwareprofile-gpu.yaml": filepath.Join(outside, "secret.yaml"),
		"elsewhere":                         outside,
	} {
		dir := filepath.Join(t.TempDir(), "small-lab")
		require.NoError(t, renderExample(t, "small-lab").Write(dir))
		full := filepath.Join(dir, filepath.FromSlash(link))
		_ = os.Remove(full)
		require.NoError(t, os.Symlink(target, full))
		tree, err := render.LoadTree(dir)
		assert.Nil(t, tree)
		require.Error(t, err, link)
		assert.Contains(t, err.Error(), link+": a symbolic link: accelc renders none, and diff reads nothing outside "+dir, link)
		assert.NotContains(t, err.Error(), "OUTSIDE")
	}
}

// TestWriteChangesEscapes: what a deployed file holds reaches the
// terminal escaped: no escape sequence, NUL, carriage return, bidi
// override or stray byte from it is printed as is, in its path or in its
// diff; tabs and non-ASCII text stay.
func TestWriteChangesEscapes(t *testing.T) {
	tree := render.Tree{"a.yaml": []byte("kind: A\nname: café\tx\n")}
	old := render.Tree{
		"a.yaml":                []byte("kind: A\nname: \x1b]0;pwned\x07\x1b[2J\x00\r\u202eevil\xff\u009b31m\n"),
		"b\x1b[31m\n-fake.yaml": []byte("x"),
	}
	changes, err := render.Diff(tree, old)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, render.WriteChanges(&out, changes))
	got := out.String()
	for _, bad := range []string{"\x1b", "\x00", "\r", "\x07", "\u202e", "\xff", "\u009b"} {
		assert.NotContains(t, got, bad)
	}
	assert.Contains(t, got, `name: \x1b]0;pwned\x07\x1b[2J\x00\x0d\u202eevil\xff\u009b31m`)
	assert.Contains(t, got, "- b\\x1b[31m\\x0a-fake.yaml\n", "a path is one line")
	assert.Contains(t, got, `name: "café\tx"`, "tabs and UTF-8 stay")
}

// TestDiffLargeFiles: a file over 4 MiB on either side is compared byte
// for byte, not parsed as YAML or diffed line by line.
func TestDiffLargeFiles(t *testing.T) {
	big := []byte(strings.Repeat("a: b\n", 1<<20))
	changes, err := render.Diff(render.Tree{"k.yaml": []byte("kind: K\n")}, render.Tree{"k.yaml": big})
	require.NoError(t, err)
	require.Len(t, changes, 1)
	assert.Equal(t, "(not shown: 5242880 bytes deployed, 8 rendered; a file over 4 MiB is compared byte for byte)\n", changes[0].Diff)
	changes, err = render.Diff(render.Tree{"k.yaml": big}, render.Tree{"k.yaml": big})
	require.NoError(t, err)
	assert.Empty(t, changes)
}
