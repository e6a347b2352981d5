package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestGitOpsLoop runs examples/gitops/ci.sh, the documented CI loop, on a
// copy of the example fleet against a registry on 127.0.0.1, as a branch
// build and then as main: so the loop docs/delivery.md walks through cannot rot.
func TestGitOpsLoop(t *testing.T) {
	script, err := filepath.Abs("../../examples/gitops/ci.sh")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Abs("../../examples/clusters")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/gitops",
		Setup: func(e *testscript.Env) error {
			srv := httptest.NewServer(registry.New())
			e.Defer(srv.Close)
			e.Setenv("REGISTRY", "oci://"+strings.TrimPrefix(srv.URL, "http://")+"/accelc")
			e.Setenv("CI_SCRIPT", script)
			e.Setenv("DOCKER_CONFIG", e.WorkDir)
			return os.CopyFS(filepath.Join(e.WorkDir, "clusters"), os.DirFS(examples))
		},
	})
}
