package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/policytest/engine"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"accelc": func() { os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr)) },
		// accelc test's policy engine, found on PATH.
		policytest.EngineCommand: func() { os.Exit(engine.Command()) },
	})
}

// TestScripts runs the CLI end to end: testdata/script/*.txtar, one file
// per command and topic. `go test ./cmd/accelc -update` rewrites their
// expected output.
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs("../../examples/clusters")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := filepath.Abs("../../testdata/nodes")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("EXAMPLES", examples)
			e.Setenv("NODES", nodes)
			return nil
		},
		UpdateScripts: *testutil.Update,
	})
}

// runMain runs accelc with args and returns its exit code, stdout and
// stderr.
func runMain(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Main(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}
