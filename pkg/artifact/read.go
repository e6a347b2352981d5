package artifact

// Reading an artifact's layer back into files, within limits on its size
// and contents.

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
)

// Default limits on reading an artifact. A rendered cluster of 5,000
// nodes is a few hundred files and a few MB; the limits leave room for
// fleets a hundred times that and stop a layer that would unpack to
// gigabytes before it is read.
const (
	DefaultMaxSize  int64 = 256 << 20
	DefaultMaxFiles       = 10_000
)

// Limits bound what reading an artifact's content layer may take. A zero
// field is its default.
type Limits struct {
	// MaxSize is the most bytes the layer's entries may hold together,
	// uncompressed, as their tar headers declare them.
	MaxSize int64
	// MaxFiles is the most entries (files, folders, links) the layer may
	// hold.
	MaxFiles int
}

func (l Limits) withDefaults() Limits {
	if l.MaxSize <= 0 {
		l.MaxSize = DefaultMaxSize
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxFiles
	}
	return l
}

// LimitError is a layer over a limit. It is found from the tar headers,
// before the entry that goes over is read.
type LimitError struct {
	// Files is true for the entry count, false for the size.
	Files bool
	// Headers is true where the tar's headers, long names and padding,
	// on top of the entries' sizes, went over the size limit.
	Headers bool
	// Max is the limit.
	Max int64
	// Path is the entry that went over, as the tar names it.
	Path string
	// Size is that entry's declared size.
	Size int64
}

func (e *LimitError) Error() string {
	if e.Headers {
		return fmt.Sprintf("the layer's tar headers and padding go past the %s limit: not a layer accelc push or flux push artifact made", FormatSize(e.Max))
	}
	if e.Files {
		return fmt.Sprintf("the layer holds more than %d entries (at %s)", e.Max, strconv.Quote(e.Path))
	}
	return fmt.Sprintf("the layer holds more than %s uncompressed (at %s, %s)", FormatSize(e.Max), strconv.Quote(e.Path), FormatSize(e.Size))
}

// ReadOptions say how to read a content layer.
type ReadOptions struct {
	Limits Limits
	// Keep says which files' contents to return; the others are listed
	// with nil contents and read through without being held. Nil keeps
	// every file.
	Keep func(path string) bool
}

// ReadLayer reads a gzipped tar, the content layer of a Flux artifact, and
// returns its regular files by clean slash path (nil contents for those
// opts.Keep does not want). Folders, links and other entries are skipped:
// Flux applies files. The layer is read as a stream and each entry's
// declared size counted before it is read, so a layer over opts.Limits is
// a *LimitError without the excess ever being decompressed into memory.
// A path that would leave the tree is an error.
func ReadLayer(r io.Reader, opts ReadOptions) (map[string][]byte, error) {
	lim := opts.Limits.withDefaults()
	// Headers, long names and padding come on top of the entries' sizes;
	// they too are bounded.
	budget := &capped{r: nil, left: lim.MaxSize + int64(lim.MaxFiles)*16<<10 + maxTrailer}
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a gzipped tar: %w", err)
	}
	budget.r = gz
	tr := tar.NewReader(budget)
	out := map[string][]byte{}
	var total int64
	for entries := 0; ; entries++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errOverBudget) {
			return nil, &LimitError{Headers: true, Max: lim.MaxSize}
		}
		if err != nil {
			return nil, fmt.Errorf("not a readable tar: %w", err)
		}
		if entries >= lim.MaxFiles {
			return nil, &LimitError{Files: true, Max: int64(lim.MaxFiles), Path: hdr.Name}
		}
		// Every entry counts, not only files: the reader decompresses
		// what it skips.
		if hdr.Size < 0 || hdr.Size > lim.MaxSize-total {
			return nil, &LimitError{Max: lim.MaxSize, Path: hdr.Name, Size: hdr.Size}
		}
		total += hdr.Size
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		p := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		if p == "." || p == ".." || strings.HasPrefix(p, "../") || path.IsAbs(p) {
			return nil, fmt.Errorf("%s: a path outside the tree", strconv.Quote(hdr.Name))
		}
		if opts.Keep != nil && !opts.Keep(p) {
			out[p] = nil
			continue
		}
		data := make([]byte, hdr.Size)
		if _, err := io.ReadFull(tr, data); err != nil {
			if errors.Is(err, errOverBudget) {
				return nil, &LimitError{Headers: true, Max: lim.MaxSize}
			}
			return nil, fmt.Errorf("%s: %w", strconv.Quote(hdr.Name), err)
		}
		out[p] = data
	}
	// Read what follows the tar's end (the zeros that fill GNU tar's last
	// record), so that gzip checks its checksum and the registry's reader
	// the digest, but no more than a little.
	if n, err := io.Copy(io.Discard, io.LimitReader(gz, maxTrailer+1)); err != nil {
		return nil, fmt.Errorf("not a readable gzip stream: %w", err)
	} else if n > maxTrailer {
		return nil, fmt.Errorf("more than %s after the tar's end: not a layer accelc push or flux push artifact made", FormatSize(maxTrailer))
	}
	return out, nil
}

// maxTrailer is the most a layer may hold after its tar's end: GNU tar
// fills its last record of 10 KiB (20 blocks) with zeros, and a blocking
// factor of 128 makes 64 KiB.
const maxTrailer = 64 << 10

var errOverBudget = errors.New("over the size limit")

// capped reads r until left bytes have been read, then fails.
type capped struct {
	r    io.Reader
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errOverBudget
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// FormatSize writes a byte count as the flags take it: 256MiB, 1.5GiB,
// 300B.
func FormatSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	f, u := float64(n), 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	if u == 0 || f == float64(int64(f)) {
		return strconv.FormatFloat(f, 'f', 0, 64) + units[u]
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + units[u]
}

// ParseSize reads a byte count: a whole number with an optional unit B,
// KiB, MiB, GiB or TiB (or Ki, Mi, Gi, Ti, as Kubernetes writes them; K,
// M, G, T, KB, MB, GB and TB are powers of 1000).
func ParseSize(s string) (int64, error) {
	num := strings.TrimRight(strings.TrimSpace(s), "BKMGTikb")
	unit := strings.TrimSpace(strings.TrimSpace(s)[len(num):])
	mult := map[string]int64{"": 1, "B": 1,
		"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
		"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "kB": 1e3, "k": 1e3,
	}[unit]
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if mult == 0 || err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q: write a size such as 256MiB or 1GiB", s)
	}
	return n * mult, nil
}
