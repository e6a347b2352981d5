package render

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"sigs.k8s.io/yaml"
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
	t := Tree{}
	folders := map[string][]string{}
	var order []string
	for i := range objs {
		o := &objs[i]
		b, err := o.Marshal(cluster, prov)
		if err != nil {
			return nil, err
		}
		f := o.File()
		if _, dup := t[f]; dup {
			return nil, fmt.Errorf("two objects render to %s: %s names must be unique", f, o.Kind)
		}
		t[f] = b
		if _, ok := folders[o.Dir]; !ok {
			order = append(order, o.Dir)
		}
		folders[o.Dir] = append(folders[o.Dir], filepath.Base(f))
	}
	sort.Strings(order)
	put := func(path string, resources []string) error {
		b, err := yaml.Marshal(kustomization{APIVersion: "kustomize.config.k8s.io/v1beta1", Kind: "Kustomization", Resources: resources})
		if err != nil {
			return err
		}
		t[path] = append([]byte(header(cluster)), b...)
		return nil
	}
	for _, dir := range order {
		if err := put(dir+"/kustomization.yaml", folders[dir]); err != nil {
			return nil, err
		}
	}
	var root []string
	for _, dir := range order {
		if !standalone(dir) {
			root = append(root, dir)
		}
	}
	if err := put("kustomization.yaml", root); err != nil {
		return nil, err
	}
	return t, nil
}

// Write replaces dir with the tree. It writes into a temporary sibling
// and renames it into place, so readers see the old tree or the new one
// and a failure leaves the old one. It refuses to replace a directory
// that is not an accelc output, so a mistyped -o cannot wipe a folder.
func (t Tree) Write(dir string) error {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	if err := checkReplaceable(dir); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // no-op after a successful rename
	if err := os.Chmod(tmp, 0o755); err != nil {
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
	old := ""
	if _, err := os.Stat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			_ = os.Rename(old, dir)
		}
		return err
	}
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
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
	b, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err == nil && bytes.HasPrefix(b, []byte("# Rendered by accelc")) {
		return nil
	}
	return fmt.Errorf("refusing to replace %s: it is not empty and accelc did not render it; choose another -o or remove it", dir)
}
