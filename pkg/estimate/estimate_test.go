package estimate_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/estimate"
)

func ptr[T any](v T) *T { return &v }

// seedCatalog is use cases 1, 3 and 4's cluster: H200 ($5/h), A100 80GB
// ($3/h), V100 16GB ($1.50/h), with the measurements the seed quotes.
func seedCatalog(h200Available int) *catalogdoc.Document {
	eight := 8
	typ := func(id, name, arch string, mem int, fp16, bf16, cost float64, avail int, perf map[string]catalog.Performance) catalogdoc.Type {
		return catalogdoc.Type{ID: id, DisplayName: name, Architecture: arch, MemoryGB: mem, FP16TFLOPS: fp16, BF16TFLOPS: bf16,
			CostPerHour: ptr(cost), Available: avail, Performance: perf}
	}
	return &catalogdoc.Document{Profiles: []catalogdoc.Profile{
		{Name: "premium-gpu", DisplayName: "Premium GPU", Enabled: true, GPU: compile.GPURange{Max: &eight}, Types: []catalogdoc.Type{
			typ("nvidia-h200-141gb", "NVIDIA H200 141GB", "Hopper", 141, 989, 989, 5, h200Available, map[string]catalog.Performance{
				"llama-3-70b": {TokensPerSecond: 120, GPUs: 4}, "gpt2-1.5b": {TrainingTokensPerSecond: 95000, GPUs: 1}}),
		}},
		{Name: "large-gpu", DisplayName: "Large GPU", Enabled: true, GPU: compile.GPURange{Max: &eight}, Types: []catalogdoc.Type{
			typ("nvidia-a100-80gb", "NVIDIA A100 80GB", "Ampere", 80, 312, 312, 3, 3, map[string]catalog.Performance{
				"llama-3-70b": {TokensPerSecond: 75, GPUs: 4}}),
		}},
		{Name: "standard-gpu", DisplayName: "Standard GPU", Enabled: true, GPU: compile.GPURange{Max: ptr(4)}, Types: []catalogdoc.Type{
			typ("nvidia-v100-16gb", "NVIDIA V100 16GB", "Volta", 16, 125, 0, 1.5, 6, nil),
		}},
		{Name: "old", DisplayName: "Disabled", Enabled: false, Types: []catalogdoc.Type{typ("nvidia-t4-16gb", "NVIDIA T4 16GB", "Turing", 16, 65, 0, 0.5, 1, nil)}},
	}}
}

func TestParseCount(t *testing.T) {
	for in, want := range map[string]float64{"1.5B": 1.5e9, "70b": 70e9, "2T": 2e12, "350M": 350e6, "100k": 1e5, "42": 42, " 7B ": 7e9} {
		got, err := estimate.ParseCount(in)
		require.NoError(t, err, in)
		assert.InDelta(t, want, got, want*1e-12, in)
	}
	for _, bad := range []string{"", "B", "-1B", "seven", "1.5X", "NaN"} {
		_, err := estimate.ParseCount(bad)
		assert.Error(t, err, bad)
	}
}

// TestTrainHandWorked pins the arithmetic of the package documentation on
// GPT-2 1.5B over 2B tokens, worked by hand:
//
//	FLOPs = 6 × 1.5e9 × 2e9 = 1.8e19
//	H200: 1.8e19 / (989e12 × 0.4) = 45,500 s = 12.639 h; × $5 = $63.20
//	A100: 1.8e19 / (312e12 × 0.4) = 144,231 s = 40.06 h; × $3 = $120.19
//	V100: 1.8e19 / (125e12 × 0.4) = 360,000 s = 100 h (FP16: Volta has no BF16)
//	memory: 16 B × 1.5e9 = 24GB per GPU: fits 141 and 80, not 16.
func TestTrainHandWorked(t *testing.T) {
	es := estimate.Train(seedCatalog(4), estimate.Training{Params: 1.5e9, Tokens: 2e9, Precision: "bf16"})
	require.Len(t, es, 3, "the disabled profile is left out")
	by := map[string]estimate.Estimate{}
	for _, e := range es {
		by[e.Type] = e
	}
	h200, a100, v100 := by["nvidia-h200-141gb"], by["nvidia-a100-80gb"], by["nvidia-v100-16gb"]
	assert.InDelta(t, 12.639, *h200.Hours, 0.001)
	assert.InDelta(t, 63.195, *h200.TotalCost, 0.001)
	assert.InDelta(t, 40.064, *a100.Hours, 0.001)
	assert.InDelta(t, 120.19, *a100.TotalCost, 0.01)
	assert.InDelta(t, 100.0, *v100.Hours, 1e-9)
	assert.Contains(t, v100.Basis, "125 FP16 TFLOPS (Volta has no BF16) × MFU 0.40")
	assert.InDelta(t, 24.0, h200.MemoryGB, 1e-9)
	assert.True(t, h200.Fits)
	assert.False(t, v100.Fits)
	assert.Contains(t, v100.Why, "needs 24GB per GPU")
	assert.Equal(t, []string{"nvidia-h200-141gb", "nvidia-a100-80gb", "nvidia-v100-16gb"}, []string{es[0].Type, es[1].Type, es[2].Type}, "fastest first, what does not fit last")
	assert.Equal(t, "Premium GPU (NVIDIA H200 141GB): 12.6 hours at $5.00/hour = $63.20 total", h200.String())

	// Two V100s shard the state: 12GB each fits; time halves, cost stays.
	two := estimate.Train(seedCatalog(4), estimate.Training{Params: 1.5e9, Tokens: 2e9, GPUs: 2})
	for _, e := range two {
		if e.Type == "nvidia-v100-16gb" {
			assert.True(t, e.Fits)
			assert.InDelta(t, 50.0, *e.Hours, 1e-9)
			assert.InDelta(t, 150.0, *e.TotalCost, 1e-9)
		}
	}
}

// TestTrainMeasured: a measurement an admin recorded wins over the
// datasheet: 2e9 tokens / 95,000 tokens/s = 21,053 s = 5.85 h.
func TestTrainMeasured(t *testing.T) {
	es := estimate.Train(seedCatalog(4), estimate.Training{Params: 1.5e9, Tokens: 2e9, Model: "gpt2-1.5b", MFU: 0.5})
	assert.Equal(t, "nvidia-h200-141gb", es[0].Type)
	assert.InDelta(t, 5.848, *es[0].Hours, 0.001)
	assert.Contains(t, es[0].Basis, "measured 95,000 tokens/s per GPU for gpt2-1.5b")
	assert.Contains(t, es[1].Basis, "MFU 0.50", "without a measurement, the formula with the MFU given")
}

// TestTrainNoEstimate: a type with no throughput figure, or a precision
// the catalog has no figure for, gets "no estimate", not a guess.
func TestTrainNoEstimate(t *testing.T) {
	doc := seedCatalog(4)
	doc.Profiles[1].Types[0].BF16TFLOPS, doc.Profiles[1].Types[0].FP16TFLOPS = 0, 0
	es := estimate.Train(doc, estimate.Training{Params: 7e9, Tokens: 1e9})
	last := es[len(es)-1]
	assert.Equal(t, "nvidia-a100-80gb", last.Type)
	assert.Nil(t, last.Hours)
	assert.Nil(t, last.TotalCost)
	assert.Contains(t, last.String(), "no estimate: no BF16 throughput or measured performance for NVIDIA A100 80GB")

	es = estimate.Train(seedCatalog(4), estimate.Training{Params: 7e9, Tokens: 1e9, Precision: "fp8"})
	for _, e := range es {
		assert.Nil(t, e.Hours)
		assert.Contains(t, e.Why, "no FP8 throughput")
	}
}

// TestRecommendUseCase3 is llama-3-70b: 80GB+, Hopper preferred, 120
// tokens/s on H200 and 75 on A100.
func TestRecommendUseCase3(t *testing.T) {
	needs := estimate.Needs{MinMemory: gb(80), PreferArch: "Hopper", Model: "llama-3-70b", GPUs: 4}
	r := estimate.Recommend(seedCatalog(4), needs)
	require.NotNil(t, r.Best)
	assert.Equal(t, "premium-gpu", r.Best.Profile)
	assert.Equal(t, "use Premium GPU (NVIDIA H200 141GB)", r.Advice)
	assert.True(t, r.Choices[1].Qualifies)
	assert.Equal(t, "large-gpu", r.Choices[1].Profile)
	assert.False(t, r.Choices[2].Qualifies)
	assert.Contains(t, strings.Join(r.Choices[2].Why, "; "), "16GB < 80GB needed")

	// Alternative flow 1: every H200 in use.
	r = estimate.Recommend(seedCatalog(0), needs)
	assert.Equal(t, "large-gpu", r.Best.Profile)
	assert.Equal(t, "Premium GPU (NVIDIA H200 141GB) has 0 available: falling back to Large GPU (NVIDIA A100 80GB) - performance may be lower (75 vs 120 tokens/s)", r.Advice)

	// Objectives: 100 tokens/s leaves the A100 out; $12/hour for 4 GPUs
	// leaves the H200 ($20) out too.
	r = estimate.Recommend(seedCatalog(4), estimate.Needs{MinMemory: gb(80), Model: "llama-3-70b", GPUs: 4, MinTokensPerSecond: 100})
	assert.Equal(t, "premium-gpu", r.Best.Profile)
	r = estimate.Recommend(seedCatalog(4), estimate.Needs{MinMemory: gb(80), Model: "llama-3-70b", GPUs: 4, MinTokensPerSecond: 100, MaxCostPerHour: 12})
	assert.Nil(t, r.Best)
	assert.Contains(t, r.Advice, "no profile qualifies: requires at least 80GB per GPU, 100 tokens/s, at most $12.00/hour")
}

// TestRecommendNoneQualifies is use case 3's alternative flow 2: a V100
// cluster asked for 80GB.
func TestRecommendNoneQualifies(t *testing.T) {
	doc := seedCatalog(4)
	doc.Profiles = doc.Profiles[2:]
	r := estimate.Recommend(doc, estimate.Needs{MinMemory: gb(80)})
	assert.Nil(t, r.Best)
	assert.Equal(t, "no profile qualifies: requires at least 80GB per GPU; available: Standard GPU (NVIDIA V100 16GB) - provision suitable hardware", r.Advice)

	r = estimate.Recommend(doc, estimate.Needs{GPUs: 8})
	assert.Nil(t, r.Best, "the V100 profile allows 4 GPUs")
}

// TestMIGSlice: a profile handing out MIG slices offers the slice's
// memory, and gets no time estimate.
func TestMIGSlice(t *testing.T) {
	doc := seedCatalog(4)
	doc.Profiles[1].ResourceName = "nvidia.com/mig-3g.40gb"
	r := estimate.Recommend(doc, estimate.Needs{MinMemory: gb(80)})
	for _, c := range r.Choices {
		if c.Profile == "large-gpu" {
			assert.False(t, c.Qualifies)
			assert.Equal(t, 40, c.MemoryGB)
			assert.Contains(t, c.Why, "a 3g.40gb MIG slice")
		}
	}
	for _, e := range estimate.Train(doc, estimate.Training{Params: 1e9, Tokens: 1e9}) {
		if e.Profile == "large-gpu" {
			assert.Nil(t, e.Hours)
			assert.Contains(t, e.Why, "MIG slice")
		}
	}
}

// gb is a size in GB (10^9 bytes).
func gb(n float64) estimate.Size {
	return estimate.Size{Bytes: n * 1e9, Text: strconv.FormatFloat(n, 'f', -1, 64) + "GB"}
}
