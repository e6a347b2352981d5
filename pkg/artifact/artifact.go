// Package artifact packs a rendered tree as the OCI artifact `flux push
// artifact` makes, so Flux's source-controller consumes it unchanged, and
// pushes it to a registry.
//
// The artifact is an OCI image manifest with one gzipped tar layer
// (application/vnd.cncf.flux.content.v1.tar+gzip) and an image config of
// media type application/vnd.cncf.flux.config.v1+json, annotated with
// org.opencontainers.image.source, .revision and .created. It is
// reproducible: the tar lists entries in lexical order with relative slash
// paths, no owners and zero times, and `created` comes from the commit or a
// flag, never the clock, so the same tree pushed twice has one digest.
package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Media types and annotations of a Flux OCI artifact.
const (
	ConfigMediaType  types.MediaType = "application/vnd.cncf.flux.config.v1+json"
	ContentMediaType types.MediaType = "application/vnd.cncf.flux.content.v1.tar+gzip"

	AnnotationSource   = "org.opencontainers.image.source"
	AnnotationRevision = "org.opencontainers.image.revision"
	AnnotationCreated  = "org.opencontainers.image.created"
)

// Metadata annotates the artifact.
type Metadata struct {
	// Source is where the configuration lives (a Git URL).
	Source string
	// Revision is the commit, as Flux writes it: "main@sha1:<commit>".
	Revision string
	// Created is when the content was made: the commit time.
	Created time.Time
	// Annotations are added to the manifest's.
	Annotations map[string]string
}

func (m Metadata) annotations() map[string]string {
	out := maps.Clone(m.Annotations)
	if out == nil {
		out = map[string]string{}
	}
	out[AnnotationCreated] = m.Created.UTC().Format(time.RFC3339)
	if m.Source != "" {
		out[AnnotationSource] = m.Source
	}
	if m.Revision != "" {
		out[AnnotationRevision] = m.Revision
	}
	return out
}

// Build packs dir and returns the artifact image and its tarball.
func Build(dir string, meta Metadata) (v1.Image, []byte, error) {
	var buf bytes.Buffer
	if err := Tarball(dir, &buf); err != nil {
		return nil, nil, err
	}
	layer := static.NewLayer(buf.Bytes(), ContentMediaType)
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, ConfigMediaType)
	img = mutate.Annotations(img, meta.annotations()).(v1.Image)
	img, err := mutate.Append(img, mutate.Addendum{Layer: layer})
	if err != nil {
		return nil, nil, fmt.Errorf("building the artifact: %w", err)
	}
	return img, buf.Bytes(), nil
}

// Tarball writes dir as a gzipped tar, normalized so that the same files
// always give the same bytes: entries in lexical order with paths relative
// to dir, regular files and directories only, owner 0 with no names, zero
// times, and modes 0644 (0755 for directories and executables). Symbolic links and other special files are an error: the
// artifact would not hold what the tree shows.
func Tarball(dir string, w io.Writer) error {
	gw := gzip.NewWriter(w)
	tw := tar.NewWriter(gw)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() && !info.IsDir() {
			return fmt.Errorf("%s: not a regular file or directory (%s): the artifact holds only files", p, info.Mode().Type())
		}
		// Modes too are normalized: a checkout's umask must not change
		// the digest.
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Format: tar.FormatPAX}
		switch {
		case info.IsDir():
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o755
		default:
			hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
			if info.Mode().Perm()&0o111 != 0 {
				hdr.Mode = 0o755
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if info.IsDir() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if n, err := io.Copy(tw, f); err != nil || n != info.Size() {
			return fmt.Errorf("%s: changed while packing (%d of %d bytes): %v", p, n, info.Size(), err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("packing %s: %w", dir, err)
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gw.Close()
}

// Untar reads a gzipped tarball's regular files by slash-separated path.
// Paths that would leave the tree are an error.
func Untar(r io.Reader) (map[string][]byte, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(gz)
	out := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		p := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		if p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) {
			return nil, fmt.Errorf("%s: a path outside the tree", hdr.Name)
		}
		data, err := io.ReadAll(io.LimitReader(tr, 64<<20))
		if err != nil {
			return nil, err
		}
		out[p] = data
	}
}
