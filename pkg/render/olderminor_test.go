package render_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// TestOlderMinorLabelsFromQueue: hetero-prod rendered for Kubernetes 1.34
// has no MutatingAdmissionPolicy (the API server serves none) and, per
// profile that schedules through Kueue, a mutator labelling the pods and
// the single pod templates that join the profile's LocalQueue in its
// teams' namespaces; rendered for 1.36 (the default) it is the other way
// round.
func TestOlderMinorLabelsFromQueue(t *testing.T) {
	m, err := compile.Load(examplesDir + "/hetero-prod")
	require.NoError(t, err)
	newer := renderModel(t, m)
	m.Cluster.KubernetesVersion = "1.34"
	older := renderModel(t, m)

	count := func(tree render.Tree, prefix string) int {
		n := 0
		for _, p := range tree.Paths() {
			if strings.HasPrefix(p, prefix) {
				n++
			}
		}
		return n
	}
	assert.Positive(t, count(newer, "mutations/mutatingadmissionpolicy-"))
	assert.Zero(t, count(newer, "mutations/assignmetadata-accelc-standard-gpu-profile-from-queue"))
	assert.Zero(t, count(older, "mutations/mutatingadmissionpolicy"), "no MutatingAdmissionPolicy or binding before 1.36")

	// The constraint is told which kinds' templates are labelled from
	// their queue, and only before 1.36.
	params := func(tree render.Tree) map[string]any {
		var c struct {
			Spec struct {
				Parameters map[string]any `json:"parameters"`
			} `json:"spec"`
		}
		require.NoError(t, yaml.Unmarshal(tree[render.DirConstraints+"/accelcadmission-"+render.ConstraintName+".yaml"], &c))
		return c.Spec.Parameters
	}
	assert.NotContains(t, params(newer), "labelledFromQueue")
	assert.Equal(t, map[string]any{"apps/Deployment": true, "apps/StatefulSet": true, "apps/ReplicaSet": true, "apps/DaemonSet": true, "batch/Job": true}, params(older)["labelledFromQueue"])

	var queued int
	for i := range m.Profiles {
		p := &m.Profiles[i]
		teams := m.QueueTeams(p)
		pod, hasPod := older["mutations/assignmetadata-accelc-"+p.Name+"-profile-from-queue.yaml"]
		tmpl, hasTmpl := older["mutations/assign-accelc-"+p.Name+"-template-profile-from-queue.yaml"]
		if len(teams) == 0 || !p.Offered() {
			assert.False(t, hasPod || hasTmpl, "profile %s does not schedule through Kueue: nothing labels from a queue", p.Name)
			continue
		}
		queued++
		require.True(t, hasPod && hasTmpl, "profile %s", p.Name)
		var namespaces []string
		for _, team := range teams {
			namespaces = append(namespaces, team.Namespaces...)
		}
		for _, data := range [][]byte{pod, tmpl} {
			var mu struct {
				Spec struct {
					Location string `json:"location"`
					Match    struct {
						Namespaces    []string `json:"namespaces"`
						LabelSelector struct {
							MatchLabels map[string]string `json:"matchLabels"`
						} `json:"labelSelector"`
					} `json:"match"`
					Parameters struct {
						Assign struct {
							Value string `json:"value"`
						} `json:"assign"`
					} `json:"parameters"`
				} `json:"spec"`
			}
			require.NoError(t, yaml.Unmarshal(data, &mu))
			assert.Equal(t, map[string]string{render.QueueNameLabel: render.LocalQueueName(p)}, mu.Spec.Match.LabelSelector.MatchLabels, p.Name)
			assert.ElementsMatch(t, namespaces, mu.Spec.Match.Namespaces, "profile %s: its teams' namespaces only", p.Name)
			assert.Equal(t, p.Name, mu.Spec.Parameters.Assign.Value)
			assert.True(t, strings.HasSuffix(mu.Spec.Location, `labels."`+m.Cluster.LabelPrefix+`/profile"`), mu.Spec.Location)
		}
	}
	assert.Positive(t, queued)
	// What does not depend on the minor is the same.
	for p, data := range newer {
		if strings.HasPrefix(p, "mutations/") || strings.HasPrefix(p, "catalog-service/configmap-accelc-catalog-config") || strings.HasPrefix(p, render.DirConstraints+"/accelcadmission-") {
			continue
		}
		assert.Equal(t, string(data), string(older[p]), "%s differs between 1.36 and 1.34", p)
	}
}

func renderModel(t *testing.T, m *compile.Model) render.Tree {
	t.Helper()
	tree, err := render.Cluster(m, &inventory.Inventory{})
	require.NoError(t, err)
	return tree
}
