package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/pkg/compile"
)

// Exit codes (docs/cli.md): 0 ok, 1 the input is wrong, 2 usage error,
// 3 an outside system failed.
const (
	exitOK      = 0
	exitInput   = 1
	exitUsage   = 2
	exitOutside = 3
)

// exitError carries the exit code an error maps to.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, args ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, args...)}
}

// Main runs accelc with args and returns the exit code. It is the one
// place that prints errors. Every usage error reaches it as an exitError
// with exitUsage: flags through the flag error function, arguments through
// each command's Args, unknown commands through the root's RunE.
func Main(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	code := exitInput
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	fmt.Fprintln(stderr, strings.TrimRight(err.Error(), "\n"))
	if code == exitUsage {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "accelc",
		Short: "Compile accelerator classes, hardware profiles and entitlements into Kubernetes policy",
		Long: `accelc compiles a cluster's accelerator configuration, written in CUE, and
its node inventory (a snapshot, a live cluster, or NVML on a node) into
Kubernetes manifests: NFD rules that label every node with its accelerator
type, Open Data Hub HardwareProfiles that target those types, Gatekeeper
policies and mutations that enforce them, Kueue queues and priority tiers
for team quotas, cost-attribution rules, a hardware catalog, and the Flux
objects that apply it all once ` + "`accelc push`" + ` has published it.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE:          runGroup,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(
		newVetCmd(stdout, stderr),
		newRenderCmd(stdout, stderr),
		newTestCmd(stdout, stderr),
		newAuditCmd(stdout, stderr),
		newInventoryCmd(stdout, stderr),
		newCatalogCmd(stdout, stderr),
		newRecommendCmd(stdout, stderr),
		newEstimateCmd(stdout, stderr),
		newPushCmd(stdout, stderr),
		newDiffCmd(stdout, stderr),
		newStatusCmd(stdout, stderr),
		newCostCmd(stdout, stderr),
		newServeCmd(stdout, stderr),
		newVersionCmd(stdout),
		newInitCmd(stdout, stderr),
		newTypesCmd(stdout),
	)
	bindLimits(root)
	return root
}

// flagError makes a flag that cannot be parsed a usage error, worded as
// accelc's own checks word theirs: "-o xml: choose one of text, json".
func flagError(_ *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	if errors.As(err, &iv) {
		name := "--" + iv.GetFlag().Name
		if sh := iv.GetFlag().Shorthand; sh != "" {
			name = "-" + sh
		}
		err = fmt.Errorf("%s %s: %w", name, iv.GetValue(), errors.Unwrap(iv))
	}
	return &exitError{exitUsage, err}
}

// maxArgs is cobra.MaximumNArgs with a usage exit code.
func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usageErr("%s takes at most %d argument(s), got %d: %s", cmd.CommandPath(), n, len(args), strings.Join(args, " "))
		}
		return nil
	}
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErr("%s takes no arguments, got %s", cmd.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

// runGroup is the RunE of a command that only holds subcommands (with
// Args cobra.ArbitraryArgs): a word that names none of them is a usage
// error, where cobra would print the help page and exit 0; no word
// prints the help page.
func runGroup(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErr("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	return cmd.Help()
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
			return usageErr("--cue-max-memory %q: give a positive quantity such as 512Mi or 2Gi", maxMem)
		}
		if lim.Timeout <= 0 {
			return usageErr("--cue-timeout %s: give a positive duration such as 30s or 2m", lim.Timeout)
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
