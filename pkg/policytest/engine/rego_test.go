package engine_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/policytest/engine"
	"github.com/accelc/accelc/policies"
)

func TestRegoUnitTests(t *testing.T) {
	results, err := engine.RunRego(context.Background(), policytest.RegoPolicies())
	require.NoError(t, err)
	var buf bytes.Buffer
	s := policytest.Report(&buf, results)
	assert.Zero(t, s.Failed, buf.String())
	assert.Greater(t, s.Passed, 30, "every policy has its tests")
	policiesSeen := map[string]bool{}
	for _, r := range results {
		policiesSeen[r.Policy] = true
	}
	assert.Len(t, policiesSeen, len(policies.All))
}
