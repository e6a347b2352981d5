package render_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/render"
)

// multiKueueFleet is the example MultiKueue fleet: manager, gpu-east and
// gpu-west, rendered together as `accelc render --fleet` renders them.
const multiKueueFleet = examplesDir + "/fleet-multikueue"

func renderMultiKueueFleet(t *testing.T) map[string]render.Tree {
	t.Helper()
	clusters, err := accelc.Fleet(context.Background(), multiKueueFleet, accelc.Options{Stages: accelc.Rendered})
	require.NoError(t, err)
	trees := map[string]render.Tree{}
	for _, c := range clusters {
		require.NoError(t, c.Err, c.Dir)
		trees[c.Result.Model.Cluster.Name] = c.Result.Tree
	}
	require.Len(t, trees, 3)
	return trees
}

// TestMultiKueueGolden compares each cluster of the example fleet, file
// by file, with testdata/golden-multikueue/<cluster>/; `go test -update`
// refreshes them.
func TestMultiKueueGolden(t *testing.T) {
	for name, tree := range renderMultiKueueFleet(t) {
		goldenTree(t, filepath.Join("../../testdata/golden-multikueue", name), tree)
	}
}

// mkObject is what the test reads of a rendered Kueue object.
type mkObject struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		ClusterSource struct {
			KubeConfig struct {
				Location     string `json:"location"`
				LocationType string `json:"locationType"`
			} `json:"kubeConfig"`
		} `json:"clusterSource"`
		Clusters       []string `json:"clusters"`
		ControllerName string   `json:"controllerName"`
		Parameters     struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"parameters"`
		AdmissionChecksStrategy struct {
			AdmissionChecks []struct {
				Name      string   `json:"name"`
				OnFlavors []string `json:"onFlavors"`
			} `json:"admissionChecks"`
		} `json:"admissionChecksStrategy"`
		ClusterQueue string `json:"clusterQueue"`
	} `json:"spec"`
}

func readObjects(t *testing.T, tree render.Tree) map[string][]mkObject {
	t.Helper()
	out := map[string][]mkObject{}
	for _, p := range tree.Paths() {
		if strings.HasSuffix(p, "kustomization.yaml") {
			continue
		}
		var o mkObject
		require.NoError(t, yaml.Unmarshal(tree[p], &o), p)
		out[o.Kind] = append(out[o.Kind], o)
	}
	return out
}

// TestMultiKueueObjects: the manager has a MultiKueueCluster per worker
// naming its Secret, a MultiKueueConfig and an AdmissionCheck per set of
// workers, and each dispatched queue lists the check of its set on all
// its flavors; no Secret is rendered anywhere; each worker has, for every
// queue dispatched to it, the profile's LocalQueue in each of the team's
// namespaces, and no MultiKueue object or check of its own.
func TestMultiKueueObjects(t *testing.T) {
	trees := renderMultiKueueFleet(t)
	manager := readObjects(t, trees["manager"])

	secrets := map[string]string{}
	for _, c := range manager["MultiKueueCluster"] {
		assert.Equal(t, "Secret", c.Spec.ClusterSource.KubeConfig.LocationType)
		secrets[c.Metadata.Name] = c.Spec.ClusterSource.KubeConfig.Location
	}
	assert.Equal(t, map[string]string{"gpu-east": "gpu-east-kubeconfig", "gpu-west": "gpu-west-kubeconfig"}, secrets)

	configs := map[string][]string{}
	for _, c := range manager["MultiKueueConfig"] {
		configs[c.Metadata.Name] = c.Spec.Clusters
	}
	assert.Equal(t, map[string][]string{
		"multikueue-gpu-east":          {"gpu-east"},
		"multikueue-gpu-east-gpu-west": {"gpu-east", "gpu-west"},
		"multikueue-gpu-west":          {"gpu-west"},
	}, configs)
	require.Len(t, manager["AdmissionCheck"], 3)
	for _, ac := range manager["AdmissionCheck"] {
		assert.Equal(t, render.MultiKueueControllerName, ac.Spec.ControllerName)
		assert.Equal(t, "MultiKueueConfig", ac.Spec.Parameters.Kind)
		assert.Equal(t, ac.Metadata.Name, ac.Spec.Parameters.Name)
	}

	checks := map[string]string{}
	for _, cq := range manager["ClusterQueue"] {
		require.Len(t, cq.Spec.AdmissionChecksStrategy.AdmissionChecks, 1, cq.Metadata.Name)
		rule := cq.Spec.AdmissionChecksStrategy.AdmissionChecks[0]
		assert.Empty(t, rule.OnFlavors, "Kueue refuses a MultiKueue check on some flavors only")
		checks[cq.Metadata.Name] = rule.Name
	}
	assert.Equal(t, map[string]string{
		"ml-research.h200-train":   "multikueue-gpu-east-gpu-west",
		"ml-research.a100-train":   "multikueue-gpu-west",
		"model-serving.h200-train": "multikueue-gpu-east",
	}, checks)

	// The LocalQueues each worker needs: the manager's of the queues
	// dispatched to it.
	want := map[string][]string{"gpu-east": nil, "gpu-west": nil}
	for _, lq := range manager["LocalQueue"] {
		for worker, cfg := range map[string]string{"gpu-east": "gpu-east", "gpu-west": "gpu-west"} {
			if strings.Contains(checks[lq.Spec.ClusterQueue], cfg) {
				want[worker] = append(want[worker], lq.Metadata.Namespace+"/"+lq.Metadata.Name)
			}
		}
	}
	for worker, queues := range want {
		objs := readObjects(t, trees[worker])
		var have []string
		for _, lq := range objs["LocalQueue"] {
			have = append(have, lq.Metadata.Namespace+"/"+lq.Metadata.Name)
		}
		for _, q := range queues {
			assert.Contains(t, have, q, "%s lacks the LocalQueue the manager dispatches to", worker)
		}
		for _, kind := range []string{"MultiKueueCluster", "MultiKueueConfig", "AdmissionCheck"} {
			assert.Empty(t, objs[kind], worker)
		}
		for _, cq := range objs["ClusterQueue"] {
			assert.Empty(t, cq.Spec.AdmissionChecksStrategy.AdmissionChecks, "%s: %s", worker, cq.Metadata.Name)
		}
	}
	assert.ElementsMatch(t, []string{"ml-research/h200-train", "ml-research-dev/h200-train", "serving-prod/h200-train"}, want["gpu-east"])

	for name, tree := range trees {
		for _, p := range tree.Paths() {
			assert.False(t, strings.Contains(p, "/secret-"), "%s renders %s: the worker's kubeconfig is made out of band", name, p)
		}
		assert.False(t, slices.ContainsFunc(tree.Paths(), func(p string) bool { return strings.Contains(string(tree[p]), "kind: Secret\n") }), name)
	}
}
