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
		src inventorySource
		out string
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
--max-snapshot-age.`,
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
			tree, err := render.Cluster(m, in)
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
	return cmd
}
