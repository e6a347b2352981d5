// Package rendered reads a tree that `accelc render` wrote: which of its
// files accelc rendered (the set `accelc push` publishes) and their bytes.
// It needs neither the compiler nor a Kubernetes client, so that push
// starts in a few milliseconds; pkg/render writes the trees it reads.
package rendered

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// HeaderPrefix starts every file accelc renders: the first line is
// "# Rendered by accelc for cluster NAME. …", the same in every file of a
// tree.
const HeaderPrefix = "# Rendered by accelc"

// Folders that the root kustomization leaves out: they are applied on
// their own. constraints/ needs the CRD Gatekeeper creates from the
// template, so it goes after the rest; flux/ is what pulls the tree;
// monitoring/ needs the Prometheus Operator.
const (
	DirConstraints = "constraints"
	DirFlux        = "flux"
	// DirMonitoring holds the PrometheusRule: only where the Prometheus
	// Operator's CRDs are installed.
	DirMonitoring = "monitoring"
)

// Standalone reports whether a folder is left out of the root
// kustomization.
func Standalone(dir string) bool {
	return dir == DirConstraints || dir == DirFlux || dir == DirMonitoring
}

// Tree is what Read found in a rendered tree.
type Tree struct {
	// Files are the files accelc rendered, sorted by path.
	Files []File
	// Extra is everything else in the folder, by slash path, a folder as
	// "name/": never published. ContentFile is not among them.
	Extra []string
	// content is ContentFile's text, where Read found one.
	content []byte
}

// File is one rendered file.
type File struct {
	// Path is the slash path inside the tree.
	Path string
	// Data is the file's content.
	Data []byte
	// Mode is the file's mode as the folder has it.
	Mode fs.FileMode
}

// Files lists the files accelc rendered into dir, by slash path, sorted:
// the root kustomization.yaml, the folders it lists and the standalone
// ones (constraints/, flux/, monitoring/), each folder's
// kustomization.yaml and the files that lists. Each must be a regular
// file, not a link, that starts with accelc's header for the root's
// cluster. It is the set push publishes. Anything else in dir (a .git
// folder, an editor's backup, a file someone added) is returned in extra,
// a folder as "name/", and never in files.
//
// A directory that is not a rendered tree, or whose tree lists a file
// that is missing, a link or not accelc's, is an error: the tree is not
// what accelc rendered, and it should be rendered again.
func Files(dir string) (files, extra []string, err error) {
	t, err := read(dir, false)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range t.Files {
		files = append(files, f.Path)
	}
	return files, t.Extra, nil
}

// Read is Files with each file's content, read once: what push packs and
// hashes. Each file is read whole; the tree's files are Kubernetes
// objects, each under the API server's 1.5 MiB.
func Read(dir string) (*Tree, error) {
	return read(dir, true)
}

func read(dir string, content bool) (*Tree, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	fsys := root.FS()

	const rootKust = "kustomization.yaml"
	head, resources, rootData, err := readKustomization(fsys, rootKust)
	if err != nil {
		return nil, fmt.Errorf("%s: not a tree accelc rendered (%v): push publishes only what `accelc render` wrote; render into an empty folder and push that", dir, err)
	}
	t := &Tree{}
	listed := map[string]bool{rootKust: true}
	add := func(p string, f fileRead) {
		listed[p] = true
		t.Files = append(t.Files, File{Path: p, Data: f.data, Mode: f.mode})
	}
	add(rootKust, rootData)
	folders := slices.Clone(resources)
	for _, d := range []string{DirConstraints, DirFlux, DirMonitoring} {
		if st, err := fs.Stat(fsys, d); err == nil && st.IsDir() && !slices.Contains(folders, d) {
			folders = append(folders, d)
		}
	}
	var errs []error
	for _, folder := range folders {
		if !validRel(folder) {
			errs = append(errs, fmt.Errorf("%s: lists %q, not a folder of the tree", rootKust, folder))
			continue
		}
		if st, err := fs.Lstat(fsys, folder); err != nil || !st.IsDir() {
			errs = append(errs, fmt.Errorf("%s: lists %s, which is not a folder (missing or a link)", rootKust, folder))
			continue
		}
		k := folder + "/" + rootKust
		// The folder's files are opened from the folder: one system call
		// each, not one per path element.
		sub, err := root.OpenRoot(folder)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: lists %s: %w", rootKust, folder, err))
			continue
		}
		h, entries, kdata, err := readKustomization(sub.FS(), rootKust)
		if err != nil {
			sub.Close()
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
			continue
		}
		if h != head {
			sub.Close()
			errs = append(errs, fmt.Errorf("%s: rendered for another cluster than %s", k, rootKust))
			continue
		}
		add(k, kdata)
		for _, e := range entries {
			p := path.Join(folder, e)
			if !validRel(e) || !strings.HasPrefix(p, folder+"/") {
				errs = append(errs, fmt.Errorf("%s: lists %q, not a file of the folder", k, e))
				continue
			}
			f, err := readRendered(sub.FS(), path.Clean(e), head, content)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s (listed in %s): %w", p, k, err))
				continue
			}
			add(p, f)
		}
		sub.Close()
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s is not the tree accelc rendered: render it again:\n%w", dir, errors.Join(errs...))
	}
	// render's record of the content digest is no stray file.
	if c, err := readRegular(fsys, ContentFile, -1); err == nil {
		listed[ContentFile] = true
		if content {
			t.content = c.data
		}
	}
	if t.Extra, err = others(fsys, listed); err != nil {
		return nil, err
	}
	slices.SortFunc(t.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	// A file listed twice (two kustomizations naming it) is one file.
	t.Files = slices.CompactFunc(t.Files, func(a, b File) bool { return a.Path == b.Path })
	return t, nil
}

// others is what else the tree holds, to say what is left out.
func others(fsys fs.FS, listed map[string]bool) ([]string, error) {
	var extra []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		if d.IsDir() {
			for f := range listed {
				if strings.HasPrefix(f, p+"/") {
					return nil
				}
			}
			extra = append(extra, p+"/")
			return fs.SkipDir
		}
		if !listed[p] {
			extra = append(extra, p)
		}
		return nil
	})
	return extra, err
}

// fileRead is a file's mode and, where asked, its content.
type fileRead struct {
	data []byte
	mode fs.FileMode
}

// readKustomization reads a kustomization accelc wrote: its header line
// and its resources.
func readKustomization(fsys fs.FS, p string) (head string, resources []string, f fileRead, err error) {
	f, err = readRegular(fsys, p, -1)
	if err != nil {
		return "", nil, f, err
	}
	head, _, _ = strings.Cut(string(f.data), "\n")
	if !strings.HasPrefix(head, HeaderPrefix) {
		return "", nil, f, errors.New("kustomization.yaml has no accelc header")
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(f.data, &k); err != nil {
		return "", nil, f, fmt.Errorf("not a kustomization: %w", err)
	}
	return head, k.Resources, f, nil
}

// readRendered reads p, a regular file that must start with head: whole
// where content is asked for, else only its header.
func readRendered(fsys fs.FS, p, head string, content bool) (fileRead, error) {
	limit := int64(-1)
	if !content {
		limit = int64(len(head) + 1)
	}
	f, err := readRegular(fsys, p, limit)
	if err != nil {
		return f, err
	}
	if !bytes.HasPrefix(f.data, []byte(head+"\n")) {
		return f, errors.New("not written by accelc (no header, or another cluster's)")
	}
	if !content {
		f.data = nil
	}
	return f, nil
}

// readRegular reads p, all of it or its first limit bytes (limit ≥ 0),
// if it is a regular file; a link, even to a file in the tree, is
// refused: the tree accelc writes has none.
func readRegular(fsys fs.FS, p string, limit int64) (fileRead, error) {
	st, err := fs.Lstat(fsys, p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fileRead{}, errors.New("missing")
		}
		return fileRead{}, err
	}
	if !st.Mode().IsRegular() {
		return fileRead{}, fmt.Errorf("a %s, not a regular file", Kind(st.Mode()))
	}
	file, err := fsys.Open(p)
	if err != nil {
		return fileRead{}, err
	}
	defer file.Close()
	size := st.Size()
	if limit >= 0 {
		size = min(size, limit)
	}
	// Sized as Lstat found it, with room to see a file that grew.
	buf := bytes.NewBuffer(make([]byte, 0, size+bytes.MinRead))
	var r io.Reader = file
	if limit >= 0 {
		r = io.LimitReader(file, limit)
	}
	_, err = buf.ReadFrom(r)
	return fileRead{data: buf.Bytes(), mode: st.Mode()}, err
}

// ReadRegular reads p if it is a regular file, and refuses anything else
// (a link, a folder, a device), naming what it is.
func ReadRegular(fsys fs.FS, p string) ([]byte, error) {
	f, err := readRegular(fsys, p, -1)
	return f.data, err
}

// Kind names a file mode's type for an error: "symbolic link", "folder",
// "named pipe", …
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "folder"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// validRel is a clean relative slash path inside the tree.
func validRel(p string) bool {
	return p != "" && fs.ValidPath(p) && p != "."
}
