package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
)

func newStatusCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		opts   accelc.StatusOptions
		output = cli.OutputFormats(cli.FormatText, cli.FormatJSON, cli.FormatYAML)
	)
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what is true now in the cluster: admission, queues, delivery and drift",
		Long: `status reads the cluster of the current kubeconfig context (or --kubeconfig,
--context) and shows what accelc's objects there report, found by their
app.kubernetes.io/managed-by=accelc label:

  Gatekeeper  each of accelc's constraints (one per enforcement stage in
              use): its action, the audit's violation count and time, and
              the violations it lists by team; how many mutators there are
  Kueue       each team's ClusterQueues (one per profile) with admitted,
              reserving and pending workloads; the team's quota per flavor
              and resource with what is reserved and used; the workloads
              waiting in each of accelc's LocalQueues; the pods holding
              accelerators, in namespaces that queue through Kueue, that
              no admitted Kueue Workload accounts for, and why
  Flux        the OCIRepository's artifact and the Kustomizations' last
              applied revision, with their Ready condition

A system that is not installed is said to be so. With --config CLUSTER_DIR
(the directory render takes), namespaces map to teams through its CUE, and
status renders it (with its inventory.json) to say whether the cluster runs
what the checkout renders: "in sync", or "drift: cluster runs X, the
checkout renders Y". The comparison is by content: the digest that push
writes into the artifact (accelc.io/content-digest), which Flux copies into
the OCIRepository's status, against the digest of the render now; the
commit and accelc's version, which every object is annotated with, do not
count. Without --config, teams come from the cluster's
NamespaceEntitlements and drift is not computed.

The user needs list, cluster-wide, on what status reads; every denial is
named with its API group and resource (exit 3). status changes nothing.`,
		Example: `  accelc status --config clusters/hetero-prod
  accelc status --context prod -o json`,
		Args: cli.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Limits = limitsOf(cmd.Context())
			st, err := accelc.ReadStatus(cmd.Context(), opts)
			if st != nil {
				printDiagnostics(stderr, st.Diagnostics)
			}
			if err != nil {
				return libraryErr(err)
			}
			if output.Value() != cli.FormatText {
				return cli.WriteReport(stdout, output.Value(), st)
			}
			return st.WriteText(stdout)
		},
	}
	f := cmd.Flags()
	bindKubeconfig(cmd, &opts.Live, "")
	f.StringVar(&opts.Config, "config", "", "the cluster's directory, as render takes it: teams from its CUE, and drift against its render")
	_ = cmd.MarkFlagDirname("config")
	output.Register(cmd)
	return cmd
}
