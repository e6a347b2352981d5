package engine

// Running the policies' Rego tests.

import (
	"context"
	"fmt"
	"sort"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/tester"

	"github.com/accelc/accelc/pkg/policytest"
)

// RunRego runs each policy's Rego unit tests with OPA's tester, its files
// parsed as Gatekeeper parses a template's source, with Rego v1.
func RunRego(ctx context.Context, sets []policytest.RegoPolicy) ([]policytest.Result, error) {
	var out []policytest.Result
	for _, p := range sets {
		modules := map[string]*ast.Module{}
		for name, src := range p.Files {
			m, err := ast.ParseModuleWithOpts(name, src, ast.ParserOptions{RegoVersion: ast.RegoV1})
			if err != nil {
				return nil, fmt.Errorf("policy %s: %w", p.Policy, err)
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
			return nil, fmt.Errorf("policy %s: %w", p.Policy, err)
		}
		for r := range ch {
			res := policytest.Result{Policy: p.Policy, Name: r.Name, Pass: !r.Fail && r.Error == nil, Err: r.Error}
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
