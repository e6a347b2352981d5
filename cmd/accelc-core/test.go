package main

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/policytest"
)

func newTestCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv      inventoryFlags
		output   = cli.OutputFormats(cli.FormatText, cli.FormatJSON, cli.FormatYAML)
		suiteDir string
	)
	cmd := &cobra.Command{
		Use:   "test [CLUSTER_DIR]",
		Short: "Run the policies' Rego tests and the cluster's admission fixtures",
		Long: `test runs accelc's Rego unit tests with OPA's tester, then renders
CLUSTER_DIR (default .) and runs its admission fixtures (admission/cases.yaml)
through the rendered ConstraintTemplates, Constraints and mutators as they
are once every team denies (the fixtures hold at every stage of a rollout:
dryrun only stops the refusals) with Gatekeeper's
own engine, the one gator and the webhook use. Each failure prints a
FAIL line; it exits 1 if any test fails (-o json or yaml: every test with
whether it passed, and the counts). --write-suite writes the gator suite
it ran, for ` + "`gator verify DIR/...`" + `.`,
		Args:              cli.MaxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := dirArg(args)
			res, err := loadCluster(cmd.Context(), dir, &inv, accelc.Options{Stages: accelc.Rendered}, stderr)
			if err != nil {
				return err
			}
			rep, err := accelc.Test(cmd.Context(), res, accelc.TestOptions{SuiteDir: suiteDir})
			if rep == nil {
				return libraryErr(err)
			}
			failed := writeTests(stdout, output.Value(), rep, err == nil)
			if err != nil {
				return libraryErr(err)
			}
			if rep.NoCases {
				fmt.Fprintf(stderr, "warning: %s has no %s: only the Rego unit tests ran\n", dir, policytest.CasesFile)
			}
			if failed > 0 {
				return cli.Exit(cli.ExitInput, errors.New("FAIL"))
			}
			return nil
		},
	}
	inv.bind(cmd, false)
	output.Register(cmd)
	cmd.Flags().StringVar(&suiteDir, "write-suite", "", "also write the gator suite and its files into this directory")
	return cmd
}

// testsReport is test's -o json/yaml document.
type testsReport struct {
	Rego   []accelc.TestOutcome `json:"rego"`
	Cases  []accelc.TestOutcome `json:"cases"`
	Passed int                  `json:"passed"`
	Failed int                  `json:"failed"`
}

// writeTests prints the tests' FAIL lines and counts (text), or the
// report once the admission fixtures ran too (ran), and says how many
// failed.
func writeTests(w io.Writer, format string, rep *accelc.TestReport, ran bool) int {
	if format == cli.FormatText {
		rego := policytest.Report(w, rep.Rego)
		if !ran {
			return rego.Failed
		}
		adm := policytest.ReportCases(w, rep.Cases)
		return rego.Failed + adm.Failed
	}
	doc := testsReport{}
	doc.Rego, doc.Cases = rep.Outcomes()
	for _, o := range append(slices.Clip(doc.Rego), doc.Cases...) {
		if o.Pass {
			doc.Passed++
		} else {
			doc.Failed++
		}
	}
	if ran {
		_ = cli.WriteReport(w, format, doc)
	}
	return doc.Failed
}
