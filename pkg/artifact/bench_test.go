package artifact_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/accelc/accelc/internal/testutil"

	"github.com/accelc/accelc/pkg/artifact"
	"github.com/accelc/accelc/pkg/render"
)

// BenchmarkPush packs and pushes the hetero-prod tree rendered against a
// generated 5,000-node inventory to the distribution registry on
// 127.0.0.1, each time into a new repository so every blob is uploaded.
// hack/bench-push.sh times the CLI beside `crane append`.
func BenchmarkPush(b *testing.B) {
	addr := testutil.Registry(b)
	dir := b.TempDir()
	nodes := filepath.Join(dir, "nodes.json")
	gen, err := exec.Command("go", "run", "../../hack/gennodes", "-n", "5000").Output()
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(nodes, gen, 0o644); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if msg, err := exec.Command("go", "run", "../../cmd/accelc", "render", "../../examples/clusters/hetero-prod", "--inventory", nodes, "-o", out).CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, msg)
	}
	files, _, err := render.RenderedFiles(out)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		img, _, err := artifact.Build(out, files, artifact.Metadata{Created: created})
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
