package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/artifact"
	"github.com/accelc/accelc/pkg/render"
)

func newDiffCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv     inventoryFlags
		output  = cli.OutputFormats(cli.FormatText, cli.FormatJSON, cli.FormatYAML)
		opts    accelc.DiffOptions
		maxSize = cli.ByteSize(artifact.DefaultMaxSize)
	)
	cmd := &cobra.Command{
		Use:   "diff [CLUSTER_DIR] --against OUT_DIR|oci://HOST/REPO:TAG",
		Short: "Show what a render would change against a previous output or a published artifact",
		Long: `diff renders CLUSTER_DIR in memory and compares it, file by file, with a
previous output directory or with the artifact Flux applies (pulled from
oci://…): + a file the render adds, - one it removes, ~ one it changes, with
a unified diff. Objects are compared without accelc's provenance
annotations, so a commit that changes nothing renders no change. It exits 1
when something would change, for CI gates, and 0 when nothing would.

A pulled artifact is read as a stream, within --max-artifact-size
(uncompressed) and --max-artifact-files; one over either exits 3 before the
excess is read. A folder is read without following links: one with a link
in it exits 1. What the deployed side holds is printed with control
characters and bytes that are not UTF-8 escaped.`,
		Example:           `  accelc diff clusters/prod --against oci://ghcr.io/acme/accelc/prod:latest`,
		Args:              cli.MaxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Limits.MaxSize = int64(maxSize)
			if err := opts.Check(); err != nil {
				return libraryErr(err)
			}
			if opts.Limits.MaxFiles <= 0 {
				return cli.UsageErr("--max-artifact-files %d: give a count above 0", opts.Limits.MaxFiles)
			}
			res, err := loadCluster(cmd.Context(), dirArg(args), &inv, accelc.Options{Stages: accelc.Rendered}, stderr)
			if err != nil {
				return err
			}
			rep, err := accelc.Diff(cmd.Context(), res, opts)
			if err != nil {
				return libraryErr(err)
			}
			if output.Value() != cli.FormatText {
				err = cli.WriteReport(stdout, output.Value(), rep)
			} else {
				err = render.WriteChanges(stdout, rep.Changes)
			}
			if err != nil {
				return err
			}
			if len(rep.Changes) > 0 {
				return cli.Exit(cli.ExitInput, fmt.Errorf("%d file(s) would change against %s", len(rep.Changes), opts.Against))
			}
			return nil
		},
	}
	inv.bind(cmd, true)
	output.Register(cmd)
	f := cmd.Flags()
	f.StringVar(&opts.Against, "against", "", "previous output directory, or oci://HOST/REPO:TAG of the published artifact")
	_ = cmd.MarkFlagDirname("against")
	f.BoolVar(&opts.Insecure, "insecure", false, "allow plain HTTP to a registry that is not on loopback")
	f.Var(&maxSize, "max-artifact-size", "the most a pulled artifact's files may hold together, uncompressed (e.g. 64MiB, 1GiB)")
	f.IntVar(&opts.Limits.MaxFiles, "max-artifact-files", artifact.DefaultMaxFiles, "the most entries (files and folders) a pulled artifact may hold")
	return cmd
}
