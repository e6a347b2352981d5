// Package cli is what every accelc command shares (exit codes, flags,
// report formats, the one place errors are printed) and the commands
// that need neither the compiler nor a Kubernetes client: version and
// push. cmd/accelc runs those itself, in the few milliseconds a Go
// program of their size takes to start, and hands every other command to
// accelc-core (cmd/accelc-core), which has them all.
package cli

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

	"github.com/accelc/accelc/internal/errkind"
)

// Exit codes (docs/cli.md): 0 ok, 1 the input is wrong, 2 usage error,
// 3 an outside system failed.
const (
	ExitOK      = 0
	ExitInput   = 1
	ExitUsage   = 2
	ExitOutside = 3
)

// ExitError carries the exit code an error maps to.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Exit is err with the exit code code.
func Exit(code int, err error) error { return &ExitError{Code: code, Err: err} }

// UsageErr is a usage error (exit 2).
func UsageErr(format string, args ...any) error {
	return Exit(ExitUsage, fmt.Errorf(format, args...))
}

// Execute runs root with args and returns the exit code. It is the one
// place that prints errors. Every usage error reaches it as an ExitError
// with ExitUsage: flags through FlagError, arguments through each
// command's Args, unknown commands through RunGroup.
func Execute(root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code := ExitInput
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	}
	fmt.Fprintln(stderr, strings.TrimRight(err.Error(), "\n"))
	if code == ExitUsage {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}

// LibraryErr gives an error from the library its exit code: a wrong
// option 2, a system outside 3, anything else (the input) 1.
func LibraryErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errkind.IsUsage(err):
		return Exit(ExitUsage, err)
	case errkind.IsOutside(err):
		return Exit(ExitOutside, err)
	default:
		return Exit(ExitInput, err)
	}
}

// FlagError makes a flag that cannot be parsed a usage error, worded as
// accelc's own checks word theirs: "-o xml: choose one of text, json".
func FlagError(_ *cobra.Command, err error) error {
	var iv *pflag.InvalidValueError
	if errors.As(err, &iv) {
		name := "--" + iv.GetFlag().Name
		if sh := iv.GetFlag().Shorthand; sh != "" {
			name = "-" + sh
		}
		err = fmt.Errorf("%s %s: %w", name, iv.GetValue(), errors.Unwrap(iv))
	}
	return Exit(ExitUsage, err)
}

// MaxArgs is cobra.MaximumNArgs with a usage exit code.
func MaxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return UsageErr("%s takes at most %d argument(s), got %d: %s", cmd.CommandPath(), n, len(args), strings.Join(args, " "))
		}
		return nil
	}
}

// NoArgs is cobra.NoArgs with a usage exit code.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return UsageErr("%s takes no arguments, got %s", cmd.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

// RunGroup is the RunE of a command that only holds subcommands (with
// Args cobra.ArbitraryArgs): a word that names none of them is a usage
// error, where cobra would print the help page and exit 0; no word
// prints the help page.
func RunGroup(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return UsageErr("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	return cmd.Help()
}

// NewRoot is the accelc command without its subcommands.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
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
		RunE:          RunGroup,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(FlagError)
	return root
}
