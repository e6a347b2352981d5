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
	h := newContentHash()
	for p, data := range files {
		h.add(p, data)
	}
	return h.sum()
}

// contentHash accumulates ContentDigest file by file, in any order.
// Reading a file as YAML is most of the cost of a push (some 100 µs for
// each of a 5,000-node tree's files), so add hands each file to a
// goroutine, at most one per CPU, and sum waits for them: packing goes on
// while the files already read are hashed.
type contentHash struct {
	wg    sync.WaitGroup
	slots chan struct{}
	mu    sync.Mutex
	lines []string
}

func newContentHash() *contentHash {
	return &contentHash{slots: make(chan struct{}, runtime.GOMAXPROCS(0))}
}

// add hashes data, which the caller must not change until sum returns.
func (c *contentHash) add(path string, data []byte) {
	c.slots <- struct{}{}
	c.wg.Go(func() {
		defer func() { <-c.slots }()
		sum := sha256.Sum256(normalize(data))
		line := path + "\x00" + hex.EncodeToString(sum[:]) + "\n"
		c.mu.Lock()
		c.lines = append(c.lines, line)
		c.mu.Unlock()
	})
}

// sum waits for the files added and hashes their lines in path order (a
// path holds no NUL, so the order of the lines is the order of the
// paths).
func (c *contentHash) sum() string {
	c.wg.Wait()
	slices.Sort(c.lines)
	all := sha256.New()
	for _, l := range c.lines {
		all.Write([]byte(l))
	}
	return "sha256:" + hex.EncodeToString(all.Sum(nil))
}

// normalize is a file as ContentDigest counts it: one YAML object as
// canonical JSON (sorted keys, numbers as written) without the provenance
// annotations; anything else as it is.
func normalize(data []byte) []byte {
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
	out, err := json.Marshal(obj)
	if err != nil {
		return data
	}
	return out
}
