package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/accelc"
)

func newVetCmd(_, stderr io.Writer) *cobra.Command {
	var inv inventoryFlags
	cmd := &cobra.Command{
		Use:   "vet [CLUSTER_DIR]",
		Short: "Validate a cluster's configuration and inventory",
		Long: `vet compiles CLUSTER_DIR (default .) and checks it against its inventory
(--inventory, else inventory.json in CLUSTER_DIR when there is one).
It also renders the cluster's objects and checks each as the API server
would (names, label keys and values, annotations, sizes).
It prints nothing and exits 0 when all is well; errors exit 1, each with
the file:line:col it is about; warnings go to stderr and do not fail.`,
		Args:              maxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := loadCluster(cmd.Context(), dirArg(args), &inv, accelc.Options{Render: true}, stderr)
			return err
		},
	}
	inv.bind(cmd, true)
	return cmd
}
