package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/compile"
)

func newVetCmd(stdout, stderr io.Writer) *cobra.Command {
	var inv inventoryFlags
	var explain bool
	output := cli.OutputFormats(cli.FormatText, cli.FormatJSON, cli.FormatYAML)
	cmd := &cobra.Command{
		Use:   "vet [CLUSTER_DIR]",
		Short: "Validate a cluster's configuration and inventory",
		Long: `vet compiles CLUSTER_DIR (default .) and checks it against its inventory
(--inventory, else inventory.json in CLUSTER_DIR when there is one).
It also renders the cluster's objects and checks each as the API server
would (names, label keys and values, annotations, sizes).
It prints nothing and exits 0 when all is well (-o json or yaml: the
cluster, its inventory and its warnings as a document); errors exit 1, each with
the file:line:col it is about; warnings go to stderr and do not fail.

--explain prints, for a configuration that vets, what its settings do to
each team: under fair sharing, how many idle devices of each type a team
may borrow from its cohort and at what weight against the others', how
profiles' weights split a team's quota between its queues, and how
admission fair sharing orders a team's namespaces; for
a profile with provisioning, which of its flavors wait for the
autoscaler's ProvisioningRequest and which NodePools the capacity comes
from; on a MultiKueue manager, which worker clusters each team's jobs of
each profile are dispatched to.`,
		Args:              cli.MaxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := loadCluster(cmd.Context(), dirArg(args), &inv, accelc.Options{Stages: accelc.Rendered}, stderr)
			if err != nil {
				return err
			}
			warnNoInventory(stderr, res, "the configuration is not checked against any nodes")
			var notes []compile.Diagnostic
			if explain {
				notes = slices.Concat(res.Model.FairShareNotes(), res.Model.AdmissionFairSharingNotes(), res.Model.ProvisioningNotes(), res.Model.MultiKueueNotes())
			}
			if output.Value() != cli.FormatText {
				return cli.WriteReport(stdout, output.Value(), vetReportOf(res, notes))
			}
			if explain && len(notes) == 0 {
				_, err := fmt.Fprintln(stdout, "nothing to explain: no fair sharing (teams', cohorts' or profiles' fairShare, teams' admissionFairSharing), no provisioning and no MultiKueue: Kueue admits first come, first served")
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
	output.Register(cmd)
	cmd.Flags().BoolVar(&explain, "explain", false, "print what the settings do to each team (fair-share weights and what each team may borrow, ProvisioningRequests before admission, MultiKueue dispatch)")
	inv.bind(cmd, true)
	return cmd
}

// vetReport is vet's -o json/yaml document, for a configuration that
// vets (errors exit 1 on stderr, as with text).
type vetReport struct {
	Cluster string `json:"cluster"`
	// Inventory is where the nodes came from; empty without any.
	Inventory string `json:"inventory,omitempty"`
	// Warnings are the warnings also printed on stderr.
	Warnings []string `json:"warnings"`
	// Explain is --explain's notes.
	Explain []string `json:"explain,omitempty"`
}

func vetReportOf(res *accelc.Result, notes []compile.Diagnostic) vetReport {
	r := vetReport{Cluster: res.Model.Cluster.Name, Inventory: res.InventoryFrom, Warnings: []string{}}
	for _, d := range res.Diagnostics {
		r.Warnings = append(r.Warnings, d.String())
	}
	for _, n := range notes {
		r.Explain = append(r.Explain, n.String())
	}
	return r
}
