package engine_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/policytest/engine"
	"github.com/accelc/accelc/pkg/render"
)

// TestMutatePoolProfile runs gpu-pools' mutators through Gatekeeper's own
// expander on a pod that names only its profile, by label: a time-sliced
// profile with a fallback pool. The pod comes out confined to the
// profile's types and pools, preferring the pools in order, tolerating
// their taint, annotated, and queued in its profile's LocalQueue.
func TestMutatePoolProfile(t *testing.T) {
	dir, _, _, tree := example(t, "gpu-pools")
	mut, err := engine.NewMutator(tree, []string{"ml-research"})
	require.NoError(t, err)
	pod, err := os.ReadFile(filepath.Join(dir, "admission/pods/research-by-label.yaml"))
	require.NoError(t, err)
	out, err := mut.Mutate(pod)
	require.NoError(t, err)

	type expr struct {
		Key      string   `json:"key"`
		Operator string   `json:"operator"`
		Values   []string `json:"values"`
	}
	var got struct {
		Metadata struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			PriorityClassName string `json:"priorityClassName"`
			Affinity          struct {
				NodeAffinity struct {
					Required struct {
						Terms []struct {
							MatchExpressions []expr `json:"matchExpressions"`
						} `json:"nodeSelectorTerms"`
					} `json:"requiredDuringSchedulingIgnoredDuringExecution"`
					Preferred []struct {
						Weight     int `json:"weight"`
						Preference struct {
							MatchExpressions []expr `json:"matchExpressions"`
						} `json:"preference"`
					} `json:"preferredDuringSchedulingIgnoredDuringExecution"`
				} `json:"nodeAffinity"`
			} `json:"affinity"`
			Tolerations []compile.Toleration `json:"tolerations"`
		} `json:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(out, &got))
	na := got.Spec.Affinity.NodeAffinity
	require.Len(t, na.Required.Terms, 1)
	assert.Equal(t, []expr{
		{Key: "accelerator.opendatahub.io/type", Operator: "In", Values: []string{"nvidia-a100-80gb", "nvidia-h100-80gb"}},
		{Key: "accelerator.opendatahub.io/pool", Operator: "In", Values: []string{"a100-shared-3", "h100-shared-2"}},
	}, na.Required.Terms[0].MatchExpressions)
	require.Len(t, na.Preferred, 2)
	assert.Equal(t, 100, na.Preferred[0].Weight)
	assert.Equal(t, []string{"a100-shared-3"}, na.Preferred[0].Preference.MatchExpressions[0].Values, "the pool first, the fallback after")
	assert.Equal(t, []string{"h100-shared-2"}, na.Preferred[1].Preference.MatchExpressions[0].Values)
	assert.Contains(t, got.Spec.Tolerations, compile.Toleration{Key: "example.com/gpu", Operator: "Equal", Value: "true", Effect: "NoSchedule"})
	assert.Equal(t, "research", got.Spec.PriorityClassName)
	assert.Equal(t, "a100-shared-3,h100-shared-2", got.Metadata.Annotations["accelerator.opendatahub.io/pools"])
	assert.Equal(t, "research-shared", got.Metadata.Annotations[render.ProfileAnnotation])
	assert.Equal(t, "ml-research", got.Metadata.Annotations["accelerator.opendatahub.io/team"])
	assert.Equal(t, "research-shared", got.Metadata.Labels[render.QueueNameLabel], "ml-research's quota is Kueue's: the pod joins its profile's LocalQueue")
	assert.Equal(t, "research", got.Metadata.Labels[render.WorkloadPriorityLabel], "and runs at the profile's WorkloadPriorityClass")
}
