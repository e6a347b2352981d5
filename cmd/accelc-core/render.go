package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/render"
)

func newRenderCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv                     inventoryFlags
		output                  = cli.OutputFormats(cli.FormatText, cli.FormatJSON, cli.FormatYAML).OrPath("output-dir")
		outDir, revision, fleet string
	)
	cmd := &cobra.Command{
		Use:   "render [CLUSTER_DIR] | render --fleet FLEET_DIR",
		Short: "Render a cluster's manifests into a kustomize tree",
		Long: `render compiles CLUSTER_DIR (default .) with its inventory and writes the
cluster's manifests to --output-dir (default out/<cluster name>), replacing
what a previous render wrote there. It prints the files it wrote (-o json
or yaml: as a document, with the cluster's name and the directory).

The nodes come from --inventory FILE, else CLUSTER_DIR/inventory.json, or
with --live from the cluster itself (kubeconfig as kubectl finds it). A
snapshot taken by accelc records when; render warns when it is older than
--max-snapshot-age.

--fleet FLEET_DIR renders every cluster folder of a fleet repository (each
subfolder whose CUE declares a cluster, with its own inventory.json) in
parallel, each into <cluster name> under --output-dir (default out). A
cluster that fails is reported by its folder; the others are still
written, and the exit code is 1.

Every object is annotated with accelc.io/source-revision (--revision, else
the checkout's <branch>@sha1:<commit>) and accelc.io/version, so an object
in a cluster can be traced to the commit that made it; re-rendering the
same commit gives the same files.`,
		Args:              cli.MaxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := output.MovePath(stderr, &outDir); err != nil {
				return err
			}
			prov := &render.Provenance{Revision: revision, Version: cli.Version()}
			if fleet != "" {
				if len(args) > 0 || inv.src.File != "" || inv.src.Live {
					return cli.UsageErr("--fleet renders each cluster folder with its own inventory.json: give no CLUSTER_DIR, --inventory or --live")
				}
				return renderFleet(cmd.Context(), fleet, firstNonEmpty(outDir, "out"), prov, inv.src, output.Value(), stdout, stderr)
			}
			res, err := loadCluster(cmd.Context(), dirArg(args), &inv, accelc.Options{Stages: accelc.Rendered, Provenance: prov}, stderr)
			if err != nil {
				return err
			}
			warnNoInventory(stderr, res, "the catalog shows 0 available for every profile")
			rep, err := writeTree(res, firstNonEmpty(outDir, filepath.Join("out", res.Model.Cluster.Name)), stderr)
			if err != nil {
				return err
			}
			return printRendered(stdout, output.Value(), rep)
		},
	}
	inv.bind(cmd, true)
	output.Register(cmd)
	cmd.Flags().StringVar(&outDir, "output-dir", "", "output directory (default out/<cluster name>; with --fleet, the parent of each cluster's, default out)")
	cmd.Flags().StringVar(&revision, "revision", "", "the configuration's commit for the accelc.io/source-revision annotation, as <branch>@sha1:<commit> (default: the cluster directory's Git checkout)")
	cmd.Flags().StringVar(&fleet, "fleet", "", "render every cluster folder of this fleet directory, in parallel")
	_ = cmd.MarkFlagDirname("output-dir")
	_ = cmd.MarkFlagDirname("fleet")
	return cmd
}

// rendered is what render wrote for one cluster: render's -o json/yaml
// document (a list of them with --fleet).
type rendered struct {
	// Dir is the cluster directory, with --fleet.
	Dir       string   `json:"dir,omitempty"`
	Cluster   string   `json:"cluster,omitempty"`
	OutputDir string   `json:"outputDir,omitempty"`
	Files     []string `json:"files"`
	// Error is why the cluster did not render, with --fleet.
	Error string `json:"error,omitempty"`
}

// printRendered prints the files written, one a line (text), or the
// report: one cluster's (render) or a fleet's (render --fleet), the only
// two it takes.
func printRendered[R rendered | []rendered](stdout io.Writer, format string, rep R) error {
	if format != cli.FormatText {
		return cli.WriteReport(stdout, format, rep)
	}
	var reps []rendered
	switch r := any(rep).(type) {
	case rendered:
		reps = []rendered{r}
	case []rendered:
		reps = r
	}
	for _, r := range reps {
		for _, p := range r.Files {
			fmt.Fprintln(stdout, p)
		}
	}
	return nil
}

// warnNoInventory says what a missing inventory means for this command's
// output.
func warnNoInventory(stderr io.Writer, res *accelc.Result, effect string) {
	if !res.HasInventory() {
		fmt.Fprintf(stderr, "warning: no inventory (give --inventory or --live, or put inventory.json in the cluster directory): %s\n", effect)
	}
}

// writeTree writes a rendered cluster into out and says what it wrote.
func writeTree(res *accelc.Result, out string, stderr io.Writer) (rendered, error) {
	rep := rendered{Cluster: res.Model.Cluster.Name, OutputDir: out, Files: make([]string, 0, len(res.Tree))}
	if err := res.Tree.WriteWith(out, render.WriteOptions{Log: stderr, ContentDigest: res.ContentDigest}); err != nil {
		return rep, err
	}
	for _, p := range res.Tree.Paths() {
		rep.Files = append(rep.Files, filepath.Join(out, filepath.FromSlash(p)))
	}
	return rep, nil
}

// renderFleet renders every cluster folder of fleet in parallel. Output
// and messages come in folder order whatever finishes first.
func renderFleet(ctx context.Context, fleet, outDir string, prov *render.Provenance, src accelc.Source, format string, stdout, stderr io.Writer) error {
	clusters, err := accelc.Fleet(ctx, fleet, accelc.Options{Stages: accelc.Rendered, Provenance: prov, Limits: limitsOf(ctx), Inventory: src})
	if err != nil {
		return cli.Exit(cli.ExitInput, err)
	}
	failed := 0
	reps := make([]rendered, 0, len(clusters))
	for _, c := range clusters {
		var logs bytes.Buffer
		rep := rendered{Dir: c.Dir, Files: []string{}}
		if c.Result != nil {
			printDiagnostics(&logs, c.Result.Diagnostics)
		}
		if c.Err == nil {
			warnNoInventory(&logs, c.Result, "the catalog shows 0 available for every profile")
			rep, c.Err = writeTree(c.Result, filepath.Join(outDir, c.Result.Model.Cluster.Name), &logs)
			rep.Dir = c.Dir
		}
		if logs.Len() > 0 {
			for _, line := range strings.SplitAfter(strings.TrimRight(logs.String(), "\n"), "\n") {
				fmt.Fprintf(stderr, "%s: %s", c.Dir, strings.TrimSuffix(line, "\n")+"\n")
			}
		}
		if c.Err != nil {
			failed++
			fmt.Fprintf(stderr, "%s: %v\n", c.Dir, c.Err)
			rep.Files, rep.Error = []string{}, c.Err.Error()
		}
		reps = append(reps, rep)
	}
	if err := printRendered(stdout, format, reps); err != nil {
		return err
	}
	if failed > 0 {
		return cli.Exit(cli.ExitInput, fmt.Errorf("%d of %d clusters failed to render", failed, len(clusters)))
	}
	return nil
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
