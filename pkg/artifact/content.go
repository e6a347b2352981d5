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
// normalize gives its bytes for a third to a quarter of the work.
//
// A file in the styles yaml.v2's emitter writes, as every file render
// writes, is read by fastYAML to the value YAMLToJSON would decode it
// to, and encoded once. Any other is read as normalizeSlow reads it
// (sigs.k8s.io/yaml's YAMLToJSON), whose JSON is already canonical, and
// the provenance
// annotations are dropped from that JSON's bytes instead of decoding it
// into maps and encoding it again. Where that round trip would not give
// back the same bytes (a string that was not UTF-8, which the first
// encoding writes as \ufffd and the second as the character itself) or
// might fail (nesting deeper than encoding/json decodes), the round trip
// is made.
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
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return data
	}
	if len(j) == 0 || j[0] != '{' {
		// null (an empty document), a list or a scalar: not one object.
		return data
	}
	if bytes.Contains(j, []byte(`\ufffd`)) {
		return normalizeJSON(data, j)
	}
	out, ok := dropProvenance(j)
	if !ok {
		return normalizeJSON(data, j)
	}
	return out
}

// normalizeSlow is normalize by its definition: YAMLToJSON, decoded and
// encoded again with the provenance annotations deleted.
func normalizeSlow(data []byte) []byte {
	if len(data) > maxNormalize {
		return data
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return data
	}
	return normalizeJSON(data, j)
}

// normalizeJSON decodes YAMLToJSON's j, deletes the provenance
// annotations and encodes it again; data, where j is not one object.
func normalizeJSON(data, j []byte) []byte {
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

// maxFastDepth is the deepest nesting dropProvenance takes on; deeper
// JSON goes the slow way, where encoding/json's own limit (10,000) says
// what happens.
const maxFastDepth = 1000

// dropProvenance removes the provenance annotations from compact JSON as
// encoding/json writes it (no spaces, each key once per object), j an
// object: the members metadata.annotations.<provenance key>, and
// metadata.annotations itself where it is left empty (or was), when
// metadata and annotations are objects. It returns false where j is not
// such JSON or nests deeper than maxFastDepth.
func dropProvenance(j []byte) ([]byte, bool) {
	members, end, ok := objectMembers(j, 0, 0)
	if !ok || end != len(j) {
		return nil, false
	}
	md, found := member(j, members, `"metadata"`)
	if !found || j[md.value] != '{' {
		return j, true
	}
	mdMembers, _, ok := objectMembers(j, md.value, 1)
	if !ok {
		return nil, false
	}
	ann, found := member(j, mdMembers, `"annotations"`)
	if !found || j[ann.value] != '{' {
		return j, true
	}
	annMembers, _, ok := objectMembers(j, ann.value, 2)
	if !ok {
		return nil, false
	}
	kept := annMembers[:0:0]
	for _, m := range annMembers {
		if !isProvenanceKey(j[m.start : m.value-1]) {
			kept = append(kept, m)
		}
	}
	if len(kept) == len(annMembers) && len(kept) > 0 {
		return j, true
	}
	out := make([]byte, 0, len(j))
	out = append(out, j[:md.value]...)
	out = append(out, '{')
	first := true
	for _, m := range mdMembers {
		if m.start == ann.start {
			if len(kept) == 0 {
				continue
			}
			if !first {
				out = append(out, ',')
			}
			first = false
			out = append(out, j[m.start:m.value]...)
			out = appendObject(out, j, kept)
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, j[m.start:m.end]...)
	}
	out = append(out, '}')
	return append(out, j[md.end:]...), true
}

// jsonMember is one member of an object: its key from start, its value
// from value (after the colon) to end.
type jsonMember struct{ start, value, end int }

func member(j []byte, members []jsonMember, quotedKey string) (jsonMember, bool) {
	for _, m := range members {
		if string(j[m.start:m.value-1]) == quotedKey {
			return m, true
		}
	}
	return jsonMember{}, false
}

func isProvenanceKey(quoted []byte) bool {
	if len(quoted) < 2 {
		return false
	}
	for _, k := range ProvenanceAnnotations {
		// The provenance keys need no escaping: encoding/json writes them
		// as they are.
		if string(quoted[1:len(quoted)-1]) == k {
			return true
		}
	}
	return false
}

func appendObject(out, j []byte, members []jsonMember) []byte {
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, j[m.start:m.end]...)
	}
	return append(out, '}')
}

// objectMembers lists the members of the object at j[i] ('{'), depth
// objects deep, and returns the index after it.
func objectMembers(j []byte, i, depth int) ([]jsonMember, int, bool) {
	if i >= len(j) || j[i] != '{' {
		return nil, 0, false
	}
	var members []jsonMember
	i++
	if i < len(j) && j[i] == '}' {
		return members, i + 1, true
	}
	for {
		start := i
		end, ok := skipString(j, i)
		if !ok || end >= len(j) || j[end] != ':' {
			return nil, 0, false
		}
		value := end + 1
		if end, ok = skipValue(j, value, depth+1); !ok || end >= len(j) {
			return nil, 0, false
		}
		members = append(members, jsonMember{start, value, end})
		switch j[end] {
		case ',':
			i = end + 1
		case '}':
			return members, end + 1, true
		default:
			return nil, 0, false
		}
	}
}

// skipString returns the index after the string at j[i] ('"').
func skipString(j []byte, i int) (int, bool) {
	if i >= len(j) || j[i] != '"' {
		return 0, false
	}
	for i++; i < len(j); i++ {
		switch j[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// skipValue returns the index after the value at j[i], which is depth
// objects and arrays deep.
func skipValue(j []byte, i, depth int) (int, bool) {
	if i >= len(j) {
		return 0, false
	}
	switch j[i] {
	case '"':
		return skipString(j, i)
	case '{', '[':
		// Brackets are counted outside strings; encoding/json wrote them,
		// so they match.
		d := depth
		for ; i < len(j); i++ {
			switch j[i] {
			case '"':
				end, ok := skipString(j, i)
				if !ok {
					return 0, false
				}
				i = end - 1
			case '{', '[':
				if d++; d > maxFastDepth {
					return 0, false
				}
			case '}', ']':
				if d--; d == depth {
					return i + 1, true
				}
			}
		}
		return 0, false
	default:
		for ; i < len(j); i++ {
			switch j[i] {
			case ',', '}', ']':
				return i, true
			}
		}
		return i, true
	}
}
