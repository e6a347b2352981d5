package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/render"
)

func newTestCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		src      inventorySource
		suiteDir string
	)
	cmd := &cobra.Command{
		Use:   "test [CLUSTER_DIR]",
		Short: "Run the policies' Rego tests and the cluster's admission fixtures",
		Long: `test runs accelc's Rego unit tests with OPA's tester, then renders
CLUSTER_DIR (default .) and runs its admission fixtures (admission/cases.yaml)
through the rendered ConstraintTemplates and Constraints with Gatekeeper's
own engine, the one gator and the webhook use. Each failure prints a
FAIL line; it exits 1 if any test fails. --write-suite writes the gator
suite it ran, for ` + "`gator verify DIR/...`" + `.`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := dirArg(args)
			m, in, err := loadCluster(cmd.Context(), dir, &src, stderr)
			if err != nil {
				return err
			}
			if in == nil {
				in = &inventory.Inventory{}
			}
			results, err := policytest.RunRego(cmd.Context())
			if err != nil {
				return policyErr(exitInput, err)
			}
			rego := policytest.Report(stdout, results)

			cases, err := policytest.ReadCases(dir)
			if err != nil {
				return &exitError{exitInput, err}
			}
			tree, err := render.Cluster(m, in)
			if err != nil {
				return &exitError{exitInput, err}
			}
			nodeTypes := map[string]string{}
			for i := range in.Nodes {
				if _, ok := m.Catalog.Get(in.Nodes[i].AcceleratorType); ok {
					nodeTypes[in.Nodes[i].Name] = in.Nodes[i].AcceleratorType
				}
			}
			files, err := policytest.Suite(tree, dir, cases, m.Cluster.TypeLabel(), nodeTypes)
			if err != nil {
				return policyErr(exitInput, err)
			}
			if suiteDir != "" {
				if err := policytest.WriteFiles(suiteDir, files); err != nil {
					return err
				}
			}
			caseResults, err := policytest.RunSuite(cmd.Context(), files)
			if err != nil {
				return policyErr(exitInput, err)
			}
			adm := policytest.ReportCases(stdout, caseResults)
			if len(cases.Cases) == 0 {
				fmt.Fprintf(stderr, "warning: %s has no %s: only the Rego unit tests ran\n", dir, policytest.CasesFile)
			}
			if rego.Failed+adm.Failed > 0 {
				return &exitError{exitInput, errors.New("FAIL")}
			}
			return nil
		},
	}
	src.bind(cmd, false)
	cmd.Flags().StringVar(&suiteDir, "write-suite", "", "also write the gator suite and its files into this directory")
	return cmd
}

// policyErr gives err exit code 3 when the policy engine could not be run
// (policytest.EngineError: accelc-policytest missing or of another build),
// else code.
func policyErr(code int, err error) error {
	if ee := (*policytest.EngineError)(nil); errors.As(err, &ee) {
		code = exitOutside
	}
	return &exitError{code, err}
}
