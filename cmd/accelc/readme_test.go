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
