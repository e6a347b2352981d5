package artifact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"runtime"
	"slices"
	"sync"

	"sigs.k8s.io/yaml"
)

// AnnotationContentDigest is the manifest annotation that holds the
// digest of the tree's content (ContentDigest). Flux's source-controller
// copies the manifest's annotations into the OCIRepository's
// status.artifact.metadata, so `accelc status` reads there what the
// cluster runs and compares it with what the checkout renders.
const AnnotationContentDigest = "accelc.io/content-digest"

// ProvenanceAnnotations are the annotations render puts on every object
// to say which commit and which accelc made it (render.AnnotationRevision
// and render.AnnotationVersion). The content digest leaves them out: a new
// commit that changes nothing in a cluster's tree, or another build of
// accelc that renders it the same, has the same content.
var ProvenanceAnnotations = []string{"accelc.io/source-revision", "accelc.io/version"}

// maxNormalize is the largest file read as YAML; a larger one (no object
// of a rendered tree: the API server stores none over 1.5 MiB) is hashed
// byte for byte, as `accelc diff` compares it.
const maxNormalize = 4 << 20

// ContentDigest is the digest of a rendered tree's content, files by
// slash path: "sha256:<hex>". It depends on what the files say, not on
// how they were packed: each YAML object counts without comments, key
// order and the provenance annotations (what `accelc diff` ignores too),
// as canonical JSON; a file that is not one YAML object counts byte for
// byte. The same tree always has the same digest, whatever the Go
// version, the tar or gzip encoding, or the commit it was rendered at.
//
// The digest is sha256 over one line per file, in path order:
// path, NUL, the hex sha256 of the file's normalized content, newline.
// The files are normalized on every CPU.
func ContentDigest(files map[string][]byte) string {
	h := newContentHash(len(files))
	for p, data := range files {
		h.add(File{Path: p, Data: data})
	}
	h.close()
	return h.sum()
}

// contentHash accumulates ContentDigest file by file, in any order.
// Reading a file as YAML is much of the cost of a push (some 25 µs for
// each of a 5,000-node tree's files), so the files added are normalized
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
				sum := sha256.Sum256(normalize(f.Data))
				c.lines[w] = append(c.lines[w], f.Path+"\x00"+hex.EncodeToString(sum[:])+"\n")
			}
		})
	}
	c.sum = sync.OnceValue(func() string {
		c.close()
		c.wg.Wait()
		// One line per file, "path NUL hex-sha256 newline", in the order
		// of the lines, which is the order of the paths (a path holds no
		// NUL).
		lines := slices.Concat(c.lines...)
		slices.Sort(lines)
		all := sha256.New()
		for _, l := range lines {
			all.Write([]byte(l))
		}
		return "sha256:" + hex.EncodeToString(all.Sum(nil))
	})
	return c
}

// add queues a file, whose contents must not change until sum returns.
func (c *contentHash) add(f File) { c.queue <- f }

// close says that every file is added.
func (c *contentHash) close() { c.closeOnce.Do(func() { close(c.queue) }) }

// normalize is a file as ContentDigest counts it: one YAML object as
// canonical JSON (sorted keys, numbers as written) without the provenance
// annotations; anything else as it is. normalizeSlow is the definition;
// normalize gives its bytes for a third to a quarter of the work on what
// render writes: a file in the styles yaml.v2's emitter writes is read by
// fastYAML to the value YAMLToJSON would decode it to, and encoded once.
// Any other file is normalizeSlow's.
func normalize(data []byte) []byte {
	if len(data) > maxNormalize {
		return data
	}
	if v, ok := fastYAML(data); ok {
		if obj, ok := v.(map[string]any); ok {
			dropProvenanceMap(obj)
			if out, err := json.Marshal(obj); err == nil {
				return out
			}
		}
	}
	return normalizeSlow(data)
}

// normalizeSlow is normalize by its definition: YAMLToJSON, decoded and
// encoded again with the provenance annotations deleted; data itself
// where that is not one object.
func normalizeSlow(data []byte) []byte {
	if len(data) > maxNormalize {
		return data
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return data
	}
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil || obj == nil || d.More() {
		return data
	}
	dropProvenanceMap(obj)
	out, err := json.Marshal(obj)
	if err != nil {
		return data
	}
	return out
}

// dropProvenanceMap deletes metadata.annotations' provenance keys, and
// metadata.annotations where it is left empty (or was).
func dropProvenanceMap(obj map[string]any) {
	if md, ok := obj["metadata"].(map[string]any); ok {
		if ann, ok := md["annotations"].(map[string]any); ok {
			for _, k := range ProvenanceAnnotations {
				delete(ann, k)
			}
			if len(ann) == 0 {
				delete(md, "annotations")
			}
		}
	}
}
