package rendered

// The content digest of a rendered tree, and the record of it render
// leaves beside the tree: what the tree says, counted the same whether it
// comes from render's objects, from the files on disk or from a pulled
// artifact.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// ProvenanceAnnotations are the annotations render puts on every object
// to say which commit and which accelc made it (render.AnnotationRevision
// and render.AnnotationVersion). The content digest leaves them out: a new
// commit that changes nothing in a cluster's tree, or another build of
// accelc that renders it the same, has the same content.
var ProvenanceAnnotations = []string{"accelc.io/source-revision", "accelc.io/version"}

// MaxNormalize is the largest file read as YAML; a larger one (no object
// of a rendered tree: the API server stores none over 1.5 MiB) counts byte
// for byte, as `accelc diff` compares it.
const MaxNormalize = 4 << 20

// Normalize is a file as the content digest counts it: one YAML object as
// canonical JSON (sorted keys, numbers as written) without the provenance
// annotations; anything else, or a file over MaxNormalize, as it is.
func Normalize(data []byte) []byte {
	if len(data) > MaxNormalize {
		return data
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return data
	}
	if out, ok := normalizeJSON(j); ok {
		return out
	}
	return data
}

// NormalizeObject is Normalize of the file whose YAML is
// sigs.k8s.io/yaml's JSONToYAML of j, one object's JSON, computed from j
// without reading YAML: what render, which writes each file that way,
// counts for the objects it holds. yamlSize is the size of the file
// written, for MaxNormalize; over it, or where j is not one object, ok is
// false and the file counts as Normalize counts it.
func NormalizeObject(j []byte, yamlSize int) (out []byte, ok bool) {
	if yamlSize > MaxNormalize {
		return nil, false
	}
	return normalizeJSON(j)
}

// normalizeJSON decodes j, one JSON object, keeping numbers as written,
// deletes the provenance annotations and encodes it again with sorted
// keys.
func normalizeJSON(j []byte) ([]byte, bool) {
	d := json.NewDecoder(bytes.NewReader(j))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil || obj == nil || d.More() {
		return nil, false
	}
	dropProvenance(obj)
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, false
	}
	return out, true
}

// dropProvenance deletes metadata.annotations' provenance keys, and
// metadata.annotations where it is left empty (or was).
func dropProvenance(obj map[string]any) {
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

// DigestLine is one file's line of a digest: path, NUL, the hex sha256 of
// data, newline. A path holds no NUL, so the lines sort as their paths do.
func DigestLine(path string, data []byte) string {
	sum := sha256.Sum256(data)
	return path + "\x00" + hex.EncodeToString(sum[:]) + "\n"
}

// SumLines is the digest of a tree's lines, one per file, in any order:
// "sha256:<hex>" of the lines sorted. It sorts lines.
func SumLines(lines []string) string {
	slices.Sort(lines)
	all := sha256.New()
	for _, l := range lines {
		all.Write([]byte(l))
	}
	return "sha256:" + hex.EncodeToString(all.Sum(nil))
}

// ContentFile is the record render writes beside the files of the tree,
// in its root: the tree's content digest and the digest of the bytes it
// was computed for (FilesDigest). It is no file of the tree: neither
// listed by a kustomization nor published, nor reported as a stray file.
const ContentFile = ".accelc-content"

// contentHeader starts ContentFile.
const contentHeader = "# accelc render: the content digest of the files beside this one, and the digest of their bytes it holds for. accelc push publishes it while the bytes are these; edit the tree and push computes it again.\n"

// FilesDigest is the digest of a tree's bytes, files by slash path: cheap
// to compute (sha256 at memory speed, no YAML), it tells whether the files
// are still those a content digest was computed for.
func FilesDigest(files map[string][]byte) string {
	lines := make([]string, 0, len(files))
	for p, data := range files {
		lines = append(lines, DigestLine(p, data))
	}
	return SumLines(lines)
}

// FormatContent is ContentFile's text for a tree of files whose content
// digest is digest.
func FormatContent(digest string, files map[string][]byte) []byte {
	return []byte(contentHeader + "content-digest " + digest + "\nfiles-digest " + FilesDigest(files) + "\n")
}

// content is a ContentFile read.
type content struct {
	digest, files string
}

// parseContent reads a ContentFile.
func parseContent(data []byte) (content, error) {
	var c content
	s := bufio.NewScanner(bytes.NewReader(data))
	for s.Scan() {
		line := s.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "content-digest":
			c.digest = v
		case "files-digest":
			c.files = v
		}
	}
	if !strings.HasPrefix(c.digest, "sha256:") || !strings.HasPrefix(c.files, "sha256:") {
		return c, errors.New("no content-digest and files-digest lines")
	}
	return c, nil
}

// ContentDigest is the tree's content digest as render recorded it in
// ContentFile, where the files read are still those it was computed for
// (their FilesDigest is the one recorded); ok is false where there is no
// record, it is unreadable or the files changed since, and the caller
// computes the digest from the files. why says which of the last two it
// is (empty where there is no record: a tree rendered by an older accelc,
// or packed by hand).
func (t *Tree) ContentDigest() (digest string, ok bool, why string) {
	if t.content == nil {
		return "", false, ""
	}
	c, err := parseContent(t.content)
	if err != nil {
		return "", false, fmt.Sprintf("%s: %v", ContentFile, err)
	}
	files := make(map[string][]byte, len(t.Files))
	for _, f := range t.Files {
		files[f.Path] = f.Data
	}
	if FilesDigest(files) != c.files {
		return "", false, "the files changed since render wrote " + ContentFile
	}
	return c.digest, true, ""
}
