package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
// per command and topic, each step's stdout and stderr compared with the
// archive's files. `go test ./cmd/accelc -update` rewrites the expected
// output that `cmp` compares; `cmpenv`'s, which name a server's port
// or a digest, are written by hand.
//
// Besides testscript's own conditions, [cgo] says accelc was built with
// cgo. Besides testscript's own commands, the scripts have:
//
//	exitcode N PROG ARGS...    run PROG as exec does; fail unless it exits N
//	registry                   start a registry on 127.0.0.1; $REGISTRY is its HOST:PORT
//	pushlayer REF FILE         publish FILE's bytes as the content layer of a Flux artifact
//	pull REF DIR               what REF publishes: DIR/annotations, entries, layer.txtar, manifest.json, config.json
//	digest VAR REF             set $VAR to the digest REF points at
//	contentdigest VAR DIR      set $VAR to the content digest of the tree render wrote into DIR, $VAR_SHORT to its first 12 hex digits
//	repositories               print the repositories the registry holds
//	tgz OUT DIR                write DIR's files, in name order, as a gzipped tar
//	zeros DIR N SIZE           write N files of SIZE zero bytes, DIR/zero-00.yaml on
//	sparse OUT NAME SIZE       write a gzipped tar of one sparse file of SIZE bytes
//	bytes FILE TEXT            write TEXT, Go escapes (\x1b, \r, \x00) decoded, to FILE (its name decoded too)
//	replace FILE OLD NEW       replace the first OLD in FILE with NEW
//	inuse FILE NODE NS=N...    mark a snapshot as counting pods, taken now; NS's pods hold N of NODE's accelerators
//	taken FILE AGE CLUSTER     mark a snapshot as taken AGE ago from CLUSTER
//	apiserver                  start etcd and kube-apiserver; $APISERVER is its URL, $ADMIN_KUBECONFIG the admin's
//	kube-nodes FILE            create a snapshot's nodes, Ready, with their capacity
//	kube-pod NS/NAME NODE RESOURCE=N   create a pod bound to NODE holding N of RESOURCE
//	kube-slices FILE           create the ResourceSlices of a list (kubectl's YAML or JSON), as they are
//	kube-user NAME FILE        write a kubeconfig for NAME, a user RBAC grants nothing
//	kube-apply [-env] FILE|DIR...  create the objects of YAML files, CRDs first and waited for; write each document's status through the status subresource; fill in owner references' uids; -env expands $VARS
//	gitrev VAR DIR             set $VAR to DIR's Git revision (<branch>@sha1:<commit>), $VAR_SHORT to it as status prints it
//	workload-items FILE        print a snapshot's items after its nodes and slices as YAML, uids and creation times in words
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs("../../examples/clusters")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := filepath.Abs("../../testdata/nodes")
	if err != nil {
		t.Fatal(err)
	}
	dra, err := filepath.Abs("../../testdata/dra")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			// The examples and the node samples are the script's own
			// copies: messages name them relative to the work directory
			// (examples/gpu-pools/cluster.cue:56:1) wherever the
			// checkout is, and a script may change them.
			for name, dir := range map[string]string{"EXAMPLES": examples, "NODES": nodes, "DRA": dra} {
				copied := filepath.Join(e.WorkDir, strings.ToLower(name))
				if err := os.CopyFS(copied, os.DirFS(dir)); err != nil {
					return err
				}
				e.Setenv(name, copied)
			}
			// No registry credentials from the machine.
			e.Setenv("DOCKER_CONFIG", filepath.Join(e.WorkDir, ".docker"))
			newScriptState(e)
			return nil
		},
		Cmds: scriptCmds,
		Condition: func(cond string) (bool, error) {
			if cond == "cgo" {
				return withCgo, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		UpdateScripts: *testutil.Update,
	})
}

// exitcode N PROG ARGS... runs PROG like exec, keeping its stdout and
// stderr for the next steps, and fails unless it exits N: `! exec` says
// only that a command failed, and accelc's exit code says how (1 input,
// 2 usage, 3 an outside system).
func cmdExitcode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROG ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// runMain runs accelc in-process with args and returns its exit code,
// stdout and stderr, for the Go tests that time or profile a command.
func runMain(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := Main(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}
