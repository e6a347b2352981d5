package estimate_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/estimate"
)

// TestParseSize keeps binary and decimal units apart: 80GiB is 2^30
// bytes each, 80GB 10^9 (issue 18: --min-memory 80GiB was read as 80GB).
func TestParseSize(t *testing.T) {
	for in, want := range map[string]float64{
		"80GiB": 80 << 30, "80Gi": 80 << 30, "80gib": 80 << 30, " 80GiB ": 80 << 30,
		"80GB": 80e9, "80G": 80e9, "80gb": 80e9,
		"1.5TiB": 1.5 * (1 << 40), "2TB": 2e12, "512MiB": 512 << 20, "500MB": 500e6,
	} {
		got, err := estimate.ParseSize(in)
		require.NoError(t, err, in)
		assert.InDelta(t, want, got.Bytes, 1, in)
	}
	g, _ := estimate.ParseSize("80GiB")
	assert.Equal(t, "80GiB (85.9GB)", g.String())
	d, _ := estimate.ParseSize("80gb")
	assert.Equal(t, "80GB", d.String())
	for in, why := range map[string]string{
		"80":   `"80" has no unit: write 80GiB (binary, 2^30 bytes) or 80GB (decimal, 10^9 bytes)`,
		"lots": `"lots" is not a memory size`,
		"-8GB": `"-8GB" is not a memory size`,
		"GiB":  `"GiB" is not a memory size`,
		"0GB":  `"0GB" is not a memory size`,
	} {
		_, err := estimate.ParseSize(in)
		if assert.Error(t, err, in) {
			assert.Contains(t, err.Error(), why, in)
		}
	}
}

// TestRecommendBinaryAndDecimal: a type's memory is its catalog figure in
// GB (10^9 bytes). An 80GB A100 has 80GB, which is less than 80GiB
// (85.9GB): asked for 80GiB it does not qualify; asked for 80GB it does.
func TestRecommendBinaryAndDecimal(t *testing.T) {
	binary, err := estimate.ParseSize("80GiB")
	require.NoError(t, err)
	decimal, err := estimate.ParseSize("80GB")
	require.NoError(t, err)
	judge := func(need estimate.Size) map[string]estimate.Choice {
		out := map[string]estimate.Choice{}
		for _, c := range estimate.Recommend(seedCatalog(4), estimate.Needs{MinMemory: need}).Choices {
			out[c.Type] = c
		}
		return out
	}
	g := judge(binary)
	assert.False(t, g["nvidia-a100-80gb"].Qualifies)
	assert.Contains(t, strings.Join(g["nvidia-a100-80gb"].Why, "; "), "80GB < 80GiB (85.9GB) needed")
	assert.True(t, g["nvidia-h200-141gb"].Qualifies)
	assert.Contains(t, strings.Join(g["nvidia-h200-141gb"].Why, "; "), "141GB ≥ 80GiB (85.9GB)")
	d := judge(decimal)
	assert.True(t, d["nvidia-a100-80gb"].Qualifies)
	assert.Contains(t, strings.Join(d["nvidia-a100-80gb"].Why, "; "), "80GB ≥ 80GB")
}
