package render

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

// headerPrefix starts every file accelc renders (see header); Write
// replaces only a directory whose root kustomization.yaml starts with it.
const headerPrefix = "# Rendered by accelc"

// RenderedFiles lists the files accelc rendered into dir, by slash path,
// sorted: the root kustomization.yaml, the folders it lists and the
// standalone ones (constraints/, flux/, monitoring/), each folder's
// kustomization.yaml and the files that lists. Each must be a regular
// file, not a link, that starts with accelc's header for the root's
// cluster. It is the set push publishes. Anything else in dir (a .git
// folder, an editor's backup, a file someone added) is returned in extra,
// a folder as "name/", and never in files.
//
// A directory that is not a rendered tree, or whose tree lists a file
// that is missing, a link or not accelc's, is an error: the tree is not
// what accelc rendered, and it should be rendered again.
func RenderedFiles(dir string) (files, extra []string, err error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	fsys := root.FS()

	const rootKust = "kustomization.yaml"
	head, resources, err := readKustomization(fsys, rootKust)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: not a tree accelc rendered (%v): push publishes only what `accelc render` wrote; render into an empty folder and push that", dir, err)
	}
	listed := map[string]bool{rootKust: true}
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
		h, entries, err := readKustomization(fsys, k)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
			continue
		}
		if h != head {
			errs = append(errs, fmt.Errorf("%s: rendered for another cluster than %s", k, rootKust))
			continue
		}
		listed[k] = true
		for _, e := range entries {
			p := path.Join(folder, e)
			if !validRel(e) || !strings.HasPrefix(p, folder+"/") {
				errs = append(errs, fmt.Errorf("%s: lists %q, not a file of the folder", k, e))
				continue
			}
			if err := checkRendered(fsys, p, head); err != nil {
				errs = append(errs, fmt.Errorf("%s (listed in %s): %w", p, k, err))
				continue
			}
			listed[p] = true
		}
	}
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("%s is not the tree accelc rendered: render it again:\n%w", dir, errors.Join(errs...))
	}
	// What else is there, to say what is left out.
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
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
	if err != nil {
		return nil, nil, err
	}
	for f := range listed {
		files = append(files, f)
	}
	slices.Sort(files)
	return files, extra, nil
}

// readKustomization reads a kustomization accelc wrote: its header line
// and its resources.
func readKustomization(fsys fs.FS, p string) (head string, resources []string, err error) {
	data, err := readRegular(fsys, p)
	if err != nil {
		return "", nil, err
	}
	head, _, _ = strings.Cut(string(data), "\n")
	if !strings.HasPrefix(head, headerPrefix) {
		return "", nil, errors.New("kustomization.yaml has no accelc header")
	}
	var k kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return "", nil, fmt.Errorf("not a kustomization: %w", err)
	}
	return head, k.Resources, nil
}

// checkRendered checks that p is a regular file that starts with head.
func checkRendered(fsys fs.FS, p, head string) error {
	f, err := openRegular(fsys, p)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, len(head)+1)
	if _, err := io.ReadFull(f, buf); err != nil || !bytes.Equal(buf, []byte(head+"\n")) {
		return errors.New("not written by accelc (no header, or another cluster's)")
	}
	return nil
}

func readRegular(fsys fs.FS, p string) ([]byte, error) {
	f, err := openRegular(fsys, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// openRegular opens p if it is a regular file; a link, even to a file in
// the tree, is refused: the tree accelc writes has none.
func openRegular(fsys fs.FS, p string) (fs.File, error) {
	st, err := fs.Lstat(fsys, p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errors.New("missing")
		}
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("a %s, not a regular file", kind(st.Mode()))
	}
	return fsys.Open(p)
}

// kind names a file mode's type for an error.
func kind(m fs.FileMode) string {
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
