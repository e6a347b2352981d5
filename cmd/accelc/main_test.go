package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/accelc/accelc/internal/testutil"
)

// TestLightDeps fences accelc's own commands off from what only
// accelc-core needs: a package linked is a package initialised before
// main, whatever the command.
func TestLightDeps(t *testing.T) {
	testutil.ForbidDeps(t, ".", []string{
		"cuelang.org/",
		"k8s.io/",
		"github.com/open-policy-agent/",
		"github.com/prometheus/",
		"github.com/accelc/accelc/pkg/accelc",
		"github.com/accelc/accelc/pkg/compile",
		"github.com/accelc/accelc/pkg/render",
		"github.com/accelc/accelc/pkg/inventory",
	})
}

// built is accelc, built once into a folder of its own.
func built(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, "accelc")
	cmd := exec.Command("go", "build", "-o", exe, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

// run runs accelc with PATH set to path and returns its exit code and
// output.
func run(t *testing.T, exe, path string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "PATH="+path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// TestFront: version and push run in accelc with no accelc-core
// anywhere; every other command, and a light one given a flag only
// accelc-core has, is handed to the accelc-core beside accelc (else on
// PATH) with the same arguments, standard streams and exit code, and
// accelc's version in its environment; without one, accelc says where it
// looked and how to install it, and exits 3.
func TestFront(t *testing.T) {
	exe := built(t)
	empty := t.TempDir()

	code, stdout, stderr := run(t, exe, empty, "version", "-o", "json")
	var v struct{ Version string }
	if code != 0 || json.Unmarshal([]byte(stdout), &v) != nil || v.Version == "" {
		t.Fatalf("version without accelc-core: exit %d, %q %q", code, stdout, stderr)
	}

	addr := testutil.Registry(t)
	code, stdout, stderr = run(t, exe, empty, "push", "../../testdata/golden/small-lab", "oci://"+addr+"/front/small-lab:v1",
		"--source", "https://example.com/fleet", "--revision", "main@sha1:0123456789abcdef0123456789abcdef01234567", "--created", "2026-11-20T09:30:00Z")
	if code != 0 || !strings.HasPrefix(stdout, "pushed "+addr+"/front/small-lab@sha256:") {
		t.Fatalf("push without accelc-core: exit %d, %q %q", code, stdout, stderr)
	}

	code, _, stderr = run(t, exe, empty, "vet", "examples")
	if code != 3 || !strings.Contains(stderr, "accelc-core, which is neither beside "+exe+" nor on PATH") || !strings.Contains(stderr, "go install github.com/accelc/accelc/cmd/accelc-core@") {
		t.Errorf("vet without accelc-core: exit %d, %q", code, stderr)
	}

	// A stand-in accelc-core that says what it was given: the hand-over
	// is what is under test, not the commands (the e2e tests run the
	// real one through bin/accelc).
	core := filepath.Join(filepath.Dir(exe), "accelc-core")
	script := "#!/bin/sh\nprintf '%s|' \"$@\"; echo \"front=$ACCELC_FRONT_VERSION\" >&2; exit 7\n"
	if err := os.WriteFile(core, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"vet", "examples/clusters/hetero-prod", "-o", "json"},
		{"--cue-timeout", "5s", "render", "x"},
		{"push", "out", "oci://r/x:v1", "--cue-timeout", "5s"},
		{"--help"},
		{"__complete", "push", ""},
		{},
	} {
		code, stdout, stderr = run(t, exe, empty, args...)
		want := "|" // printf with no argument prints its format once
		if len(args) > 0 {
			want = ""
		}
		for _, a := range args {
			want += a + "|"
		}
		if code != 7 || stdout != want || !strings.HasPrefix(stderr, "front=") || stderr == "front=\n" {
			t.Errorf("accelc %q: exit %d, stdout %q (want %q), stderr %q", args, code, stdout, want, stderr)
		}
	}
}
