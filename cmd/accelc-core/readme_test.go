package main

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeExample is one `$ bin/accelc …` line of a console block and the
// lines that follow it, up to the next such line or the block's end.
type readmeExample struct {
	line int
	args []string
	want string
}

// readmeExamples reads the console examples of one Markdown file.
func readmeExamples(t *testing.T, path string) []readmeExample {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var examples []readmeExample
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case line == "```console":
			in = true
		case in && line == "```":
			in = false
		case in && strings.HasPrefix(line, "$ bin/accelc "):
			examples = append(examples, readmeExample{line: n, args: strings.Fields(strings.TrimPrefix(line, "$ bin/accelc "))})
		case in && strings.HasPrefix(line, "$ "):
			t.Errorf("%s:%d: a console block runs bin/accelc only; show %q in a sh block", path, n, line)
		case in && len(examples) > 0:
			examples[len(examples)-1].want += line + "\n"
		}
	}
	require.NoError(t, sc.Err())
	return examples
}

// readmeFiles is README.md and every Markdown file under docs/, relative
// to the repository root.
func readmeFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir("docs", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, filepath.ToSlash(p))
		}
		return err
	})
	require.NoError(t, err)
	return files
}

// TestReadme runs every `$ bin/accelc …` line of the console blocks of
// README.md and of every Markdown file under docs/ from the repository
// root, and compares what it prints (stdout, then stderr) with the lines
// that follow it, so the documentation cannot rot. A line with no output
// after it must also exit 0.
func TestReadme(t *testing.T) {
	t.Chdir("../..")
	total := 0
	for _, file := range readmeFiles(t) {
		examples := readmeExamples(t, file)
		total += len(examples)
		if len(examples) == 0 {
			continue
		}
		t.Run(file, func(t *testing.T) {
			for _, ex := range examples {
				var stdout, stderr bytes.Buffer
				code := Main(ex.args, &stdout, &stderr)
				where := file + ":" + strconv.Itoa(ex.line) + ": accelc " + strings.Join(ex.args, " ")
				assert.Equal(t, ex.want, stdout.String()+stderr.String(), where)
				if ex.want == "" {
					assert.Zero(t, code, where)
				}
			}
		})
	}
	require.NotZero(t, total, "the README and docs/ have console examples")
}

// TestFirstClusterPage: every text block of docs/first-cluster.md is what
// a step of testdata/script/first_hour.txtar prints (a file the script
// compares stdout or stderr with, or a command's stdout then stderr), so
// the page shows what the walk-through test saw.
func TestFirstClusterPage(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/script/first_hour.txtar")
	require.NoError(t, err)
	outputs := map[string]bool{}
	files := map[string]string{}
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
		outputs[string(f.Data)] = true
	}
	for name, data := range files {
		if stem, ok := strings.CutSuffix(name, ".stdout"); ok {
			outputs[data+files[stem+".stderr"]] = true
		}
	}
	page, err := os.ReadFile("../../docs/first-cluster.md")
	require.NoError(t, err)
	var blocks []string
	var cur *strings.Builder
	for _, line := range strings.Split(string(page), "\n") {
		switch {
		case line == "```text":
			cur = &strings.Builder{}
		case cur != nil && line == "```":
			blocks = append(blocks, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(line + "\n")
		}
	}
	require.NotEmpty(t, blocks, "docs/first-cluster.md has text blocks")
	for _, b := range blocks {
		assert.True(t, outputs[b], "docs/first-cluster.md shows output that first_hour.txtar does not compare:\n%s", b)
	}
}
