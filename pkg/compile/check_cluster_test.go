package compile_test

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// rawNode is a node advertising capacity (and allocatable the same).
func rawNode(t *testing.T, name string, labels, capacity map[string]string) inventory.RawNode {
	t.Helper()
	data, err := json.Marshal(map[string]any{"kind": "Node", "metadata": map[string]any{"name": name, "labels": labels},
		"status": map[string]any{"capacity": capacity, "allocatable": capacity}})
	require.NoError(t, err)
	raw, problems, err := inventory.Decode(data)
	require.NoError(t, err)
	require.Empty(t, problems)
	return raw[0]
}

// checkErrors loads the cluster and checks it against the nodes and the
// namespaces (nil: unknown), giving the errors, positions made relative
// to the cluster directory.
func checkErrors(t *testing.T, src string, nodes []inventory.RawNode, namespaces []string) []string {
	t.Helper()
	dir := cluster(t, map[string]string{"c.cue": src})
	m, err := compile.Load(dir)
	require.NoError(t, err)
	snap := &inventory.Snapshot{Nodes: nodes, Source: &inventory.Source{Cluster: "lab", Namespaces: namespaces}}
	var out []string
	for _, d := range m.Check(snap.Classify(m.Catalog, inventory.Options{Pins: m.Pins})) {
		if d.Severity == compile.Error {
			out = append(out, strings.TrimPrefix(d.String(), filepath.ToSlash(filepath.Clean(dir))+"/"))
		}
	}
	return out
}

// loadErrorsHere is loadErrors with positions relative to the cluster
// directory.
func loadErrorsHere(t *testing.T, src string) []string {
	t.Helper()
	dir := cluster(t, map[string]string{"c.cue": src})
	_, err := compile.Load(dir)
	var errs compile.Errors
	require.ErrorAs(t, err, &errs)
	var out []string
	for _, d := range errs {
		out = append(out, strings.TrimPrefix(d.String(), filepath.ToSlash(filepath.Clean(dir))+"/"))
	}
	return out
}

// TestNodeResources: every extended resource a node advertises is a
// vendor's or a class's, or declared not an accelerator; vet refuses any
// other, once per resource, naming its nodes and what to do.
func TestNodeResources(t *testing.T) {
	h200 := map[string]string{"nvidia.com/gpu.product": "NVIDIA-H200", "nvidia.com/gpu.count": "8"}
	fpgaMsg := `c.cue:3:1: cluster.nonAcceleratorResources: nodes cpu-1 and cpu-2 advertise example.com/fpga, which accelc does not know: no accelerator class has it as its resource, and it is under no GPU vendor's domain. accelc's policies hold it as an accelerator (only a profile's pods may ask for it). If it is one, add a class with resourceName: "example.com/fpga" to the catalog (accelerators in CUE); if it is not, declare it in cluster.nonAcceleratorResources ("example.com/fpga", or "example.com/" for its whole domain)`
	for name, tc := range map[string]struct {
		cluster string // the body of cluster: {...}
		nodes   map[string]map[string]string
		want    []string
	}{
		"vendors' and the defaults' resources": {``, map[string]map[string]string{
			"gpu-1": {"cpu": "96", "nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32", "hugepages-1Gi": "0"},
			"cc-1":  {"nvidia.com/GH100_H200_141GB": "8", "huawei.com/Ascend910": "8", "devices.kubevirt.io/kvm": "1k"},
		}, nil},
		"an unknown device": {``, map[string]map[string]string{
			"cpu-1": {"cpu": "8", "example.com/fpga": "2"},
			"cpu-2": {"cpu": "8", "example.com/fpga": "2"},
			"gpu-1": {"nvidia.com/gpu": "8"},
		}, []string{fpgaMsg}},
		"two unknown, one node": {``, map[string]map[string]string{
			"cpu-1": {"smarter-devices/fuse": "10", "squat.ai/serial": "1"},
		}, []string{
			`c.cue:3:1: cluster.nonAcceleratorResources: node cpu-1 advertises smarter-devices/fuse, which accelc does not know:`,
			`c.cue:3:1: cluster.nonAcceleratorResources: node cpu-1 advertises squat.ai/serial, which accelc does not know:`,
		}},
		"declared by name and by domain": {`
	nonAcceleratorResources: ["smarter-devices/fuse", "squat.ai/", "hugepages-"]`, map[string]map[string]string{
			"cpu-1": {"smarter-devices/fuse": "10", "squat.ai/serial": "1"},
		}, nil},
		"declared by name, another of the domain not": {`
	nonAcceleratorResources: ["smarter-devices/fuse"]`, map[string]map[string]string{
			"cpu-1": {"smarter-devices/fuse": "10", "smarter-devices/vfio": "1"},
		}, []string{`c.cue:5:2: cluster.nonAcceleratorResources: node cpu-1 advertises smarter-devices/vfio, which accelc does not know:`}},
		"a setting replaces the default": {`
	nonAcceleratorResources: []`, map[string]map[string]string{
			"gpu-1": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "32"},
		}, []string{`c.cue:5:2: cluster.nonAcceleratorResources: node gpu-1 advertises vpc.amazonaws.com/efa, which accelc does not know:`}},
		"many nodes": {``, map[string]map[string]string{
			"n1": {"example.com/fpga": "1"}, "n2": {"example.com/fpga": "1"}, "n3": {"example.com/fpga": "1"},
			"n4": {"example.com/fpga": "1"}, "n5": {"example.com/fpga": "1"}, "n6": {"example.com/fpga": "1"}, "n7": {"example.com/fpga": "1"},
		}, []string{`nodes n1, n2, n3, n4, n5 and 2 more advertise example.com/fpga`}},
	} {
		t.Run(name, func(t *testing.T) {
			var nodes []inventory.RawNode
			for n, capacity := range tc.nodes {
				var labels map[string]string
				if capacity["nvidia.com/gpu"] != "" {
					labels = h200
				}
				nodes = append(nodes, rawNode(t, n, labels, capacity))
			}
			got := checkErrors(t, "package c\n\ncluster: {\n\tname: \"lab\""+tc.cluster+"\n}\n", nodes, nil)
			require.Len(t, got, len(tc.want), "%q", got)
			for i, w := range tc.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}

// TestNonAcceleratorResourcesRefused: a declaration that cannot hold.
func TestNonAcceleratorResourcesRefused(t *testing.T) {
	got := loadErrorsHere(t, `package c

cluster: {
	name: "lab"
	nonAcceleratorResources: ["nvidia.com/hostdev", "example.com/*", "acme.io/x1", "google.com/", ""]
}
accelerators: "acme-x1-32gb": {vendor: "nvidia", displayName: "Acme X1 32GB", model: "X1", architecture: "Acme", memoryGB: 32,
	resourceName: "acme.io/x1", identifiedBy: "nvidia.com/gpu.product": ["ACME-X1"]}
`)
	assert.Equal(t, []string{
		`c.cue:5:28: cluster.nonAcceleratorResources[0]: nvidia.com/hostdev is under a GPU or accelerator vendor's domain, whose every resource accelc's policies hold as an accelerator: declaring it not one changes nothing. Drop it`,
		`c.cue:5:50: cluster.nonAcceleratorResources[1]: "example.com/*" is neither a resource's name nor a prefix: write an exact name (example.com/fuse) or a prefix ending in / or - (example.com/)`,
		`c.cue:5:67: cluster.nonAcceleratorResources[2]: acme.io/x1 is the resource of accelerator class acme-x1-32gb, which accelc's policies hold as an accelerator: declaring it not one changes nothing. Drop it`,
		`c.cue:5:96: cluster.nonAcceleratorResources[4]: "" is neither a resource's name nor a prefix: write an exact name (example.com/fuse) or a prefix ending in / or - (example.com/)`,
	}, got)
}

// TestExclusionsExist: where the inventory lists the cluster's
// namespaces, an excluded name the cluster lacks is refused, naming what a
// user could create, unless only admins create namespaces or the CUE
// accepts it; without the list nothing is said.
func TestExclusionsExist(t *testing.T) {
	have := []string{"default", "gatekeeper-system", "gpu-operator", "kube-node-lease", "kube-public", "kube-system"}
	// at is where the default list is (the cluster's struct) or, for a
	// list written out, the element.
	missingAt := func(at string, i int, name string, of int) string {
		return at + `: cluster.excludedNamespaces[` + strconv.Itoa(i) + `]: the cluster has no namespace ` + name + ` (the inventory lists its ` + strconv.Itoa(of) + ` namespaces): a user who may create namespaces could create ` + name + `, and its pods would reach any accelerator ungoverned. Drop it if nothing of the cluster runs there; or create the namespace now; or, if only cluster admins can create namespaces, say so with cluster.namespaceCreation: "admins-only"; or, knowing that risk, accept it with cluster.excludedNamespacesAbsentOK: ["` + name + `"]`
	}
	missing := func(i int, name string, of int) string { return missingAt("c.cue:3:1", i, name, of) }
	for name, tc := range map[string]struct {
		cluster    string
		namespaces []string
		want       []string
	}{
		"the default, namespaces unknown":           {``, nil, nil},
		"the default, the operator in gpu-operator": {``, have, nil},
		"the default, nothing installed": {``, []string{"default", "kube-node-lease", "kube-public", "kube-system"},
			[]string{missing(3, "gatekeeper-system", 4), missing(4, "gpu-operator", 4)}},
		"a name nobody uses": {`
	excludedNamespaces: ["kube-system", "gpu-operator", "nvidia-gpu-operator"]`, have, []string{missingAt("c.cue:5:54", 2, "nvidia-gpu-operator", 6)}},
		"only what exists": {`
	excludedNamespaces: ["kube-system", "gpu-operator"]`, have, nil},
		"accepted": {`
	excludedNamespaces: ["kube-system", "gpu-operator", "nvidia-gpu-operator"]
	excludedNamespacesAbsentOK: ["nvidia-gpu-operator"]`, have, nil},
		"admins only": {`
	namespaceCreation: "admins-only"`, have, nil},
	} {
		t.Run(name, func(t *testing.T) {
			got := checkErrors(t, "package c\n\ncluster: {\n\tname: \"lab\""+tc.cluster+"\n}\n", nil, tc.namespaces)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestExcludedNamespacesAbsentOKRefused: only an excluded name can be
// accepted as absent.
func TestExcludedNamespacesAbsentOKRefused(t *testing.T) {
	got := loadErrorsHere(t, `package c

cluster: {
	name: "lab"
	excludedNamespaces: ["kube-system", "nvidia-gpu-operator"]
	excludedNamespacesAbsentOK: ["nvidia-gpu-operator", "monitoring"]
}
`)
	assert.Equal(t, []string{`c.cue:6:54: cluster.excludedNamespacesAbsentOK[1]: monitoring is not one of cluster.excludedNamespaces: list here only the excluded names the cluster may lack`}, got)
}

// TestDefaultNonAcceleratorResources keeps the inventory's default, which
// classifies nodes read without a cluster (inventory show, init --live),
// equal to the schema's default for cluster.nonAcceleratorResources.
func TestDefaultNonAcceleratorResources(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": "package c\n\ncluster: name: \"lab\"\n"})
	m, err := compile.Load(dir)
	require.NoError(t, err)
	assert.Equal(t, inventory.DefaultNonAcceleratorResources, m.Cluster.NonAcceleratorResources)
}
