package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/compile"
)

// Main runs accelc with args and returns the exit code (cli.Execute).
func Main(args []string, stdout, stderr io.Writer) int {
	cli.CheckFront(stderr)
	quietClientGo()
	return cli.Execute(newRoot(stdout, stderr), args, stderr)
}

// newRoot is accelc with every command.

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := cli.NewRoot(stdout, stderr)
	root.AddCommand(
		newVetCmd(stdout, stderr),
		newRenderCmd(stdout, stderr),
		newTestCmd(stdout, stderr),
		newAuditCmd(stdout, stderr),
		newInventoryCmd(stdout, stderr),
		newCatalogCmd(stdout, stderr),
		newRecommendCmd(stdout, stderr),
		newEstimateCmd(stdout, stderr),
		cli.NewPushCmd(stdout, stderr),
		newDiffCmd(stdout, stderr),
		newStatusCmd(stdout, stderr),
		newCostCmd(stdout, stderr),
		newServeCmd(stdout, stderr),
		cli.NewVersionCmd(stdout),
		newInitCmd(stdout, stderr),
		newTypesCmd(stdout),
	)
	bindLimits(root)
	return root
}

func dirArg(args []string) string {
	if len(args) == 0 {
		return "."
	}
	return args[0]
}

// limitsKey carries the root's --cue-* limits to the commands through
// their context.
type limitsKey struct{}

// bindLimits adds the CUE evaluation limits to root and puts them into
// the context of the command that runs.
func bindLimits(root *cobra.Command) {
	var (
		lim    compile.Limits
		maxMem string
	)
	root.PersistentFlags().DurationVar(&lim.Timeout, "cue-timeout", compile.DefaultTimeout, "how long the CUE evaluation of a cluster may take before it is an input error")
	root.PersistentFlags().StringVar(&maxMem, "cue-max-memory", "1Gi", "how much memory the CUE evaluation of a cluster may take before it is an input error (a quantity: 512Mi, 2Gi)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		q, err := resource.ParseQuantity(maxMem)
		if err != nil || q.Sign() <= 0 {
			return cli.UsageErr("--cue-max-memory %q: give a positive quantity such as 512Mi or 2Gi", maxMem)
		}
		if lim.Timeout <= 0 {
			return cli.UsageErr("--cue-timeout %s: give a positive duration such as 30s or 2m", lim.Timeout)
		}
		lim.MaxMemory = uint64(q.Value())
		cmd.SetContext(context.WithValue(cmd.Context(), limitsKey{}, lim))
		return nil
	}
}

// limitsOf is the --cue-* limits of the running command.
func limitsOf(ctx context.Context) compile.Limits {
	lim, _ := ctx.Value(limitsKey{}).(compile.Limits)
	return lim
}
