package render_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// sharingSrc is two teams lending each other H200s and A100s in cohort
// gpu-pool, under the engineering department; research weighs 2 against
// serving's 1. H200 nodes have a topology (block, NVLink domain, host),
// and profile train keeps a workload's pods in one NVLink domain.
const sharingSrc = `package c

cluster: {
	name: "lab"
	enforcement: "deny"
	cohorts: {
		"gpu-pool": {parent: "engineering", fairShare: weight: 3}
		engineering: {}
	}
	topology: "nvidia-h200-141gb": levels: [
		{name: "block", nodeLabel: "example.com/block"},
		{name: "nvlink", nodeLabel: "nvidia.com/gpu.clique"},
		{name: "host", nodeLabel: "kubernetes.io/hostname"},
	]
}
profiles: {
	train: {displayName: "Train", acceleratorTypes: ["nvidia-h200-141gb"], topology: required: "nvlink"}
	serve: {displayName: "Serve", acceleratorTypes: ["nvidia-a100-80gb"]}
}
teams: {
	research: {
		namespaces: ["research"]
		acceleratorTypes: ["nvidia-h200-141gb", "nvidia-a100-80gb"]
		quota: {"nvidia-h200-141gb": 8, "nvidia-a100-80gb": 0}
		cohort: "gpu-pool"
		fairShare: weight: 2
	}
	serving: {
		namespaces: ["serving"]
		acceleratorTypes: ["nvidia-h200-141gb", "nvidia-a100-80gb"]
		quota: {"nvidia-h200-141gb": 8, "nvidia-a100-80gb": 4}
		cohort: "gpu-pool"
	}
}
`

func renderSharing(t *testing.T, src string) map[string][]byte {
	t.Helper()
	objs, err := render.Render(loadCUE(t, src), &inventory.Inventory{})
	require.NoError(t, err)
	tree, err := render.BuildTree("lab", objs, render.Provenance{})
	require.NoError(t, err)
	return tree
}

func readObject(t *testing.T, tree map[string][]byte, path string) map[string]any {
	t.Helper()
	require.Contains(t, tree, path)
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal(tree[path], &obj))
	return obj
}

// TestFairSharing: a team's weight is its Cohort's fairSharing.weight, a
// declared cohort is a Cohort under its parent with its own weight, and
// Kueue's Configuration turns fair sharing on with Kueue's default
// preemption strategies. A team without a weight writes none (Kueue's 1).
func TestFairSharing(t *testing.T) {
	tree := renderSharing(t, sharingSrc)
	research := readObject(t, tree, "queues/cohort-research.yaml")
	assert.Equal(t, map[string]any{"weight": "2"}, research["spec"].(map[string]any)["fairSharing"])
	assert.Equal(t, "gpu-pool", research["spec"].(map[string]any)["parentName"])
	serving := readObject(t, tree, "queues/cohort-serving.yaml")
	assert.NotContains(t, serving["spec"], "fairSharing")

	pool := readObject(t, tree, "queues/cohort-gpu-pool.yaml")
	assert.Equal(t, map[string]any{"parentName": "engineering", "fairSharing": map[string]any{"weight": "3"}}, pool["spec"])
	eng := readObject(t, tree, "queues/cohort-engineering.yaml")
	assert.Equal(t, map[string]any{}, eng["spec"])

	cm := readObject(t, tree, "queues/configmap-accelc-kueue-configuration.yaml")
	cfg := cm["data"].(map[string]any)["configuration.yaml"].(string)
	assert.Contains(t, cfg, "fairSharing:\n  preemptionStrategies:\n  - LessThanOrEqualToFinalShare\n  - LessThanInitialShare\n")

	// Without a weight anywhere, fair sharing stays off.
	off := renderSharing(t, strings.NewReplacer("fairShare: weight: 2", "", ", fairShare: weight: 3", "").Replace(sharingSrc))
	cm = readObject(t, off, "queues/configmap-accelc-kueue-configuration.yaml")
	assert.NotContains(t, cm["data"].(map[string]any)["configuration.yaml"], "fairSharing")
}

// TestTopology: a type's topology is a Kueue Topology named after it,
// which the type's flavor names; the flavor holds the CPU and memory of
// its pods (Kueue places a pod by topology in one flavor for all it
// asks), so the team's Cohort joins cpu and memory into the GPU group,
// and the profile's queue is one group of its flavors. The profile's pods
// and Jobs get Kueue's pod-set annotation with the level's node label.
// A profile without a topology keeps its two groups.
func TestTopology(t *testing.T) {
	tree := renderSharing(t, sharingSrc)
	topo := readObject(t, tree, "queues/topology-nvidia-h200-141gb.yaml")
	assert.Equal(t, "kueue.x-k8s.io/v1beta2", topo["apiVersion"])
	assert.Equal(t, map[string]any{"levels": []any{
		map[string]any{"nodeLabel": "example.com/block"},
		map[string]any{"nodeLabel": "nvidia.com/gpu.clique"},
		map[string]any{"nodeLabel": "kubernetes.io/hostname"},
	}}, topo["spec"])
	flavor := readObject(t, tree, "queues/resourceflavor-nvidia-h200-141gb.yaml")
	assert.Equal(t, "nvidia-h200-141gb", flavor["spec"].(map[string]any)["topologyName"])
	a100 := readObject(t, tree, "queues/resourceflavor-nvidia-a100-80gb.yaml")
	assert.NotContains(t, a100["spec"], "topologyName")

	var q clusterQueue
	require.NoError(t, yaml.Unmarshal(tree["queues/clusterqueue-research.train.yaml"], &q))
	require.Len(t, q.Spec.ResourceGroups, 1)
	assert.Equal(t, []string{"nvidia.com/gpu", "cpu", "memory"}, q.Spec.ResourceGroups[0].CoveredResources)
	assert.Equal(t, "nvidia-h200-141gb", q.Spec.ResourceGroups[0].Flavors[0].Name)
	require.NoError(t, yaml.Unmarshal(tree["queues/clusterqueue-serving.serve.yaml"], &q))
	require.Len(t, q.Spec.ResourceGroups, 2)

	var cohort clusterQueue
	require.NoError(t, yaml.Unmarshal(tree["queues/cohort-research.yaml"], &cohort))
	require.Len(t, cohort.Spec.ResourceGroups, 1, "cpu and memory join the GPU group")
	g := cohort.Spec.ResourceGroups[0]
	assert.Equal(t, []string{"nvidia.com/gpu", "cpu", "memory"}, g.CoveredResources)
	var names []string
	for _, f := range g.Flavors {
		names = append(names, f.Name)
		require.Len(t, f.Resources, 3)
	}
	assert.Equal(t, []string{"nvidia-h200-141gb", "nvidia-a100-80gb", "accelc-default"}, names)

	var found []string
	for path, b := range tree {
		if strings.Contains(path, "topology") && strings.HasPrefix(path, "mutations/") {
			found = append(found, path)
			if strings.Contains(path, "binding") {
				continue
			}
			assert.Contains(t, string(b), "kueue.x-k8s.io/podset-required-topology")
			assert.Contains(t, string(b), "nvidia.com/gpu.clique")
		}
	}
	assert.ElementsMatch(t, []string{
		"mutations/mutatingadmissionpolicy-accelc-job-topology.yaml", "mutations/mutatingadmissionpolicybinding-accelc-job-topology.yaml",
		"mutations/mutatingadmissionpolicy-accelc-pod-topology.yaml", "mutations/mutatingadmissionpolicybinding-accelc-pod-topology.yaml",
	}, found)
}

// TestFairSharingInTeam: admission fair sharing is the team's
// ClusterQueues' admissionScope, its weighed namespaces' LocalQueues'
// fairSharing, and the settings in Kueue's Configuration; a profile's
// weight is its ClusterQueues' fairSharing.
func TestFairSharingInTeam(t *testing.T) {
	tree := renderSharing(t, `package c

cluster: {
	name: "lab"
	admissionFairSharing: usageSamplingInterval: "1m"
}
profiles: {
	train: {displayName: "Train", acceleratorTypes: ["nvidia-h200-141gb"], fairShare: weight: 3}
	notebook: {displayName: "Notebook", acceleratorTypes: ["nvidia-h200-141gb"]}
}
teams: lab: {
	namespaces: ["lab-a", "lab-b"]
	acceleratorTypes: ["nvidia-h200-141gb"]
	quota: "nvidia-h200-141gb": 4
	admissionFairSharing: namespaces: "lab-b": 0.5
}
`)
	train := readObject(t, tree, "queues/clusterqueue-lab.train.yaml")["spec"].(map[string]any)
	assert.Equal(t, map[string]any{"admissionMode": "UsageBasedAdmissionFairSharing"}, train["admissionScope"])
	assert.Equal(t, map[string]any{"weight": "3"}, train["fairSharing"])
	notebook := readObject(t, tree, "queues/clusterqueue-lab.notebook.yaml")["spec"].(map[string]any)
	assert.NotContains(t, notebook, "fairSharing", "weight 1 is Kueue's default")
	assert.Contains(t, notebook, "admissionScope")

	assert.Equal(t, map[string]any{"weight": "500m"}, readObject(t, tree, "queues/localqueue-lab-b-train.yaml")["spec"].(map[string]any)["fairSharing"])
	assert.NotContains(t, readObject(t, tree, "queues/localqueue-lab-a-train.yaml")["spec"], "fairSharing")

	cm := readObject(t, tree, "queues/configmap-accelc-kueue-configuration.yaml")
	cfg := cm["data"].(map[string]any)["configuration.yaml"].(string)
	assert.Contains(t, cfg, "admissionFairSharing:\n  usageHalfLifeTime: 168h\n  usageSamplingInterval: 1m\n")
	assert.Contains(t, cfg, "fairSharing:\n  preemptionStrategies:")
}

// TestAdmissionFairGolden renders the end-to-end test's admission-fair
// cluster's queues and compares them with testdata/golden-e2e.
func TestAdmissionFairGolden(t *testing.T) {
	e2eQueuesGolden(t, "../../e2e/testdata/admission-fair", "admission-fair")
}

// TestTopologyStages: the topology mutations change what Kueue does, so
// they follow the rollout: none while every namespace is in dryrun or
// warn, and with one team at deny only in its namespaces (the Job
// policy's binding and the pods' AssignMetadata alike).
func TestTopologyStages(t *testing.T) {
	dryrun := renderSharing(t, strings.Replace(sharingSrc, `enforcement: "deny"`, `enforcement: "dryrun"`, 1))
	for path := range dryrun {
		assert.False(t, strings.HasPrefix(path, "mutations/") && strings.Contains(path, "topology"), "%s: a mutation under dryrun", path)
	}
	assert.Contains(t, dryrun, "queues/topology-nvidia-h200-141gb.yaml", "Kueue's Topology itself stays")
	warn := renderSharing(t, strings.Replace(sharingSrc, `enforcement: "deny"`, `enforcement: "warn"`, 1))
	for path := range warn {
		assert.False(t, strings.HasPrefix(path, "mutations/") && strings.Contains(path, "topology"), "%s: a mutation under warn", path)
	}

	staged := renderSharing(t, strings.Replace(sharingSrc, `enforcement: "deny"`, `enforcement: "dryrun"`, 1)+`
teams: research: enforcement: "deny"
`)
	for _, policy := range []string{"accelc-job-topology", "accelc-pod-topology"} {
		binding := readObject(t, staged, "mutations/mutatingadmissionpolicybinding-"+policy+".yaml")
		sel, _ := json.Marshal(binding["spec"].(map[string]any)["matchResources"])
		assert.JSONEq(t, `{"namespaceSelector": {"matchExpressions": [{"key": "admission.gatekeeper.sh/ignore", "operator": "DoesNotExist"}, {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["research"]}]}}`, string(sel), policy)
	}
	assert.NotContains(t, staged, "mutations/assignmetadata-accelc-train-topology.yaml", "on 1.36 the pod topology policy writes it, not a Gatekeeper mutator")

	// Before 1.36 with no accelc webhook, only a Gatekeeper mutator can
	// write a pod's topology, in the same namespaces; vet says what it
	// cannot do.
	older := renderSharing(t, strings.Replace(sharingSrc, `enforcement: "deny"`, `enforcement: "dryrun"`, 1)+`
teams: research: enforcement: "deny"
cluster: kubernetesVersion: "1.34"
`)
	assign := readObject(t, older, "mutations/assignmetadata-accelc-train-topology.yaml")
	match, _ := json.Marshal(assign["spec"].(map[string]any)["match"])
	assert.Contains(t, string(match), `"namespaces":["research"]`)
}
