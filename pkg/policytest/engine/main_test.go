package engine_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/policytest/engine"
)

// TestMainRefuses: the engine runs only requests of its protocol from its
// own build, and says why it will not, with exit code 2.
func TestMainRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		req  policytest.EngineRequest
		want string
	}{
		{"arguments", []string{"x"}, policytest.EngineRequest{}, "it takes no arguments"},
		{"protocol", nil, policytest.EngineRequest{Protocol: 99, Build: policytest.BuildID(), Op: policytest.OpRego}, "the request is of protocol 99, this accelc-policytest speaks 1: install accelc and accelc-policytest from one build"},
		{"build", nil, policytest.EngineRequest{Protocol: policytest.EngineProtocol, Build: "example.com/accelc@v0.1.0", Op: policytest.OpRego}, "the request comes from example.com/accelc@v0.1.0, this accelc-policytest is "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := json.Marshal(tc.req)
			require.NoError(t, err)
			var stdout, stderr bytes.Buffer
			assert.Equal(t, 2, engine.Main(tc.args, bytes.NewReader(in), &stdout, &stderr))
			assert.Empty(t, stdout.String())
			assert.Contains(t, stderr.String(), tc.want)
		})
	}
}

// TestMainRuns answers a request with what the in-process call returns,
// errors as their messages.
func TestMainRuns(t *testing.T) {
	run := func(req policytest.EngineRequest) policytest.EngineResponse {
		t.Helper()
		req.Protocol, req.Build = policytest.EngineProtocol, policytest.BuildID()
		in, err := json.Marshal(req)
		require.NoError(t, err)
		var stdout, stderr bytes.Buffer
		require.Equal(t, 0, engine.Main(nil, bytes.NewReader(in), &stdout, &stderr), stderr.String())
		var resp policytest.EngineResponse
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &resp))
		return resp
	}
	resp := run(policytest.EngineRequest{Op: policytest.OpRego, Policies: []policytest.RegoPolicy{{Policy: "p", Files: map[string]string{
		"p.rego":      "package p\n\nallow if input.x == 1\n",
		"p_test.rego": "package p\n\ntest_allow if allow with input as {\"x\": 1}\n\ntest_deny if allow with input as {\"x\": 2}\n",
	}}}})
	require.Empty(t, resp.Error)
	require.Len(t, resp.Rego, 2)
	assert.Equal(t, policytest.Result{Policy: "p", File: "p_test.rego", Name: "test_allow", Pass: true}, resp.Rego[0])
	assert.False(t, resp.Rego[1].Pass)

	resp = run(policytest.EngineRequest{Op: policytest.OpRego, Policies: []policytest.RegoPolicy{{Policy: "p", Files: map[string]string{"p.rego": "package p\n\nallow if {"}}}})
	assert.True(t, strings.HasPrefix(resp.Error, "policy p: "), resp.Error)

	resp = run(policytest.EngineRequest{Op: "nope"})
	assert.Equal(t, `accelc-policytest: no operation "nope"`, resp.Error)
}
