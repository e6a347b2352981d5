package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

func newRenderCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		src           inventorySource
		out, revision string
	)
	cmd := &cobra.Command{
		Use:   "render [CLUSTER_DIR]",
		Short: "Render a cluster's manifests into a kustomize tree",
		Long: `render compiles CLUSTER_DIR (default .) with its inventory and writes the
cluster's manifests to OUT_DIR (default out/<cluster name>), replacing
what a previous render wrote there. It prints the files it wrote.

The nodes come from --inventory FILE, else CLUSTER_DIR/inventory.json, or
with --live from the cluster itself (kubeconfig as kubectl finds it). A
snapshot taken by accelc records when; render warns when it is older than
--max-snapshot-age.

Every object is annotated with accelc.io/source-revision (--revision, else
the checkout's <branch>@sha1:<commit>) and accelc.io/version, so an object
in a cluster can be traced to the commit that made it; re-rendering the
same commit gives the same files.`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, in, err := loadCluster(cmd.Context(), dirArg(args), &src, stderr)
			if err != nil {
				return err
			}
			if in == nil {
				fmt.Fprintln(stderr, "warning: no inventory (give --inventory, or put inventory.json in the cluster directory): the catalog shows 0 available for every profile")
				in = &inventory.Inventory{}
			}
			if revision == "" {
				revision = gitFacts(dirArg(args)).revision
			}
			tree, err := render.Cluster(m, in, render.Provenance{Revision: revision, Version: versionString()})
			if err != nil {
				return &exitError{exitInput, err}
			}
			if out == "" {
				out = filepath.Join("out", m.Cluster.Name)
			}
			if err := tree.Write(out); err != nil {
				return err
			}
			for _, p := range tree.Paths() {
				fmt.Fprintln(stdout, filepath.Join(out, filepath.FromSlash(p)))
			}
			return nil
		},
	}
	src.bind(cmd, true)
	cmd.Flags().StringVarP(&out, "output", "o", "", "output directory (default out/<cluster name>)")
	cmd.Flags().StringVar(&revision, "revision", "", "the configuration's commit for the accelc.io/source-revision annotation, as <branch>@sha1:<commit> (default: the cluster directory's Git checkout)")
	return cmd
}
