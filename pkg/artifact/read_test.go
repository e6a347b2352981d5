package artifact_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/artifact"
)

// entry is one tar entry a test layer holds.
type entry struct {
	hdr  tar.Header
	body []byte
}

// layer writes entries as a gzipped tar; a body shorter than the header's
// size ends the stream there, as a layer that lies about its sizes does.
func layer(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gw)
	for _, e := range entries {
		h := e.hdr
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		require.NoError(t, tw.WriteHeader(&h))
		_, err := tw.Write(e.body)
		require.NoError(t, err)
		if int64(len(e.body)) < h.Size {
			require.NoError(t, gw.Close())
			return buf.Bytes()
		}
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gw.Close())
	return buf.Bytes()
}

func file(name, body string) entry {
	return entry{tar.Header{Name: name, Size: int64(len(body))}, []byte(body)}
}

// TestReadLayer reads what Tarball writes, keeping only the contents
// asked for.
func TestReadLayer(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, artifact.Tarball(tree(t, 0o644), treePaths(), &buf))
	files, err := artifact.ReadLayer(bytes.NewReader(buf.Bytes()), artifact.ReadOptions{})
	require.NoError(t, err)
	want := map[string][]byte{}
	for p, body := range treeFiles {
		want[p] = []byte(body)
	}
	assert.Equal(t, want, files)

	files, err = artifact.ReadLayer(bytes.NewReader(buf.Bytes()), artifact.ReadOptions{Keep: func(p string) bool { return p == "nodes/rule.yaml" }})
	require.NoError(t, err)
	assert.Equal(t, []byte("kind: NodeFeatureRule\n"), files["nodes/rule.yaml"])
	assert.Contains(t, files, "kustomization.yaml", "a file not kept is listed")
	assert.Nil(t, files["kustomization.yaml"], "without its contents")
}

// TestReadLayerLimits: the layers the hardening review built (48 zero
// files that together pass the size limit, a 1 TiB sparse file, too many
// entries), scaled down to small limits, are refused from their headers
// with an error that says which limit and where; a layer that is not a
// gzipped tar says so.
func TestReadLayerLimits(t *testing.T) {
	small := artifact.Limits{MaxSize: 1 << 20, MaxFiles: 32}
	read := func(data []byte) (map[string][]byte, error) {
		return artifact.ReadLayer(bytes.NewReader(data), artifact.ReadOptions{Limits: small})
	}

	var zeros []entry
	for i := range 48 {
		zeros = append(zeros, entry{tar.Header{Name: fmt.Sprintf("zero-%02d.yaml", i), Size: 64 << 10}, make([]byte, 64<<10)})
	}
	_, err := read(layer(t, zeros[:16]...))
	require.NoError(t, err, "16 × 64 KiB is 1 MiB: at the limit")
	_, err = read(layer(t, zeros...))
	var le *artifact.LimitError
	require.ErrorAs(t, err, &le)
	assert.False(t, le.Files)
	assert.Equal(t, `the layer holds more than 1MiB uncompressed (at "zero-16.yaml", 64KiB)`, err.Error())

	// GNU sparse 1.0 in PAX records: 512 bytes in the layer, 1 TiB when
	// read. Refused from its header, before a byte of it is read.
	_, err = artifact.ReadLayer(bytes.NewReader(testutil.SparseLayer(t, "big.yaml", 1<<40)), artifact.ReadOptions{})
	require.ErrorAs(t, err, &le)
	assert.Equal(t, `the layer holds more than 256MiB uncompressed (at "big.yaml", 1TiB)`, err.Error())

	var many []entry
	for i := range 40 {
		many = append(many, file(fmt.Sprintf("f%02d.yaml", i), "x"))
	}
	_, err = read(layer(t, many...))
	require.ErrorAs(t, err, &le)
	assert.True(t, le.Files)
	assert.Equal(t, `the layer holds more than 32 entries (at "f32.yaml")`, err.Error())

	// Folders and links count too: the reader reads through them.
	many = many[:0]
	for i := range 40 {
		many = append(many, entry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: fmt.Sprintf("d%02d/", i), Mode: 0o755}})
	}
	_, err = read(layer(t, many...))
	require.ErrorAs(t, err, &le)

	// GNU tar's padding after the end is read; more than a little is not.
	var padded bytes.Buffer
	gw := gzip.NewWriter(&padded)
	tw := tar.NewWriter(gw)
	require.NoError(t, tw.Close())
	_, err = gw.Write(make([]byte, 10240))
	require.NoError(t, err)
	require.NoError(t, gw.Close())
	_, err = read(padded.Bytes())
	require.NoError(t, err)
	padded.Reset()
	gw = gzip.NewWriter(&padded)
	_, err = gw.Write(make([]byte, 1<<20))
	require.NoError(t, err)
	require.NoError(t, gw.Close())
	_, err = read(padded.Bytes())
	assert.EqualError(t, err, "more than 64KiB after the tar's end: not a layer accelc push or flux push artifact made")

	_, err = read([]byte("{\"not\": \"gzip\"}"))
	assert.EqualError(t, err, "not a gzipped tar: gzip: invalid header")
	_, err = read(layer(t, file("../escape.yaml", "x")))
	assert.EqualError(t, err, `"../escape.yaml": a path outside the tree`)
	_, err = read(layer(t, file("/etc/passwd", "x")))
	assert.ErrorContains(t, err, "a path outside the tree")
}

// FuzzReadLayer: no layer panics the reader or makes it return more than
// its limits allow, and every path it returns is clean and inside the
// tree. The fuzzer writes tar bytes (gzipped by the harness, or taken as
// the gzip stream itself).
func FuzzReadLayer(f *testing.F) {
	var buf bytes.Buffer
	require.NoError(f, artifact.Tarball(tree(f, 0o644), treePaths(), &buf))
	gz, err := gzip.NewReader(&buf)
	require.NoError(f, err)
	plain, err := io.ReadAll(gz)
	require.NoError(f, err)
	f.Add(plain, false)
	f.Add(buf.Bytes(), true)
	ungz := func(b []byte) []byte {
		r, err := gzip.NewReader(bytes.NewReader(b))
		require.NoError(f, err)
		out, err := io.ReadAll(r)
		require.NoError(f, err)
		return out
	}
	f.Add(ungz(layer(f, file("../escape.yaml", "x"), file("a/./b/../c.yaml", "y"))), false)
	f.Add(ungz(layer(f, entry{tar.Header{Name: "big", Size: 1 << 40}, nil})), false)
	f.Add(ungz(layer(f, entry{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: "l", Linkname: "/etc/passwd"}})), false)
	f.Add(ungz(testutil.SparseLayer(f, "big.yaml", 1<<40)), false)
	// Small limits: the fuzzer reaches them, and each input costs little.
	lim := artifact.Limits{MaxSize: 64 << 10, MaxFiles: 16}
	f.Fuzz(func(t *testing.T, data []byte, gzipped bool) {
		if !gzipped {
			var b bytes.Buffer
			w := gzip.NewWriter(&b)
			_, _ = w.Write(data)
			_ = w.Close()
			data = b.Bytes()
		}
		files, err := artifact.ReadLayer(bytes.NewReader(data), artifact.ReadOptions{Limits: lim, Keep: func(p string) bool { return !strings.HasPrefix(p, "skip") }})
		if err != nil {
			if files != nil {
				t.Fatalf("files with an error: %v", err)
			}
			return
		}
		if len(files) > lim.MaxFiles {
			t.Fatalf("%d files, over the limit of %d", len(files), lim.MaxFiles)
		}
		var total int64
		for p, body := range files {
			total += int64(len(body))
			if p == "" || p != path.Clean(p) || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
				t.Fatalf("path %q is not clean and inside the tree", p)
			}
			if strings.HasPrefix(p, "skip") && body != nil {
				t.Fatalf("%s: kept though Keep said no", p)
			}
		}
		if total > lim.MaxSize {
			t.Fatalf("%d bytes, over the limit of %d", total, lim.MaxSize)
		}
	})
}
