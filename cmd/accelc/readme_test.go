package main

import (
	"bufio"
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadme runs every `$ bin/accelc …` line of the README's console
// blocks from the repository root and compares what it prints (stdout,
// then stderr) with the lines that follow it, so the README cannot rot.
func TestReadme(t *testing.T) {
	f, err := os.Open("../../README.md")
	require.NoError(t, err)
	defer f.Close()

	type example struct {
		args []string
		want string
	}
	var examples []example
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "```console":
			in = true
		case in && line == "```":
			in = false
		case in && strings.HasPrefix(line, "$ bin/accelc "):
			examples = append(examples, example{args: strings.Fields(strings.TrimPrefix(line, "$ bin/accelc "))})
		case in && len(examples) > 0:
			examples[len(examples)-1].want += line + "\n"
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, examples, "the README has console examples")

	t.Chdir("../..")
	for _, ex := range examples {
		var stdout, stderr bytes.Buffer
		code := Main(ex.args, &stdout, &stderr)
		assert.Equal(t, ex.want, stdout.String()+stderr.String(), "accelc %s", strings.Join(ex.args, " "))
		if ex.want == "" {
			assert.Zero(t, code, "accelc %s", strings.Join(ex.args, " "))
		}
	}
}
