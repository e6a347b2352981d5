package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/estimate"
	"github.com/accelc/accelc/pkg/render"
)

// TestAdviseCommands checks the exit codes and machine output of catalog,
// recommend and estimate; the README shows their tables.
func TestAdviseCommands(t *testing.T) {
	run := runMain
	const lab, prod = "../../examples/clusters/small-lab", "../../examples/clusters/hetero-prod"

	code, out, errOut := run("catalog", prod, "-o", "json")
	require.Equal(t, exitOK, code, errOut)
	var doc render.CatalogDocument
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, render.CatalogSchemaVersion, doc.SchemaVersion)

	// Use case 3, alternative flow 2: nothing with 80GB in the lab.
	code, out, errOut = run("recommend", lab, "--min-memory", "80GiB")
	assert.Equal(t, exitInput, code)
	assert.Contains(t, errOut, "no profile qualifies: requires 80GB+ per GPU; available: ")
	assert.Contains(t, errOut, "provision suitable hardware")
	assert.Contains(t, out, "48GB < 80GB needed")

	code, out, errOut = run("recommend", prod, "--min-memory", "80GB", "--model", "llama-3-70b", "--min-throughput", "100tok/s", "--gpus", "4", "-o", "json")
	require.Equal(t, exitOK, code, errOut)
	var r estimate.Recommendation
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.NotNil(t, r.Best)
	assert.Equal(t, "nvidia-h200-141gb", r.Best.Type)

	code, out, errOut = run("estimate", prod, "--params", "7B", "--tokens", "20B", "--gpus", "8", "-o", "json")
	require.Equal(t, exitOK, code, errOut)
	var est struct {
		MemoryPerGPUGB float64             `json:"memoryPerGPUGB"`
		Estimates      []estimate.Estimate `json:"estimates"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &est))
	assert.InDelta(t, 14.0, est.MemoryPerGPUGB, 1e-9, "16 B × 7e9 / 8")
	assert.True(t, est.Estimates[len(est.Estimates)-1].Fits, "14GB fits even a V100 16GB")

	for _, bad := range [][]string{
		{"estimate", prod, "--tokens", "2B"},
		{"estimate", prod, "--params", "seven", "--tokens", "2B"},
		{"estimate", prod, "--params", "7B", "--tokens", "2B", "--mfu", "40"},
		{"recommend", prod, "--min-throughput", "100tok/s"},
		{"recommend", prod, "--min-memory", "lots"},
		{"catalog", prod, "-o", "xml"},
	} {
		code, _, errOut := run(bad...)
		assert.Equal(t, exitUsage, code, "%v: %s", bad, errOut)
	}
}
