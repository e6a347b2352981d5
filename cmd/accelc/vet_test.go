package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVetExampleTypeError breaks a bundled example the way an admin might
// (a string where the schema wants a number) and checks that vet exits 1
// naming the example's .cue file and line.
func TestVetExampleTypeError(t *testing.T) {
	src := "../../examples/clusters"
	dst := filepath.Join(t.TempDir(), "clusters")
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	file := filepath.Join(dst, "hetero-prod", "cluster.cue")
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	broken := strings.Replace(string(b), "gpu: {min: 1, default: 1, max: 4}", `gpu: {min: 1, default: 1, max: "four"}`, 1)
	require.NotEqual(t, string(b), broken, "the example still has the line this test edits")
	require.NoError(t, os.WriteFile(file, []byte(broken), 0o644))
	line := 1 + strings.Count(broken[:strings.Index(broken, `"four"`)], "\n")

	var stdout, stderr bytes.Buffer
	t.Chdir(filepath.Dir(dst))
	code := Main([]string{"vet", "clusters/hetero-prod"}, &stdout, &stderr)
	assert.Equal(t, exitInput, code)
	assert.Empty(t, stdout.String())
	assert.Contains(t, stderr.String(), "clusters/hetero-prod/cluster.cue:"+strconv.Itoa(line)+":")
	assert.Contains(t, stderr.String(), `profiles."standard-gpu".gpu.max: conflicting values "four" and int`)
}
