package accelc

// accelc test: the policies' Rego tests and the cluster's admission cases
// run against its rendered tree.

import (
	"context"

	"github.com/accelc/accelc/pkg/policytest"
)

// TestOptions say what `accelc test` writes besides running.
type TestOptions struct {
	// SuiteDir, when set, is where the gator suite that ran is written,
	// for `gator verify DIR/...`.
	SuiteDir string
}

// TestReport is what the policies' tests found.
type TestReport struct {
	// Rego is each of accelc's Rego unit tests, run with OPA's tester.
	Rego []policytest.Result
	// Cases is each admission fixture of the cluster directory, run
	// through the rendered policies as they are once every team denies.
	Cases []policytest.CaseResult
	// NoCases says the cluster directory has no admission fixtures: only
	// the Rego tests ran.
	NoCases bool
}

// Test runs accelc's Rego unit tests, then res's admission fixtures
// (admission/cases.yaml in its directory) through its tree with the
// cluster and every team at deny, with Gatekeeper's engine
// (accelc-policytest). The fixtures say what the policies do once
// enforced, whatever stage the cluster is at. The report comes back with
// what ran before an error; an engine that cannot be run is a
// policytest.EngineError.
func Test(ctx context.Context, res *Result, opts TestOptions) (*TestReport, error) {
	rep := &TestReport{}
	// The cases first: a malformed cases.yaml is told at once, not after
	// the Rego tests.
	cases, err := policytest.ReadCases(res.Dir)
	if err != nil {
		return nil, err
	}
	if rep.Rego, err = policytest.RunRego(ctx); err != nil {
		return nil, err
	}
	rep.NoCases = len(cases.Cases) == 0
	tree, err := res.EnforcedTree()
	if err != nil {
		return rep, err
	}
	if opts.SuiteDir != "" {
		files, err := policytest.Suite(tree, res.Dir, cases, res.Model.Cluster.TypeLabel(), res.NodeTypes())
		if err != nil {
			return rep, err
		}
		if err := policytest.WriteFiles(opts.SuiteDir, files); err != nil {
			return rep, err
		}
	}
	inputs, err := policytest.ReadCaseInputs(res.Dir, cases)
	if err != nil || len(inputs) == 0 {
		return rep, err
	}
	nodes, err := policytest.Nodes(res.Model.Cluster.TypeLabel(), res.NodeTypes())
	if err != nil {
		return rep, err
	}
	rep.Cases, err = policytest.RunCases(ctx, tree, nodes, inputs)
	return rep, err
}

// TestOutcome is one test of a TestReport, as accelc test -o json writes
// it.
type TestOutcome struct {
	// Name is the Rego test's file and name, or the fixture's test and
	// case.
	Name  string `json:"name"`
	Pass  bool   `json:"pass"`
	Error string `json:"error,omitempty"`
}

// Outcomes are the report's tests as a document: the Rego tests and the
// admission fixtures, each passed or failed with why.
func (r *TestReport) Outcomes() (rego, cases []TestOutcome) {
	rego, cases = []TestOutcome{}, []TestOutcome{}
	for _, t := range r.Rego {
		o := TestOutcome{Name: t.File + " - " + t.Name, Pass: t.Pass}
		if t.Err != nil {
			o.Error = t.Err.Error()
		}
		rego = append(rego, o)
	}
	for _, c := range r.Cases {
		o := TestOutcome{Name: c.Test + " - " + c.Case, Pass: c.Err == nil}
		if c.Err != nil {
			o.Error = c.Err.Error()
		}
		cases = append(cases, o)
	}
	return rego, cases
}
