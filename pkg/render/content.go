package render

// The content digest of a tree, computed where the objects are: from the
// JSON each file's YAML was written from, so that nothing reads back the
// YAML just written.

import (
	"runtime"
	"sync"

	"github.com/accelc/accelc/pkg/rendered"
)

// contentDigest gathers a tree's files as they are built and sums them
// as artifact.ContentDigest does (rendered.Normalize of each file), from
// their JSON. A nil contentDigest gathers nothing: BuildTree's.
type contentDigest struct {
	files []builtFile
}

// builtFile is one file of the tree: its path, the JSON its YAML was
// written from, and the file written.
type builtFile struct {
	path       string
	json, file []byte
}

func newContentDigest(n int) *contentDigest {
	return &contentDigest{files: make([]builtFile, 0, n)}
}

func (c *contentDigest) add(path string, json, file []byte) {
	if c != nil {
		c.files = append(c.files, builtFile{path, json, file})
	}
}

// sum is the content digest of the files added ("" for a nil
// contentDigest), each normalized on one of the CPUs.
func (c *contentDigest) sum() string {
	if c == nil {
		return ""
	}
	lines := make([]string, len(c.files))
	workers := min(max(runtime.GOMAXPROCS(0), 1), len(c.files))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(c.files); i += workers {
				f := c.files[i]
				norm, ok := rendered.NormalizeObject(f.json, len(f.file))
				if !ok {
					norm = rendered.Normalize(f.file)
				}
				lines[i] = rendered.DigestLine(f.path, norm)
			}
		})
	}
	wg.Wait()
	return rendered.SumLines(lines)
}
