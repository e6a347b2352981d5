package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/policytest"
)

func newTestCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv      inventoryFlags
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
FAIL line; it exits 1 if any test fails. --write-suite writes the gator
suite it ran, for ` + "`gator verify DIR/...`" + `.`,
		Args:              maxArgs(1),
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
			rego := policytest.Report(stdout, rep.Rego)
			if err != nil {
				return libraryErr(err)
			}
			adm := policytest.ReportCases(stdout, rep.Cases)
			if rep.NoCases {
				fmt.Fprintf(stderr, "warning: %s has no %s: only the Rego unit tests ran\n", dir, policytest.CasesFile)
			}
			if rego.Failed+adm.Failed > 0 {
				return &exitError{exitInput, errors.New("FAIL")}
			}
			return nil
		},
	}
	inv.bind(cmd, false)
	cmd.Flags().StringVar(&suiteDir, "write-suite", "", "also write the gator suite and its files into this directory")
	return cmd
}
