package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/policytest"
)

// inventoryFlags bind --inventory, --live, --kubeconfig, --context and
// (withAge) --max-snapshot-age to the library's inventory source.
type inventoryFlags struct {
	src accelc.Source
}

func (f *inventoryFlags) bind(cmd *cobra.Command, withAge bool) {
	fs := cmd.Flags()
	fs.StringVar(&f.src.File, "inventory", "", "the nodes: a `FILE` that kubectl get nodes -o json or accelc inventory snapshot wrote (default: CLUSTER_DIR/inventory.json)")
	fs.BoolVar(&f.src.Live, "live", false, "read the nodes (with the pods that use their accelerators and the ResourceSlices that publish them) from the cluster of the current kubeconfig context")
	bindKubeconfig(cmd, &f.src.LiveOptions, " for --live")
	_ = cmd.MarkFlagFilename("inventory", "json", "yaml", "yml")
	if withAge {
		fs.DurationVar(&f.src.MaxAge, "max-snapshot-age", 7*24*time.Hour, "warn when the snapshot is older than this (0: never)")
	}
}

// bindKubeconfig adds --kubeconfig and --context, with their completion,
// to the live read o; use says when they apply (" for --live"), if not
// always.
func bindKubeconfig(cmd *cobra.Command, o *live.Options, use string) {
	fs := cmd.Flags()
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig file"+use+" (default: $KUBECONFIG, then ~/.kube/config)")
	fs.StringVar(&o.Context, "context", "", "kubeconfig context"+use+" (default: the current context)")
	_ = cmd.MarkFlagFilename("kubeconfig")
	_ = cmd.RegisterFlagCompletionFunc("context", completeContexts)
}

// liveOnly refuses --kubeconfig and --context without --live.
func liveOnly(isLive bool, o live.Options) error {
	if !isLive && (o.Kubeconfig != "" || o.Context != "") {
		return cli.UsageErr("--kubeconfig and --context only apply with --live")
	}
	return nil
}

// source is the bound source, once its flags agree with each other.
func (f *inventoryFlags) source() (accelc.Source, error) {
	if err := f.src.Check(); err != nil {
		return f.src, cli.UsageErr("%v", err)
	}
	return f.src, liveOnly(f.src.Live, f.src.LiveOptions)
}

// loadCluster loads a cluster directory through the library with the
// root's --cue-* limits, prints its warnings, and maps its errors to exit
// codes.
func loadCluster(ctx context.Context, dir string, flags *inventoryFlags, opts accelc.Options, stderr io.Writer) (*accelc.Result, error) {
	src, err := flags.source()
	if err != nil {
		return nil, err
	}
	opts.Inventory = src
	opts.Limits = limitsOf(ctx)
	res, err := accelc.Cluster(ctx, dir, opts)
	if res != nil {
		printDiagnostics(stderr, res.Diagnostics)
	}
	return res, libraryErr(err)
}

// printDiagnostics prints warnings, one per line.
func printDiagnostics(w io.Writer, diags []compile.Diagnostic) {
	for _, d := range diags {
		fmt.Fprintln(w, d)
	}
}

// libraryErr gives the library's errors their exit codes: wrong options
// (2), a system outside the configuration failed (3: the policy engine
// accelc-policytest among them), or the input is wrong (1).
func libraryErr(err error) error {
	var engine *policytest.EngineError
	if errors.As(err, &engine) {
		return cli.Exit(cli.ExitOutside, err)
	}
	return cli.LibraryErr(err)
}

// printed prints a library result's warnings, whatever err is, and
// gives err its exit code.
func printed(stderr io.Writer, diags []compile.Diagnostic, err error) error {
	printDiagnostics(stderr, diags)
	return libraryErr(err)
}
