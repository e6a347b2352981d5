package policytest

// The policies' Rego tests: which run, and their report.

import (
	"context"
	"errors"
	"fmt"
	"io"

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

// RegoPolicy is one policy's Rego as Gatekeeper loads it, by file name:
// its src.rego, accelc's shared library and its *_test.rego.
type RegoPolicy struct {
	Policy string            `json:"policy"`
	Files  map[string]string `json:"files"`
}

// RegoPolicies is accelc's policies' Rego.
func RegoPolicies() []RegoPolicy {
	var out []RegoPolicy
	for _, p := range policies.All {
		files := map[string]string{
			"policies/lib/accelc.rego":        policies.Lib(),
			"policies/" + p.Dir + "/src.rego": p.Rego(),
		}
		for name, src := range p.Tests() {
			files[name] = src
		}
		out = append(out, RegoPolicy{Policy: p.Dir, Files: files})
	}
	return out
}

// RunRego runs every policy's Rego unit tests against its src.rego and the
// shared library, as Gatekeeper would load them, with OPA's tester in
// EngineCommand.
func RunRego(ctx context.Context) ([]Result, error) {
	resp, err := callEngine(ctx, EngineRequest{Op: OpRego, Policies: RegoPolicies()})
	if err != nil {
		return nil, err
	}
	return resp.Rego, nil
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
