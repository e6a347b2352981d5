package policytest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/accelc/accelc/policies"
)

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
	return report(w, "rego", results, func(r Result) (string, error) {
		if r.Pass {
			return "", nil
		}
		if r.Err != nil {
			return r.File + " - " + r.Name, r.Err
		}
		return r.File + " - " + r.Name, errors.New("failed")
	})
}

// report prints "FAIL - <what>: <why>" for each failed result, then
// "<label>: N passed, N failed".
func report[T any](w io.Writer, label string, results []T, failure func(T) (string, error)) Summary {
	var s Summary
	for _, r := range results {
		what, err := failure(r)
		if err == nil {
			s.Passed++
			continue
		}
		s.Failed++
		fmt.Fprintf(w, "FAIL - %s: %v\n", what, err)
	}
	fmt.Fprintf(w, "%s: %d passed, %d failed\n", label, s.Passed, s.Failed)
	return s
}
