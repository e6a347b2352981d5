package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/accelc"
)

func newVetCmd(stdout, stderr io.Writer) *cobra.Command {
	var inv inventoryFlags
	var explain bool
	cmd := &cobra.Command{
		Use:   "vet [CLUSTER_DIR]",
		Short: "Validate a cluster's configuration and inventory",
		Long: `vet compiles CLUSTER_DIR (default .) and checks it against its inventory
(--inventory, else inventory.json in CLUSTER_DIR when there is one).
It also renders the cluster's objects and checks each as the API server
would (names, label keys and values, annotations, sizes).
It prints nothing and exits 0 when all is well; errors exit 1, each with
the file:line:col it is about; warnings go to stderr and do not fail.

--explain prints, for a configuration that vets, what its settings do to
each team: under fair sharing, how many idle devices of each type a team
may borrow from its cohort and at what weight against the others'; for
a profile with provisioning, which of its flavors wait for the
autoscaler's ProvisioningRequest and which NodePools the capacity comes
from.`,
		Args:              maxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := loadCluster(cmd.Context(), dirArg(args), &inv, accelc.Options{Stages: accelc.Rendered}, stderr)
			if err != nil {
				return err
			}
			warnNoInventory(stderr, res, "the configuration is not checked against any nodes")
			if !explain {
				return nil
			}
			notes := append(res.Model.FairShareNotes(), res.Model.ProvisioningNotes()...)
			if len(notes) == 0 {
				_, err := fmt.Fprintln(stdout, "nothing to explain: no team or cohort sets fairShare, so Kueue lends idle devices first come, first served")
				return err
			}
			for _, n := range notes {
				if _, err := fmt.Fprintln(stdout, n); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&explain, "explain", false, "print what the settings do to each team (fair-share weights and what each team may borrow, ProvisioningRequests before admission)")
	inv.bind(cmd, true)
	return cmd
}
