// Package artifact packs a rendered tree as the OCI artifact `flux push
// artifact` makes, so Flux's source-controller consumes it unchanged, and
// pushes it to a registry.
//
// The artifact is an OCI image manifest with one gzipped tar layer
// (application/vnd.cncf.flux.content.v1.tar+gzip) and an image config of
// media type application/vnd.cncf.flux.config.v1+json, annotated with
// org.opencontainers.image.source, .revision and .created, and with
// accelc.io/content-digest, the digest of what the tree says
// (ContentDigest), which `accelc status` compares with what a checkout
// renders. It is reproducible: the tar lists entries in lexical order with
// relative slash paths, no owners and zero times, and `created` comes from
// the commit or a flag, never the clock, so the same tree pushed twice has
// one digest.
//
// It packs only the files it is given (render.RenderedFiles lists them),
// so nothing else in the folder, such as a .git, is ever published, and
// the source annotation is rebuilt without credentials (safeurl). Pulling
// reads the layer as a stream within Limits (total size and entries),
// so a hostile artifact cannot exhaust memory.
package artifact

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/accelc/accelc/pkg/fluxmedia"
	"github.com/accelc/accelc/pkg/safeurl"
)

// Media types and annotations of a Flux OCI artifact.
const (
	ConfigMediaType  types.MediaType = fluxmedia.ConfigMediaType
	ContentMediaType types.MediaType = fluxmedia.ContentMediaType

	AnnotationSource   = "org.opencontainers.image.source"
	AnnotationRevision = "org.opencontainers.image.revision"
	AnnotationCreated  = "org.opencontainers.image.created"
)

// Metadata annotates the artifact.
type Metadata struct {
	// Source is where the configuration lives (a Git URL). It is
	// published as safeurl.Source rebuilds it, without credentials,
	// query or fragment, and not at all where it cannot be rebuilt.
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
	// The annotation is public: it is rebuilt from scheme, host and path,
	// and left out where that cannot be done safely, whether it came as
	// Source or among the extra annotations.
	src := m.Source
	if src == "" {
		src = out[AnnotationSource]
	}
	delete(out, AnnotationSource)
	if clean, ok := safeurl.Source(src); ok {
		out[AnnotationSource] = clean
	}
	if m.Revision != "" {
		out[AnnotationRevision] = m.Revision
	}
	return out
}

// Build packs files, slash paths relative to dir, and returns the
// artifact image and its tarball. Only the files listed are packed (with
// the folders that hold them): what else dir holds is left out. The
// manifest is annotated with the content digest of the files packed
// (AnnotationContentDigest), over the bytes the tarball holds.
func Build(dir string, files []string, meta Metadata) (v1.Image, []byte, error) {
	var buf bytes.Buffer
	content := newContentHash()
	if err := tarball(dir, files, &buf, content); err != nil {
		content.sum() // no goroutine outlives Build
		return nil, nil, fmt.Errorf("packing %s: %w", dir, err)
	}
	layer := static.NewLayer(buf.Bytes(), ContentMediaType)
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, ConfigMediaType)
	ann := meta.annotations()
	ann[AnnotationContentDigest] = content.sum()
	img = mutate.Annotations(img, ann).(v1.Image)
	img, err := mutate.Append(img, mutate.Addendum{Layer: layer})
	if err != nil {
		return nil, nil, fmt.Errorf("building the artifact: %w", err)
	}
	return img, buf.Bytes(), nil
}

// Tarball writes files, slash paths relative to dir, and the folders that
// hold them as a gzipped tar, normalized so that the same files always
// give the same bytes: entries in the order a walk of dir meets them
// (lexical, a folder before its content), owner 0 with no names, zero
// times, and modes 0644 (0755 for folders and executables). Every file
// listed must be a regular file inside dir: a link or a special file is
// an error, for the artifact would not hold what the tree shows. Nothing
// that is not listed is read.
func Tarball(dir string, files []string, w io.Writer) error {
	if err := tarball(dir, files, w, nil); err != nil {
		return fmt.Errorf("packing %s: %w", dir, err)
	}
	return nil
}

// tarball writes the tarball; content, when not nil, is given every file
// packed.
func tarball(dir string, files []string, w io.Writer, content *contentHash) error {
	want := map[string]bool{}
	folders := map[string]bool{}
	for _, f := range files {
		if !fs.ValidPath(f) || f == "." {
			return fmt.Errorf("%q: not a path inside the tree", f)
		}
		want[f] = true
		for d := path.Dir(f); d != "."; d = path.Dir(d) {
			folders[d] = true
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	fsys := root.FS()
	gw := gzip.NewWriter(w)
	tw := tar.NewWriter(gw)
	packed := 0
	// Each file is read whole, packed and hashed from the same bytes.
	// Without hashing, one buffer, as large as the largest file, serves
	// every file; with it, each file has its own, for it is hashed while
	// the next ones are packed.
	var shared bytes.Buffer
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		switch {
		case d.IsDir() && !folders[p]:
			return fs.SkipDir
		case d.IsDir():
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: p + "/", Mode: 0o755, Format: tar.FormatPAX})
		case !want[p]:
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: not a regular file (%s): the artifact holds only files", p, d.Type())
		}
		packed++
		f, err := fsys.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file (%s): the artifact holds only files", p, info.Mode().Type())
		}
		// Modes too are normalized: a checkout's umask must not change
		// the digest.
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: p, Size: info.Size(), Mode: 0o644, Format: tar.FormatPAX}
		if info.Mode().Perm()&0o111 != 0 {
			hdr.Mode = 0o755
		}
		buf := &shared
		if content != nil {
			buf = bytes.NewBuffer(make([]byte, 0, info.Size()+bytes.MinRead))
		}
		buf.Reset()
		if n, err := buf.ReadFrom(io.LimitReader(f, info.Size()+1)); err != nil || n != info.Size() {
			return fmt.Errorf("%s: changed while packing (%d of %d bytes): %v", p, n, info.Size(), err)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(buf.Bytes()); err != nil {
			return err
		}
		if content != nil {
			content.add(p, buf.Bytes())
		}
		return nil
	})
	if err != nil {
		return err
	}
	if packed != len(want) {
		var missing []string
		for f := range want {
			if _, err := fs.Lstat(fsys, f); err != nil {
				missing = append(missing, f)
			}
		}
		slices.Sort(missing)
		return fmt.Errorf("%d listed file(s) not found in the tree, or under a link: %s", len(want)-packed, strings.Join(missing, ", "))
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gw.Close()
}
