package artifact_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/accelc/accelc/internal/nodegen"
	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/artifact"
	"github.com/accelc/accelc/pkg/render"
)

var (
	benchOnce  sync.Once
	benchDir   string
	benchFiles []string
	benchErr   error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		_ = os.RemoveAll(filepath.Dir(benchDir))
	}
	os.Exit(code)
}

// benchTree renders the hetero-prod tree against a generated 5,000-node
// inventory once per test binary (154 files, 327 KB) and lists its files.
func benchTree(b *testing.B) (string, []string) {
	b.Helper()
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "accelc-bench-push-")
		if err != nil {
			benchErr = err
			return
		}
		benchDir = filepath.Join(dir, "out")
		nodes := filepath.Join(dir, "nodes.json")
		if benchErr = os.WriteFile(nodes, nodegen.List(nodegen.Generated(5000)), 0o644); benchErr != nil {
			return
		}
		res, err := accelc.Cluster(context.Background(), "../../examples/clusters/hetero-prod", accelc.Options{Stages: accelc.Rendered, Inventory: accelc.Source{File: nodes}})
		if err != nil {
			benchErr = err
			return
		}
		if benchErr = res.Tree.Write(benchDir); benchErr != nil {
			return
		}
		benchFiles, _, benchErr = render.RenderedFiles(benchDir)
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchDir, benchFiles
}

// BenchmarkBuild packs the hetero-prod tree rendered against a generated
// 5,000-node inventory and waits for its manifest (so the content digest
// is in).
func BenchmarkBuild(b *testing.B) {
	dir, files := benchTree(b)
	for b.Loop() {
		img, _, err := artifact.Build(dir, files, artifact.Metadata{Created: created})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := img.RawManifest(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPush packs and pushes the hetero-prod tree rendered against a
// generated 5,000-node inventory to the distribution registry on
// 127.0.0.1, each time into a new repository so every blob is uploaded.
// hack/bench-push.sh times the CLI beside `crane append`.
func BenchmarkPush(b *testing.B) {
	dir, files := benchTree(b)
	addr := testutil.Registry(b)
	i := 0
	for b.Loop() {
		i++
		img, _, err := artifact.Build(dir, files, artifact.Metadata{Created: created})
		if err != nil {
			b.Fatal(err)
		}
		ref, err := artifact.ParseURL(fmt.Sprintf("oci://%s/bench-%d:v1", addr, i), false)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := artifact.Push(context.Background(), img, ref, artifact.PushOptions{Keychain: authn.NewMultiKeychain()}); err != nil {
			b.Fatal(err)
		}
	}
}
