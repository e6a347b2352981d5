package policytest

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/accelc/accelc/policies"
)

func policiesAll() []policies.Policy { return policies.All }

// Result is one Rego test.
type Result struct {
	Policy string
	File   string
	Name   string
	Pass   bool
	Err    error
}

// Summary counts results.
type Summary struct {
	Passed, Failed int
}

// RunRego runs every policy's Rego unit tests against its src.rego and the
// shared library, as Gatekeeper would load them.
func RunRego(ctx context.Context) ([]Result, error) {
	var out []Result
	for _, p := range policies.All {
		srcs := map[string]string{
			"policies/lib/accelc.rego":        policies.Lib(),
			"policies/" + p.Dir + "/src.rego": p.Rego(),
		}
		for name, src := range p.Tests() {
			srcs[name] = src
		}
		modules := map[string]*ast.Module{}
		for name, src := range srcs {
			m, err := ast.ParseModuleWithOpts(name, src, ast.ParserOptions{RegoVersion: ast.RegoV1})
			if err != nil {
				return nil, fmt.Errorf("policy %s: %w", p.Dir, err)
			}
			modules[name] = m
		}
		store := inmem.New()
		txn, err := store.NewTransaction(ctx)
		if err != nil {
			return nil, err
		}
		ch, err := tester.NewRunner().SetStore(store).SetModules(modules).RunTests(ctx, txn)
		if err != nil {
			store.Abort(ctx, txn)
			return nil, fmt.Errorf("policy %s: %w", p.Dir, err)
		}
		for r := range ch {
			res := Result{Policy: p.Dir, Name: r.Name, Pass: !r.Fail && r.Error == nil, Err: r.Error}
			if r.Location != nil {
				res.File = r.Location.File
			}
			out = append(out, res)
		}
		store.Abort(ctx, txn)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Policy != out[j].Policy {
			return out[i].Policy < out[j].Policy
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// Report prints conftest-style lines: a FAIL line per failure and a
// summary. It returns the counts.
func Report(w io.Writer, results []Result) Summary {
	var s Summary
	for _, r := range results {
		if r.Pass {
			s.Passed++
			continue
		}
		s.Failed++
		msg := "failed"
		if r.Err != nil {
			msg = r.Err.Error()
		}
		fmt.Fprintf(w, "FAIL - %s - %s: %s\n", r.File, r.Name, msg)
	}
	fmt.Fprintf(w, "rego: %d passed, %d failed\n", s.Passed, s.Failed)
	return s
}
