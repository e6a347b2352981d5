package policytest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/policies"
)

func TestRegoUnitTests(t *testing.T) {
	results, err := policytest.RunRego(context.Background())
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

// TestEngineMissing: without the engine command beside the executable or
// on PATH, RunRego says how to get it, as an EngineError.
func TestEngineMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := policytest.RunRego(context.Background())
	var ee *policytest.EngineError
	require.ErrorAs(t, err, &ee)
	assert.Contains(t, err.Error(), policytest.EngineCommand+", which runs the policies with OPA and Gatekeeper, is neither beside ")
	assert.Contains(t, err.Error(), "`make build` builds it beside accelc into bin/")
}

// TestEngineRefuses: an engine that will not run the request (another
// build, here a stand-in) gives an EngineError with what it said.
func TestEngineRefuses(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\necho 'the request comes from accelc@v1, this accelc-policytest is accelc@v2' >&2\nexit 2\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, policytest.EngineCommand), []byte(script), 0o755))
	t.Setenv("PATH", dir)
	_, err := policytest.RunSuite(context.Background(), map[string][]byte{"suite.yaml": nil})
	var ee *policytest.EngineError
	require.ErrorAs(t, err, &ee)
	assert.EqualError(t, err, filepath.Join(dir, policytest.EngineCommand)+": the request comes from accelc@v1, this accelc-policytest is accelc@v2")
}

// TestCheckSelectors: DeviceClass selectors go to the engine, which
// compiles them in Kubernetes' DRA CEL environment and evaluates them on
// each catalog class's device.
func TestCheckSelectors(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	got, err := policytest.CheckSelectors(context.Background(), map[string]string{
		"hopper": "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].architecture == 'Hopper'",
		"broken": "device.driver ==",
	}, compile.SampleDevices(cat))
	require.NoError(t, err)
	assert.Contains(t, got["hopper"].Matches, "nvidia-h100-80gb")
	assert.NotContains(t, got["hopper"].Matches, "nvidia-a100-80gb")
	assert.Contains(t, got["broken"].Error, "Syntax error")
}
