package engine

// Running an admission suite with Gatekeeper's own verify runner, as
// gator verify does.

import (
	"context"
	"sort"
	"testing/fstest"

	"github.com/open-policy-agent/gatekeeper/v3/pkg/gator"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/gator/verify"

	"github.com/accelc/accelc/pkg/policytest"
)

// RunSuite runs a suite built by policytest.Suite with Gatekeeper's own
// verify runner and constraint framework: the same engine as `gator
// verify` and the admission webhook.
func RunSuite(ctx context.Context, files map[string][]byte) ([]policytest.CaseResult, error) {
	fsys := fstest.MapFS{}
	for p, b := range files {
		fsys["suite/"+p] = &fstest.MapFile{Data: b, Mode: 0o644}
	}
	suites, err := verify.ReadSuites(fsys, "suite", "suite", true)
	if err != nil {
		return nil, err
	}
	runner, err := verify.NewRunner(fsys, func(opts ...gator.Opt) (gator.Client, error) {
		return gator.NewOPAClient(false, opts...)
	})
	if err != nil {
		return nil, err
	}
	filter, err := verify.NewFilter("")
	if err != nil {
		return nil, err
	}
	var out []policytest.CaseResult
	for _, s := range suites {
		res := runner.Run(ctx, filter, s)
		if res.Error != nil {
			return nil, res.Error
		}
		for _, t := range res.TestResults {
			if t.Error != nil {
				out = append(out, policytest.CaseResult{Test: t.Name, Case: "(all)", Err: t.Error})
				continue
			}
			for _, c := range t.CaseResults {
				out = append(out, policytest.CaseResult{Test: t.Name, Case: c.Name, Err: c.Error})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Case != out[j].Case {
			return out[i].Case < out[j].Case
		}
		return out[i].Test < out[j].Test
	})
	return out, nil
}
