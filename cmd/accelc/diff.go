package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/artifact"
	"github.com/accelc/accelc/pkg/render"
)

// diffReport is diff's -o json/yaml document.
type diffReport struct {
	Against string          `json:"against"`
	Changes []render.Change `json:"changes"`
}

func newDiffCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv      inventoryFlags
		output   = outputFormats(formatText, formatJSON, formatYAML)
		against  string
		insecure bool
		maxSize  = byteSize(artifact.DefaultMaxSize)
		maxFiles int
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
		Args:              maxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			if against == "" {
				return usageErr("--against is required: a previous output directory or oci://HOST/REPO:TAG")
			}
			if maxFiles <= 0 {
				return usageErr("--max-artifact-files %d: give a count above 0", maxFiles)
			}
			res, err := loadCluster(cmd.Context(), dirArg(args), &inv, accelc.Options{Render: true}, stderr)
			if err != nil {
				return err
			}
			tree := res.Tree
			var old render.Tree
			if strings.HasPrefix(against, "oci://") {
				ref, err := artifact.ParseURL(against, insecure)
				if err != nil {
					return usageErr("--against: %v", err)
				}
				// Only the files the render has are held: the others are
				// removals, listed by path.
				files, err := artifact.Pull(cmd.Context(), ref, artifact.PushOptions{Insecure: insecure}, artifact.ReadOptions{
					Limits: artifact.Limits{MaxSize: int64(maxSize), MaxFiles: maxFiles},
					Keep:   func(p string) bool { _, ok := tree[p]; return ok },
				})
				var le *artifact.LimitError
				if errors.As(err, &le) {
					flag := "--max-artifact-size"
					if le.Files {
						flag = "--max-artifact-files"
					}
					return &exitError{exitOutside, fmt.Errorf("%w: if the artifact is what you expect, raise %s", err, flag)}
				}
				if err != nil {
					return &exitError{exitOutside, err}
				}
				old = render.Tree(files)
			} else {
				if st, err := os.Stat(against); err != nil || !st.IsDir() {
					return &exitError{exitInput, fmt.Errorf("--against %s: not a directory: give a previous `accelc render` output or oci://…", against)}
				}
				if old, err = render.LoadTree(against); err != nil {
					return &exitError{exitInput, err}
				}
			}
			changes, err := render.Diff(tree, old)
			if err != nil {
				return &exitError{exitInput, err}
			}
			if output.value != formatText {
				if changes == nil {
					changes = []render.Change{}
				}
				err = writeReport(stdout, output.value, diffReport{Against: against, Changes: changes})
			} else {
				err = render.WriteChanges(stdout, changes)
			}
			if err != nil {
				return err
			}
			if len(changes) > 0 {
				return &exitError{exitInput, fmt.Errorf("%d file(s) would change against %s", len(changes), against)}
			}
			return nil
		},
	}
	inv.bind(cmd, true)
	output.register(cmd, "output", "o", "output format")
	f := cmd.Flags()
	f.StringVar(&against, "against", "", "previous output directory, or oci://HOST/REPO:TAG of the published artifact")
	f.BoolVar(&insecure, "insecure", false, "allow plain HTTP to a registry that is not on loopback")
	f.Var(&maxSize, "max-artifact-size", "the most a pulled artifact's files may hold together, uncompressed (e.g. 64MiB, 1GiB)")
	f.IntVar(&maxFiles, "max-artifact-files", artifact.DefaultMaxFiles, "the most entries (files and folders) a pulled artifact may hold")
	return cmd
}
