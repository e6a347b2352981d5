//go:build e2e

package e2e

import (
	"archive/tar"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/accelc/accelc/internal/testutil"
)

// TestImage builds accelc's image the way `make image` does, with ko and
// no Docker daemon, onto a base that holds nothing (accelc is static), and
// pushes it to docker-registry on 127.0.0.1; then it pulls the image,
// takes the binary out of its layers and runs the catalog service's
// command line with it.
func TestImage(t *testing.T) {
	root := repoRoot(t)
	ko := program(t, root, filepath.Join("bin", "ko"), "e2e")
	registry := testutil.Registry(t)

	base, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: "linux", Architecture: "amd64", RootFS: v1.RootFS{Type: "layers"}})
	if err != nil {
		t.Fatal(err)
	}
	baseRef, err := name.ParseReference(registry+"/accelc/base:static", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(baseRef, base); err != nil {
		t.Fatalf("pushing the empty base: %v", err)
	}

	cmd := exec.CommandContext(t.Context(), ko, "build", "./cmd/accelc-core", "--bare", "--platform=linux/amd64", "--sbom=none", "--tags", "e2e", "--insecure-registry")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "KO_DOCKER_REPO="+registry+"/accelc/accelc", "KO_DEFAULTBASEIMAGE="+baseRef.String(), "KOCACHE="+t.TempDir())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ko build: %v\n%s", err, stderr.String())
	}
	published := strings.TrimSpace(string(out))
	if !strings.Contains(published, "@sha256:") {
		t.Fatalf("ko build printed %q, want the image by digest", published)
	}
	t.Logf("ko built and pushed %s", published)

	ref, err := name.ParseReference(published, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(ref)
	if err != nil {
		t.Fatalf("pulling %s: %v", published, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cfg.Config.Entrypoint, " "); got != "/ko-app/accelc-core" {
		t.Errorf("entrypoint %q, want /ko-app/accelc-core", got)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("platform %s/%s, want linux/amd64", cfg.OS, cfg.Architecture)
	}

	// The image's files: the binary, and nothing that runs beside it.
	bin := filepath.Join(t.TempDir(), "accelc")
	var files []string
	tr := tar.NewReader(mutate.Extract(img))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			files = append(files, h.Name)
		}
		if h.Name == "ko-app/accelc-core" || h.Name == "/ko-app/accelc-core" {
			f, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, f := range files {
		if strings.HasPrefix(strings.TrimPrefix(f, "/"), "bin/") || strings.HasSuffix(f, "/sh") {
			t.Errorf("the image holds %s: accelc's image holds the binary alone", f)
		}
	}
	help, err := exec.CommandContext(t.Context(), bin, "serve", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("the image's accelc serve --help: %v\n%s", err, help)
	}
	for _, want := range []string{"--live", "--reload", "--listen"} {
		if !strings.Contains(string(help), want) {
			t.Errorf("the image's accelc serve --help does not name %s", want)
		}
	}
	t.Logf("the image holds %d file(s) (%s); its accelc runs the catalog service's command line", len(files), strings.Join(files, ", "))
}
