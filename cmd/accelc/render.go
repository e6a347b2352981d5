package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

func newRenderCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		src                  inventorySource
		out, revision, fleet string
	)
	cmd := &cobra.Command{
		Use:   "render [CLUSTER_DIR] | render --fleet FLEET_DIR",
		Short: "Render a cluster's manifests into a kustomize tree",
		Long: `render compiles CLUSTER_DIR (default .) with its inventory and writes the
cluster's manifests to OUT_DIR (default out/<cluster name>), replacing
what a previous render wrote there. It prints the files it wrote.

The nodes come from --inventory FILE, else CLUSTER_DIR/inventory.json, or
with --live from the cluster itself (kubeconfig as kubectl finds it). A
snapshot taken by accelc records when; render warns when it is older than
--max-snapshot-age.

--fleet FLEET_DIR renders every cluster folder of a fleet repository (each
subfolder whose CUE declares a cluster, with its own inventory.json) in
parallel, into OUT_DIR/<cluster name> (OUT_DIR default out). A cluster
that fails is reported by its folder; the others are still written, and
the exit code is 1.

Every object is annotated with accelc.io/source-revision (--revision, else
the checkout's <branch>@sha1:<commit>) and accelc.io/version, so an object
in a cluster can be traced to the commit that made it; re-rendering the
same commit gives the same files.`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if fleet != "" {
				if len(args) > 0 || src.file != "" || src.live {
					return usageErr("--fleet renders each cluster folder with its own inventory.json: give no CLUSTER_DIR, --inventory or --live")
				}
				return renderFleet(cmd.Context(), fleet, firstNonEmpty(out, "out"), revision, src.maxAge, stdout, stderr)
			}
			written, err := renderOne(cmd.Context(), dirArg(args), func(cluster string) string {
				return firstNonEmpty(out, filepath.Join("out", cluster))
			}, revision, &src, stderr)
			for _, p := range written {
				fmt.Fprintln(stdout, p)
			}
			return err
		},
	}
	src.bind(cmd, true)
	cmd.Flags().StringVarP(&out, "output", "o", "", "output directory (default out/<cluster name>; with --fleet, the parent of each cluster's, default out)")
	cmd.Flags().StringVar(&revision, "revision", "", "the configuration's commit for the accelc.io/source-revision annotation, as <branch>@sha1:<commit> (default: the cluster directory's Git checkout)")
	cmd.Flags().StringVar(&fleet, "fleet", "", "render every cluster folder of this fleet directory, in parallel")
	return cmd
}

// renderOne renders one cluster into outFor(its name) and returns the
// files it wrote.
func renderOne(ctx context.Context, dir string, outFor func(cluster string) string, revision string, src *inventorySource, stderr io.Writer) ([]string, error) {
	m, in, err := loadCluster(ctx, dir, src, stderr)
	if err != nil {
		return nil, err
	}
	if in == nil {
		fmt.Fprintln(stderr, "warning: no inventory (give --inventory, or put inventory.json in the cluster directory): the catalog shows 0 available for every profile")
		in = &inventory.Inventory{}
	}
	if revision == "" {
		revision = gitFacts(dir).revision
	}
	tree, err := render.Cluster(m, in, render.Provenance{Revision: revision, Version: versionString()})
	if err != nil {
		return nil, &exitError{exitInput, err}
	}
	out := outFor(m.Cluster.Name)
	if err := tree.WriteWith(out, render.WriteOptions{Log: stderr}); err != nil {
		return nil, err
	}
	written := make([]string, 0, len(tree))
	for _, p := range tree.Paths() {
		written = append(written, filepath.Join(out, filepath.FromSlash(p)))
	}
	return written, nil
}

// renderFleet renders every cluster folder of fleet in parallel. Output
// and messages come in folder order whatever finishes first.
func renderFleet(ctx context.Context, fleet, outDir, revision string, maxAge time.Duration, stdout, stderr io.Writer) error {
	dirs, err := clusterDirs(fleet)
	if err != nil {
		return &exitError{exitInput, err}
	}
	if len(dirs) == 0 {
		return &exitError{exitInput, fmt.Errorf("%s: no cluster folder (a subfolder whose CUE declares `cluster:`)", fleet)}
	}
	type result struct {
		written []string
		logs    bytes.Buffer
		err     error
	}
	results := make([]result, len(dirs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, dir := range dirs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			r := &results[i]
			src := inventorySource{maxAge: maxAge}
			r.written, r.err = renderOne(ctx, dir, func(cluster string) string { return filepath.Join(outDir, cluster) }, revision, &src, &r.logs)
		})
	}
	wg.Wait()
	failed := 0
	for i, r := range results {
		if r.logs.Len() > 0 {
			for _, line := range strings.SplitAfter(strings.TrimRight(r.logs.String(), "\n"), "\n") {
				fmt.Fprintf(stderr, "%s: %s", dirs[i], strings.TrimSuffix(line, "\n")+"\n")
			}
		}
		if r.err != nil {
			failed++
			fmt.Fprintf(stderr, "%s: %v\n", dirs[i], r.err)
			continue
		}
		for _, p := range r.written {
			fmt.Fprintln(stdout, p)
		}
	}
	if failed > 0 {
		return &exitError{exitInput, fmt.Errorf("%d of %d clusters failed to render", failed, len(dirs))}
	}
	return nil
}

// clusterDirs lists fleet's subfolders whose CUE files declare a cluster
// at the top level, sorted.
func clusterDirs(fleet string) ([]string, error) {
	entries, err := os.ReadDir(fleet)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(fleet, e.Name())
		files, _ := filepath.Glob(filepath.Join(dir, "*.cue"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			file, err := parser.ParseFile(f, data)
			if err != nil {
				continue // vet reports it when the folder is rendered
			}
			if declaresCluster(file) {
				dirs = append(dirs, dir)
				break
			}
		}
	}
	return dirs, nil
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
