package testutil

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// SparseLayer writes a gzipped tar of one GNU sparse 1.0 file, as GNU tar
// writes a sparse file in PAX format: 512 bytes in the layer, size bytes
// of zeros when read. archive/tar writes no sparse files, so the blocks
// are laid out here.
func SparseLayer(t testing.TB, name string, size int64) []byte {
	t.Helper()
	block := func(name string, size int64, flag byte) []byte {
		b := make([]byte, 512)
		copy(b[0:], name)
		copy(b[100:], "0000644\x00")
		copy(b[108:], "0000000\x00")
		copy(b[116:], "0000000\x00")
		copy(b[124:], fmt.Sprintf("%011o\x00", size))
		copy(b[136:], "00000000000\x00")
		b[156] = flag
		copy(b[257:], "ustar\x0000")
		copy(b[148:], "        ")
		sum := 0
		for _, c := range b {
			sum += int(c)
		}
		copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
		return b
	}
	pad := func(b []byte) []byte { return append(b, make([]byte, (512-len(b)%512)%512)...) }
	var records []byte
	for _, kv := range [][2]string{{"GNU.sparse.major", "1"}, {"GNU.sparse.minor", "0"}, {"GNU.sparse.name", name}, {"GNU.sparse.realsize", fmt.Sprint(size)}} {
		line := " " + kv[0] + "=" + kv[1] + "\n"
		n := len(line) + 1
		for len(fmt.Sprint(n))+len(line) != n {
			n++
		}
		records = append(records, fmt.Sprint(n)+line...)
	}
	var tarball []byte
	tarball = append(tarball, block("PaxHeaders.0/"+name, int64(len(records)), tar.TypeXHeader)...)
	tarball = append(tarball, pad(records)...)
	tarball = append(tarball, block("GNUSparseFile.0/"+name, 512, tar.TypeReg)...)
	tarball = append(tarball, pad([]byte("1\n0\n0\n"))...) // the map: one fragment, empty
	tarball = append(tarball, make([]byte, 1024)...)
	var buf bytes.Buffer
	gw := gzip.NewWriter(&buf)
	_, err := gw.Write(tarball)
	require.NoError(t, err)
	require.NoError(t, gw.Close())

	// The layer is what it claims: archive/tar reads a file of size bytes.
	gz, err := gzip.NewReader(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	hdr, err := tar.NewReader(gz).Next()
	require.NoError(t, err)
	require.Equal(t, name, hdr.Name)
	require.Equal(t, size, hdr.Size)
	return buf.Bytes()
}
