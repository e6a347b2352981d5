package estimate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/estimate"
)

// TestRecommendSharedDevices: on gpu-pools, a profile over shared GPUs is
// judged by what a pod gets, not by the GPU: a 1g.10gb slice has 10GB, a
// replica of an A100 time-sliced three ways about 26GB, and each costs its
// share of the GPU's price. A 30GB model fits only the 3g.40gb slice and
// the H100 halves.
func TestRecommendSharedDevices(t *testing.T) {
	dir := "../../examples/clusters/gpu-pools"
	res, err := accelc.Cluster(context.Background(), dir, accelc.Options{})
	require.NoError(t, err)
	doc := res.Catalog()
	r := estimate.Recommend(&doc, estimate.Needs{MinMemoryGiB: 30})
	require.NotNil(t, r.Best)
	assert.Equal(t, "inference-3g", r.Best.Profile)
	assert.Equal(t, 40, r.Best.MemoryGB)
	require.NotNil(t, r.Best.CostPerHour)
	assert.InDelta(t, 3.0*3/7, *r.Best.CostPerHour, 1e-9, "three sevenths of an A100's $3")
	byProfile := map[string]estimate.Choice{}
	for _, c := range r.Choices {
		if c.Type == "nvidia-a100-80gb" {
			byProfile[c.Profile] = c
		}
	}
	assert.False(t, byProfile["inference-1g"].Qualifies)
	assert.Contains(t, byProfile["inference-1g"].Why, "10GB < 30GB needed")
	assert.False(t, byProfile["a100-shared"].Qualifies)
	assert.Contains(t, byProfile["a100-shared"].Why, "1/3 of a GPU (time-sliced): ~26GB, memory not isolated")
}
