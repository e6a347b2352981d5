package artifact

// The content digest of a tree packed from its files, where render's
// record of it (rendered.ContentFile) is missing or no longer holds.

import (
	"runtime"
	"slices"
	"sync"

	"github.com/accelc/accelc/pkg/rendered"
)

// AnnotationContentDigest is the manifest annotation that holds the
// digest of the tree's content (ContentDigest). Flux's source-controller
// copies the manifest's annotations into the OCIRepository's
// status.artifact.metadata, so `accelc status` reads there what the
// cluster runs and compares it with what the checkout renders.
const AnnotationContentDigest = "accelc.io/content-digest"

// ProvenanceAnnotations are the annotations the content digest leaves
// out (rendered.ProvenanceAnnotations).
var ProvenanceAnnotations = rendered.ProvenanceAnnotations

// ContentDigest is the digest of a rendered tree's content, files by
// slash path: "sha256:<hex>". It depends on what the files say, not on
// how they were packed: each YAML object counts without comments, key
// order and the provenance annotations (what `accelc diff` ignores too),
// as canonical JSON; a file that is not one YAML object counts byte for
// byte. The same tree always has the same digest, whatever the Go
// version, the tar or gzip encoding, or the commit it was rendered at.
//
// The digest is sha256 over one line per file, in path order:
// path, NUL, the hex sha256 of the file's normalized content
// (rendered.Normalize), newline. The files are normalized on every CPU.
// render computes the same digest from the objects it writes and records
// it beside the tree; push publishes that record while the files are
// those it was computed for (Metadata.ContentDigest), and this otherwise.
func ContentDigest(files map[string][]byte) string {
	h := newContentHash(len(files))
	for p, data := range files {
		h.add(File{Path: p, Data: data})
	}
	h.close()
	return h.sum()
}

// contentHash accumulates ContentDigest file by file, in any order.
// Reading a file as YAML is most of the cost of packing a tree render's
// record does not cover, so the files added are normalized
// by one goroutine per CPU while the caller goes on (reading the next
// files, packing the tarball, uploading it), and sum waits for them. The
// workers end once close is called and the files are hashed, whether sum
// is called or not.
type contentHash struct {
	queue     chan File
	closeOnce sync.Once
	wg        sync.WaitGroup
	lines     [][]string // each worker's
	sum       func() string
}

// newContentHash starts the workers; n is how many files are coming (a
// hint).
func newContentHash(n int) *contentHash {
	c := &contentHash{queue: make(chan File, max(n, 1))}
	workers := max(runtime.GOMAXPROCS(0), 1)
	c.lines = make([][]string, workers)
	for w := range workers {
		c.wg.Go(func() {
			for f := range c.queue {
				c.lines[w] = append(c.lines[w], rendered.DigestLine(f.Path, rendered.Normalize(f.Data)))
			}
		})
	}
	c.sum = sync.OnceValue(func() string {
		c.close()
		c.wg.Wait()
		return rendered.SumLines(slices.Concat(c.lines...))
	})
	return c
}

// add queues a file, whose contents must not change until sum returns.
func (c *contentHash) add(f File) { c.queue <- f }

// close says that every file is added.
func (c *contentHash) close() { c.closeOnce.Do(func() { close(c.queue) }) }
