package render

// The rendered tree: building it with its kustomization and provenance,
// and writing it to a directory atomically.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"github.com/accelc/accelc/pkg/rendered"
)

// Tree is a rendered cluster: file path (slash-separated, relative to the
// output directory) → content.
type Tree map[string][]byte

// Paths returns the tree's paths, sorted.
func (t Tree) Paths() []string {
	out := make([]string, 0, len(t))
	for p := range t {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

// BuildTree marshals objects into files: one per object in its concern
// folder, a kustomization.yaml per folder listing them in accelc's object
// order, and a root kustomization.yaml listing the folders but constraints/
// and flux/, which are applied after the rest and to pull it.
func BuildTree(cluster string, objs []Object, prov Provenance) (Tree, error) {
	t, _, err := buildTree(cluster, objs, prov, false)
	return t, err
}

// BuildTreeContent is BuildTree with the tree's content digest, what
// artifact.ContentDigest computes from the files, computed here from each
// file's JSON, without reading the YAML written.
func BuildTreeContent(cluster string, objs []Object, prov Provenance) (Tree, string, error) {
	return buildTree(cluster, objs, prov, true)
}

// buildTree is BuildTree, with the content digest where content is asked
// for.
func buildTree(cluster string, objs []Object, prov Provenance, content bool) (Tree, string, error) {
	t := Tree{}
	var digest *contentDigest
	if content {
		digest = newContentDigest(len(objs))
	}
	folders := map[string][]string{}
	var order []string
	for i := range objs {
		o := &objs[i]
		b, j, err := o.marshal(cluster, prov)
		if err != nil {
			return nil, "", err
		}
		f := o.File()
		if _, dup := t[f]; dup {
			return nil, "", fmt.Errorf("two objects render to %s: %s names must be unique", f, o.Kind())
		}
		t[f] = b
		digest.add(f, j, b)
		if _, ok := folders[o.Dir]; !ok {
			order = append(order, o.Dir)
		}
		folders[o.Dir] = append(folders[o.Dir], filepath.Base(f))
	}
	sort.Strings(order)
	put := func(path string, resources []string) error {
		j, y, err := marshalYAML(kustomization{APIVersion: "kustomize.config.k8s.io/v1beta1", Kind: "Kustomization", Resources: resources})
		if err != nil {
			return err
		}
		t[path] = append([]byte(header(cluster)), y...)
		digest.add(path, j, t[path])
		return nil
	}
	for _, dir := range order {
		if err := put(dir+"/kustomization.yaml", folders[dir]); err != nil {
			return nil, "", err
		}
	}
	var root []string
	for _, dir := range order {
		if !rendered.Standalone(dir) {
			root = append(root, dir)
		}
	}
	if err := put("kustomization.yaml", root); err != nil {
		return nil, "", err
	}
	return t, digest.sum(), nil
}

// WriteOptions tune Tree.WriteWith.
type WriteOptions struct {
	// Log receives what the write did besides writing the tree (leftovers
	// of an interrupted render it removed); nil discards it.
	Log io.Writer
	// LockTimeout is how long to wait for another render of the same
	// directory to finish; 0 is DefaultLockTimeout.
	LockTimeout time.Duration
	// ContentDigest is the tree's content digest (ClusterContent), which
	// the write records beside the files (rendered.ContentFile) with the
	// digest of their bytes, for push to publish without reading them as
	// YAML. Empty, no record is written.
	ContentDigest string
}

// DefaultLockTimeout is how long a render waits for another render of
// the same output directory.
const DefaultLockTimeout = 2 * time.Minute

// partialMarker is written first into a render's temporary directory (and
// into the previous tree once it is moved aside), so that what an
// interrupted render left is recognisably accelc's.
const partialMarker = ".accelc-partial"

// Write is WriteWith with the default options.
func (t Tree) Write(dir string) error { return t.WriteWith(dir, WriteOptions{}) }

// WriteWith replaces dir with the tree. It writes into a temporary
// sibling and renames it into place, so readers see the old tree or the
// new one and a failure leaves the old one. It refuses to replace a
// directory that is not an accelc output, so a mistyped -o cannot wipe a
// folder.
//
// Renders of one directory are serialised by a lock on <parent>/.<name>.lock
// (flock where the OS has it): a second waits for the first. Holding it,
// a render removes the temporary directories an interrupted render left
// beside dir (named .<name>.tmp-N or .<name>.tmp-N.old and marked as
// accelc's), and says so on opts.Log.
func (t Tree) WriteWith(dir string, opts WriteOptions) error {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	timeout := opts.LockTimeout
	if timeout <= 0 {
		timeout = DefaultLockTimeout
	}
	unlock, err := lockDir(dir, timeout)
	if err != nil {
		return err
	}
	defer unlock()
	if err := removeLeftovers(dir, log); err != nil {
		return err
	}
	if err := checkReplaceable(dir); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer removeOwned(tmp) // no-op after a successful rename
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, partialMarker), nil, 0o644); err != nil {
		return err
	}
	for _, p := range t.Paths() {
		full := filepath.Join(tmp, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, t[p], 0o644); err != nil {
			return err
		}
	}
	if opts.ContentDigest != "" {
		if err := os.WriteFile(filepath.Join(tmp, rendered.ContentFile), rendered.FormatContent(opts.ContentDigest, t), 0o644); err != nil {
			return err
		}
	}
	// The tree is whole: its root kustomization.yaml marks it from here on.
	if err := os.Remove(filepath.Join(tmp, partialMarker)); err != nil {
		return err
	}
	old := ""
	if _, err := os.Stat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("moving the previous %s aside: %w", dir, err)
		}
		_ = os.WriteFile(filepath.Join(old, partialMarker), nil, 0o644)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			_ = os.Remove(filepath.Join(old, partialMarker))
			_ = os.Rename(old, dir)
		}
		return fmt.Errorf("moving the rendered tree into %s: %w", dir, err)
	}
	if old != "" {
		return removeOwned(old)
	}
	return nil
}

// leftoverName matches the temporary directories Write makes beside dir.
func leftoverName(dir string) *regexp.Regexp {
	return regexp.MustCompile(`^\.` + regexp.QuoteMeta(filepath.Base(dir)) + `\.tmp-[0-9]+(\.old)?$`)
}

// removeLeftovers removes what interrupted renders of dir left beside it:
// directories with Write's temporary names that are accelc's (marked
// partial, or a whole rendered tree, or emptied), owned by this user.
// The caller holds dir's lock, so none of them is another render's.
func removeLeftovers(dir string, log io.Writer) error {
	parent := filepath.Dir(dir)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	re := leftoverName(dir)
	for _, e := range entries {
		if !e.IsDir() || !re.MatchString(e.Name()) {
			continue
		}
		p := filepath.Join(parent, e.Name())
		if !isOurs(p) {
			continue
		}
		if err := removeOwned(p); err != nil {
			return fmt.Errorf("removing %s, left by an interrupted render: %w", p, err)
		}
		fmt.Fprintf(log, "removed %s, left by an interrupted render\n", p)
	}
	return nil
}

// isOurs reports whether p is an accelc temporary directory: owned by
// this user and marked partial, holding a rendered tree, or empty.
func isOurs(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil || !fi.IsDir() || !ownedByUs(fi) {
		return false
	}
	if _, err := os.Lstat(filepath.Join(p, partialMarker)); err == nil {
		return true
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return false
	}
	return len(entries) == 0 || isRendered(p)
}

// removeOwned removes a temporary directory, its marker last, so that an
// interruption leaves it recognisable.
func removeOwned(p string) error {
	entries, err := os.ReadDir(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name() == partialMarker {
			continue
		}
		if err := os.RemoveAll(filepath.Join(p, e.Name())); err != nil {
			return err
		}
	}
	return os.RemoveAll(p)
}

// isRendered reports whether dir's root kustomization.yaml is accelc's.
func isRendered(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	return err == nil && bytes.HasPrefix(b, []byte(headerPrefix))
}

// checkReplaceable allows a missing or empty directory, or one whose root
// kustomization.yaml accelc wrote.
func checkReplaceable(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return err
	}
	if isRendered(dir) {
		return nil
	}
	return fmt.Errorf("refusing to replace %s: it is not empty and accelc did not render it; choose another -o or remove it", dir)
}
