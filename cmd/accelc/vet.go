package main

import (
	"io"

	"github.com/spf13/cobra"
)

func newVetCmd(_, stderr io.Writer) *cobra.Command {
	var src inventorySource
	cmd := &cobra.Command{
		Use:   "vet [CLUSTER_DIR]",
		Short: "Validate a cluster's configuration and inventory",
		Long: `vet compiles CLUSTER_DIR (default .) and checks it against its inventory
(--inventory, else inventory.json in CLUSTER_DIR when there is one).
It prints nothing and exits 0 when all is well; errors exit 1, each with
the file:line:col it is about; warnings go to stderr and do not fail.`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, _, err := loadCluster(cmd.Context(), dirArg(args), &src, stderr)
			return err
		},
	}
	src.bind(cmd, true)
	return cmd
}
