package compile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// mkManager is a manager whose teams research and serving queue H200
// and A100 profiles; workers is its cluster.multikueue.workers.
func mkManager(workers string) string {
	return `package c

cluster: {
	name: "hub"
	multikueue: {
		role: "manager"
		workers: {
` + workers + `
		}
	}
}
profiles: {
	h200: {displayName: "H200", acceleratorTypes: ["nvidia-h200-141gb"]}
	a100: {displayName: "A100", acceleratorTypes: ["nvidia-a100-80gb"]}
}
teams: {
	research: {
		namespaces: ["research"]
		acceleratorTypes: ["nvidia-h200-141gb", "nvidia-a100-80gb"]
		quota: {"nvidia-h200-141gb": 8, "nvidia-a100-80gb": 8}
	}
	serving: {
		namespaces: ["serving"]
		acceleratorTypes: ["nvidia-h200-141gb"]
		quota: "nvidia-h200-141gb": 4
	}
}
`
}

func loadErrors(t *testing.T, src string) []string {
	t.Helper()
	_, err := compile.Load(cluster(t, map[string]string{"c.cue": src}))
	var errs compile.Errors
	require.True(t, errors.As(err, &errs), "want diagnostics, got %v", err)
	var out []string
	for _, d := range errs {
		out = append(out, d.String())
	}
	return out
}

func TestMultiKueueDispatch(t *testing.T) {
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": mkManager(`
			east: {kubeconfigSecret: "east-kubeconfig", profiles: ["h200"]}
			west: {kubeconfigSecret: "west-kubeconfig", teams: ["research"]}`)}))
	require.NoError(t, err)
	research, serving := &m.Teams[0], &m.Teams[1]
	a100, h200 := m.Profile("a100"), m.Profile("h200")
	assert.Equal(t, []string{"east", "west"}, m.DispatchWorkers(research, h200))
	assert.Equal(t, []string{"west"}, m.DispatchWorkers(research, a100))
	assert.Equal(t, []string{"east"}, m.DispatchWorkers(serving, h200))
	assert.Equal(t, [][]string{{"east"}, {"east", "west"}, {"west"}}, m.DispatchGroups())
	assert.Equal(t, "multikueue-east-west", compile.DispatchGroupName([]string{"east", "west"}))
	long := []string{strings.Repeat("a", 30), strings.Repeat("b", 30)}
	assert.Regexp(t, `^multikueue-[0-9a-f]{16}$`, compile.DispatchGroupName(long), "past a DNS label's 63 characters, a hash")

	var notes []string
	for _, n := range m.MultiKueueNotes() {
		notes = append(notes, n.Msg)
	}
	assert.Contains(t, notes, "research's h200 jobs are dispatched from hub to east or west, whichever admits first (ClusterQueue research.h200, AdmissionCheck multikueue-east-west); they run there on nvidia-h200-141gb")
	assert.Contains(t, notes, "serving's h200 jobs are dispatched from hub to east (ClusterQueue serving.h200, AdmissionCheck multikueue-east); they run there on nvidia-h200-141gb")
	assert.Len(t, notes, 3)

	// The workers' nodes: west has no H200, where research's h200 jobs
	// may go.
	h200Node := inventory.Node{Name: "e1", AcceleratorType: "nvidia-h200-141gb", Allocatable: 8}
	a100Node := inventory.Node{Name: "w1", AcceleratorType: "nvidia-a100-80gb", Allocatable: 8}
	m.Cluster.MultiKueue.WorkerNodes = map[string]*inventory.Inventory{
		"east": {Nodes: []inventory.Node{h200Node}},
		"west": {Nodes: []inventory.Node{a100Node}},
	}
	diags := m.CheckWorkerNodes()
	require.Len(t, diags, 1)
	assert.Regexp(t, `^testcluster-\d+/c\.cue:\d+:\d+: cluster\.multikueue\.workers\.west: worker west has no node of profile h200's types \(nvidia-h200-141gb\) in its inventory \(it has nvidia-a100-80gb\)`, diags[0].String())
	assert.Len(t, m.FleetInventory(&inventory.Inventory{}).Nodes, 2, "the manager's capacity is its workers'")
}

func TestMultiKueueVet(t *testing.T) {
	for _, tc := range []struct {
		name, workers string
		want          []string
	}{
		{"unknown profile", `east: {kubeconfigSecret: "k", profiles: ["h100"]}`,
			[]string{`cluster.multikueue.workers.east.profiles[0]: no profile h100 (profiles: a100, h200)`}},
		{"unknown team", `east: {kubeconfigSecret: "k", teams: ["ops"]}`,
			[]string{`cluster.multikueue.workers.east.teams[0]: no team ops`}},
		{"itself", `hub: {kubeconfigSecret: "k"}`,
			[]string{`cluster.multikueue.workers.hub: hub is this cluster: a manager dispatches to other clusters of the fleet`}},
		{"each worker its own errors", `east: {kubeconfigSecret: "k", profiles: ["h100"]}
			west: {kubeconfigSecret: "k", teams: ["serving"], profiles: ["a100"]}`,
			[]string{`cluster.multikueue.workers.east.profiles[0]: no profile h100`,
				`cluster.multikueue.workers.west: no team's queue goes to west`}},
		{"names collide", `x: {kubeconfigSecret: "k", profiles: ["h200"]}
			y: {kubeconfigSecret: "k", profiles: ["h200"]}
			"x-y": {kubeconfigSecret: "k", profiles: ["a100"]}`,
			[]string{`cluster.multikueue.workers: workers x, y and workers x-y would share the MultiKueueConfig multikueue-x-y (worker names joined by dashes): rename a worker`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := loadErrors(t, mkManager(tc.workers))
			require.Len(t, got, len(tc.want), "%v", got)
			for i, w := range tc.want {
				assert.Regexp(t, `^testcluster-\d+/c\.cue:\d+:\d+: `, got[i])
				assert.Contains(t, got[i], w)
			}
		})
	}
	t.Run("no queues", func(t *testing.T) {
		src := strings.Replace(mkManager(`east: {kubeconfigSecret: "k"}`), "name: \"hub\"", "name: \"hub\"\n\tquotas: \"resourcequota\"", 1)
		got := loadErrors(t, src)
		require.Len(t, got, 1, "%v", got)
		assert.Contains(t, got[0], "cluster.multikueue.role: a MultiKueue manager dispatches what its Kueue queues admit, and this cluster queues nothing")
	})
	t.Run("worker names itself its manager", func(t *testing.T) {
		got := loadErrors(t, `package c
cluster: {name: "east", multikueue: {role: "worker", manager: "east"}}
`)
		require.Len(t, got, 1)
		assert.Contains(t, got[0], "cluster.multikueue.manager: east is this cluster")
	})
}
