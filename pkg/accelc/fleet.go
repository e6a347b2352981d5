package accelc

// Fleets: the cluster directories of a fleet, each read as a cluster.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
)

// FleetCluster is one cluster folder of a fleet, loaded.
type FleetCluster struct {
	Dir    string
	Result *Result
	// Err is why the folder did not load; the fleet's other clusters are
	// loaded all the same.
	Err error
}

// Fleet loads every cluster folder of a fleet repository (ClusterDirs),
// each with its own inventory.json, in parallel, and returns them in
// folder order whatever finishes first. opts.Inventory.File and Live are
// not used: each folder reads its own.
func Fleet(ctx context.Context, fleet string, opts Options) ([]FleetCluster, error) {
	dirs, err := ClusterDirs(fleet)
	if err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%s: no cluster folder (a subfolder whose CUE declares `cluster:`)", fleet)
	}
	opts.Inventory.File, opts.Inventory.Live = "", false
	out := make([]FleetCluster, len(dirs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, dir := range dirs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i].Dir = dir
			out[i].Result, out[i].Err = Cluster(ctx, dir, opts)
		})
	}
	wg.Wait()
	checkFleetMultiKueue(out)
	return out, nil
}

// ClusterDirs lists fleet's subfolders whose CUE files declare a cluster
// at the top level, sorted, as paths under fleet (ClusterNames).
func ClusterDirs(fleet string) ([]string, error) {
	names, err := ClusterNames(os.DirFS(fleet))
	if err != nil {
		return nil, err
	}
	dirs := make([]string, len(names))
	for i, n := range names {
		dirs[i] = filepath.Join(fleet, n)
	}
	return dirs, nil
}

// ClusterNames lists the folders at the top of fsys (a fleet repository)
// whose CUE files declare a cluster at the top level, sorted. Hidden
// folders are passed over, and so is a file that does not parse: loading
// its folder reports it.
func ClusterNames(fsys fs.FS) ([]string, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		files, _ := fs.Glob(fsys, path.Join(e.Name(), "*.cue"))
		for _, f := range files {
			data, err := fs.ReadFile(fsys, f)
			if err != nil {
				return nil, err
			}
			file, err := parser.ParseFile(f, data)
			if err != nil {
				continue
			}
			if declaresCluster(file) {
				names = append(names, e.Name())
				break
			}
		}
	}
	return names, nil
}

func declaresCluster(f *ast.File) bool {
	for _, d := range f.Decls {
		if field, ok := d.(*ast.Field); ok {
			if name, _, _ := ast.LabelName(field.Label); name == "cluster" {
				return true
			}
		}
	}
	return false
}
