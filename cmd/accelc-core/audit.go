package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
)

func newAuditCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv    inventoryFlags
		output = cli.OutputFormats(cli.FormatText, cli.FormatJSON, cli.FormatYAML)
		failOn = cli.OneOf("", "deny", "warn", "dryrun")
		file   string
	)
	cmd := &cobra.Command{
		Use:   "audit [CLUSTER_DIR]",
		Short: "What the rendered tree would do to the workloads a cluster runs now",
		Long: `audit renders CLUSTER_DIR (default .) and judges every workload the
cluster runs — from --live (read-only), or from a snapshot taken with
` + "`accelc inventory snapshot --live --workloads`" + ` (--inventory, or --workloads
when the nodes come from elsewhere) — as Gatekeeper's audit will
once the tree is applied. It prints, per team and namespace, the workloads
that would be denied, warned about or only reported at their team's stage
and why; what accelc's mutations would change of their pods once their
namespace denies ("would move off its node's type", "would be queued in
<team>.<profile>"); and which would wait for their team's quota. A
Deployment's replicas, its ReplicaSet and itself are one workload.

With --live, where the cluster serves Kueue, it also lists the pods that
hold accelerators (running, or bound to a node) in the namespaces of a
team with a profile that schedules through Kueue, that no admitted Kueue
Workload accounts for: none is for the pod or its owners (followed by
uid: Pod → Job → JobSet), Kueue has not admitted it, an owner the pod
names does not exist, its owner's Workload asks for fewer devices a pod
than the pod holds, or more pods run than it admits. Kueue's quota counts
none of their devices.

--fail-on deny exits 1 when a workload would be refused, so CI can stop a
commit that would break what runs; warn also on warnings, dryrun on any
violation. Any --fail-on exits 1 on a pod Kueue does not account for, and
on running pods the node layer's changes would evict at their pools'
current stage.`,
		Args:              cli.MaxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := dirArg(args)
			res, err := loadCluster(cmd.Context(), dir, &inv, accelc.Options{Stages: accelc.Rendered}, stderr)
			if err != nil {
				return err
			}
			report, err := accelc.Audit(cmd.Context(), res, inv.src, file)
			if err != nil {
				return libraryErr(err)
			}
			switch output.Value() {
			case cli.FormatJSON, cli.FormatYAML:
				err = cli.WriteReport(stdout, output.Value(), report)
			default:
				err = report.WriteText(stdout)
			}
			if err != nil {
				return err
			}
			if report.Failed(failOn.Value()) {
				if n := report.Totals.Unaccounted; n > 0 {
					return cli.Exit(cli.ExitInput, fmt.Errorf("audit: %d pod(s) hold accelerators that no admitted Kueue Workload accounts for (--fail-on %s)", n, failOn.Value()))
				}
				if n := report.EvictsNow(); n > 0 {
					return cli.Exit(cli.ExitInput, fmt.Errorf("audit: applying the node layer would evict %d running pod(s) (--fail-on %s): see \"nodes\" above, and move their pools' enforcement when they may be evicted", n, failOn.Value()))
				}
				return cli.Exit(cli.ExitInput, fmt.Errorf("audit: workloads would be %s (--fail-on %s)", map[string]string{"deny": "denied", "warn": "denied or warned about", "dryrun": "reported"}[failOn.Value()], failOn.Value()))
			}
			return nil
		},
	}
	inv.bind(cmd, true)
	cmd.Flags().StringVar(&file, "workloads", "", "the workloads' snapshot `FILE`, when they are not in the --inventory file (accelc inventory snapshot --live --workloads)")
	_ = cmd.MarkFlagFilename("workloads", "json", "yaml", "yml")
	output.Register(cmd)
	failOn.Register(cmd, "fail-on", "", "exit 1 when a workload would be: denied (deny), denied or warned about (warn), or has any violation (dryrun)")
	return cmd
}
