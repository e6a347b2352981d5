package compile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// cluster writes files into a temporary cluster directory and returns its
// path relative to the working directory, as a user would type it.
func cluster(t *testing.T, files map[string]string) string {
	t.Helper()
	dir, err := os.MkdirTemp(".", "testcluster-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	for name, src := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	return dir
}

const minimal = `package c

cluster: name: "lab"
profiles: l4: {
	displayName: "L4"
	acceleratorTypes: ["nvidia-l4-24gb"]
}
`

func TestLoadMinimal(t *testing.T) {
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": minimal}))
	require.NoError(t, err)
	assert.Equal(t, "lab", m.Cluster.Name)
	assert.Equal(t, "accelerator.opendatahub.io/type", m.Cluster.TypeLabel())
	assert.Equal(t, "opendatahub", m.Cluster.ProfileNamespace)
	require.Len(t, m.Profiles, 1)
	p := m.Profiles[0]
	assert.Equal(t, "nvidia.com/gpu", p.ResourceName)
	assert.True(t, p.Enabled)
	assert.Equal(t, 1, p.GPU.Min)
	assert.Equal(t, 1, p.GPU.Default)
	assert.Equal(t, "NVIDIA L4 24GB", p.Classes[0].DisplayName)
	assert.Equal(t, "8Gi", p.Memory.Default.String())
}

func TestGenericProfileKeepsWorking(t *testing.T) {
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": `package c
cluster: name: "lab"
profiles: gpu: displayName: "Any GPU"
`}))
	require.NoError(t, err)
	assert.True(t, m.Profiles[0].Generic())
	assert.Equal(t, "nvidia.com/gpu", m.Profiles[0].ResourceName)
}

func TestErrorsNameFileAndLine(t *testing.T) {
	for name, tc := range map[string]struct {
		src  string
		want []string
	}{
		"type error": {`package c

cluster: name: "lab"
profiles: l4: {
	displayName: "L4"
	gpu: max: "eight"
}
`, []string{"c.cue:6:12: profiles.l4.gpu.max: conflicting values \"eight\" and int"}},
		"unknown field": {`package c

cluster: name: "lab"
cluster: labelPrefx: "x"
`, []string{"c.cue:4:10: cluster.labelPrefx: field not allowed"}},
		"unknown type with close matches": {`package c

cluster: name: "lab"
profiles: big: {
	displayName: "Big"
	acceleratorTypes: ["nvidia-h200-140gb"]
}
`, []string{`c.cue:6:21: profiles.big.acceleratorTypes[0]: unknown accelerator type "nvidia-h200-140gb"; did you mean nvidia-h200-141gb`}},
		"new class misses fields": {`package c

cluster: name: "lab"
accelerators: "acme-x1-32gb": displayName: "Acme X1"
`, []string{"c.cue:4:15: accelerators.acme-x1-32gb: not a built-in type, so it needs vendor, model, architecture, memoryGB"}},
		"namespace in two teams": {`package c

cluster: name: "lab"
teams: a: namespaces: ["ml"]
teams: b: namespaces: ["ml"]
`, []string{"c.cue:5:24: teams.b.namespaces[0]: namespace ml already belongs to team a"}},
		"vendors mixed in one profile": {`package c

cluster: name: "lab"
profiles: mix: {
	displayName: "Mix"
	acceleratorTypes: ["nvidia-h100-80gb", "amd-mi300x-192gb"]
}
`, []string{"profiles.mix: its types are requested through different resources (amd.com/gpu, nvidia.com/gpu)"}},
		"ranges out of order": {`package c

cluster: name: "lab"
profiles: x: {
	displayName: "X"
	gpu: {min: 2, default: 1}
	memory: {min: "4Gi", default: "2Gi", max: "1Gi"}
}
`, []string{
			"c.cue:6:16: profiles.x.gpu.default: 1 is below min 2: raise default or lower min",
			"c.cue:7:23: profiles.x.memory.default: 2Gi is below min 4Gi",
			"c.cue:7:39: profiles.x.memory.max: 1Gi is below default 2Gi",
		}},
		"several errors at once": {`package c

cluster: name: "lab"
profiles: a: {displayName: "A", acceleratorTypes: ["nvidia-zz"]}
profiles: b: {displayName: "B", acceleratorTypes: ["nvidia-yy"]}
`, []string{`profiles.a.acceleratorTypes[0]: unknown accelerator type "nvidia-zz"`, `profiles.b.acceleratorTypes[0]: unknown accelerator type "nvidia-yy"`}},
		"team entitled to an unknown profile": {`package c

cluster: name: "lab"
profiles: "slice-3g": {displayName: "3g", acceleratorTypes: ["nvidia-a100-80gb"]}
teams: serving: {
	namespaces: ["serving"]
	profiles: ["slice-3", "slice-3g"]
}
`, []string{`c.cue:7:13: teams.serving.profiles[0]: no hardware profile "slice-3"; did you mean slice-3g? (profiles: slice-3g)`}},
		"team profile of a type the team may not use": {`package c

cluster: name: "lab"
profiles: big: {displayName: "Big", acceleratorTypes: ["nvidia-h200-141gb"]}
teams: ds: {
	namespaces: ["ds"]
	acceleratorTypes: ["nvidia-v100-16gb"]
	profiles: ["big"]
}
`, []string{"c.cue:8:13: teams.ds.profiles[0]: profile big runs on nvidia-h200-141gb, which is not among the team's acceleratorTypes (nvidia-v100-16gb): add the type or drop the profile"}},
		"team profile above the team's tier": {`package c

cluster: {
	name: "lab"
	priorityClasses: {low: value: 10, high: value: 1000}
}
profiles: fast: {displayName: "Fast", acceleratorTypes: ["nvidia-h200-141gb"], priorityClassName: "high"}
teams: ds: {
	namespaces: ["ds"]
	profiles: ["fast"]
	priority: "low"
}
`, []string{"c.cue:10:13: teams.ds.profiles[0]: profile fast runs at priority class high (1000), above the team's tier low (10)"}},
		"generic profile for a team without types": {`package c

cluster: name: "lab"
profiles: gpu: displayName: "Any GPU"
teams: ds: {
	namespaces: ["ds"]
	profiles: ["gpu"]
}
`, []string{"c.cue:7:2: teams.ds.profiles: generic profile gpu runs on the team's types, and the team has none: give it acceleratorTypes"}},
		"no package clause": {`cluster: name: "lab"
`, []string{"c.cue:1:1: no package clause: start the file with `package <name>`"}},
		"team namespace excluded from the policies": {`package c

cluster: name: "lab"
teams: ops: namespaces: ["ml", "kube-system"]
`, []string{`c.cue:4:32: teams.ops.namespaces[1]: namespace kube-system is excluded from accelc's policies by cluster.excludedNamespaces "kube-system", so its pods would reach any accelerator: rename the namespace or narrow the pattern`}},
		"team namespace excluded by an acknowledged glob": {`package c

cluster: {
	name: "lab"
	namespaceCreation: "admins-only"
	excludedNamespaces: ["kube-*"]
}
teams: ops: namespaces: ["ml", "kube-ml"]
`, []string{`c.cue:8:32: teams.ops.namespaces[1]: namespace kube-ml is excluded from accelc's policies by cluster.excludedNamespaces "kube-*", so its pods would reach any accelerator: rename the namespace or narrow the pattern`}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := cluster(t, map[string]string{"c.cue": tc.src})
			_, err := compile.Load(dir)
			require.Error(t, err)
			var errs compile.Errors
			require.ErrorAs(t, err, &errs)
			for _, w := range tc.want {
				if strings.HasPrefix(w, "c.cue") {
					w = filepath.ToSlash(filepath.Clean(dir)) + "/" + w
				}
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

// TestExcludedNamespaces: a glob in cluster.excludedNamespaces exempts the
// namespaces users create later too, so vet takes one only on the admins'
// word that users cannot create namespaces; a bare * never.
func TestExcludedNamespaces(t *testing.T) {
	const kubeGlob = `c.cue:5:38: cluster.excludedNamespaces[1]: "kube-*" exempts from accelc's policies every namespace it matches, those created later too: a user who may create namespaces creates kube-x, whose pods reach any accelerator. List the exact names instead (kube-system, not kube-*), or, if only cluster admins can create namespaces, say so with cluster.namespaceCreation: "admins-only" (on OpenShift it holds for kube-* and openshift-* when users only get projects: ProjectRequests refuse those prefixes)`
	for name, tc := range map[string]struct {
		cluster string // the body of cluster: {...}
		want    []string
	}{
		"default": {``, nil},
		"exact names": {`
	excludedNamespaces: ["kube-system", "monitoring"]
`, nil},
		"glob where anyone creates namespaces": {`
	excludedNamespaces: ["kube-system", "kube-*"]
`, []string{kubeGlob}},
		"glob where anyone creates namespaces, said so": {`
	excludedNamespaces: ["kube-system", "kube-*"]
	namespaceCreation: "anyone"
`, []string{kubeGlob}},
		"suffix glob": {`
	excludedNamespaces: ["gpu-operator", "*-system"]
`, []string{`c.cue:5:39: cluster.excludedNamespaces[1]: "*-system" exempts from accelc's policies every namespace it matches, those created later too: a user who may create namespaces creates x-system, whose pods reach any accelerator.`}},
		"globs where only admins create namespaces": {`
	excludedNamespaces: ["kube-*", "openshift-*", "*-system", "nvidia-gpu-operator"]
	namespaceCreation: "admins-only"
`, nil},
		"bare * where anyone creates namespaces": {`
	excludedNamespaces: ["*"]
`, []string{`c.cue:5:23: cluster.excludedNamespaces[0]: "*" matches every namespace, so accelc's policies would check none: list the exact names of the system namespaces to exclude`,
			`c.cue:7:25: teams.ml.namespaces[0]: namespace ml is excluded from accelc's policies by cluster.excludedNamespaces "*"`}},
		"bare * where only admins create namespaces": {`
	excludedNamespaces: ["kube-system", "**"]
	namespaceCreation: "admins-only"
`, []string{`c.cue:5:38: cluster.excludedNamespaces[1]: "**" matches every namespace, so accelc's policies would check none: list the exact names of the system namespaces to exclude`,
			`c.cue:8:25: teams.ml.namespaces[0]: namespace ml is excluded from accelc's policies by cluster.excludedNamespaces "**"`}},
		"* inside a pattern": {`
	excludedNamespaces: ["kube-*-x"]
	namespaceCreation: "admins-only"
`, []string{`c.cue:5:23: cluster.excludedNamespaces[0]: "kube-*-x" has a * inside: Gatekeeper matches * only at the start or end of a name (kube-*, *-system) and refuses the constraint: list the exact names`}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := cluster(t, map[string]string{"c.cue": "package c\n\ncluster: {\n\tname: \"lab\"" + tc.cluster + "}\nteams: ml: namespaces: [\"ml\"]\n"})
			_, err := compile.Load(dir)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var errs compile.Errors
			require.ErrorAs(t, err, &errs)
			assert.Len(t, errs, len(tc.want), err.Error())
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), filepath.ToSlash(filepath.Clean(dir))+"/"+w)
			}
		})
	}
}

// TestTwoPackages: files of two packages in a cluster directory are an
// error at the second one's package clause.
func TestTwoPackages(t *testing.T) {
	dir := cluster(t, map[string]string{
		"a.cue": "package a\ncluster: name: \"lab\"\n",
		"b.cue": "// Copied from another cluster.\n\npackage b\n",
	})
	_, err := compile.Load(dir)
	require.Error(t, err)
	assert.Equal(t, filepath.ToSlash(filepath.Clean(dir))+"/b.cue:3:1: package b, but a.cue is package a: the .cue files of a cluster directory are one package; give them one name", err.Error())
}

// TestTeamProfilesGiveTypes: a team that lists profiles and no types may
// use the types of its profiles.
func TestTeamProfilesGiveTypes(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": `package c

cluster: name: "lab"
profiles: a: {displayName: "A", acceleratorTypes: ["nvidia-a100-80gb", "nvidia-h100-80gb"]}
profiles: b: {displayName: "B", acceleratorTypes: ["nvidia-h100-80gb", "nvidia-l4-24gb"]}
profiles: c: {displayName: "C", acceleratorTypes: ["nvidia-t4-16gb"]}
teams: ml: {namespaces: ["ml"], profiles: ["a", "b"]}
`})
	m, err := compile.Load(dir)
	require.NoError(t, err)
	team := m.Teams[0]
	assert.Equal(t, []string{"nvidia-a100-80gb", "nvidia-h100-80gb", "nvidia-l4-24gb"}, team.AcceleratorTypes)
	assert.True(t, team.MayUse(m.Profile("a")))
	assert.False(t, team.MayUse(m.Profile("c")))
}

func TestCatalogOverrideAndExtension(t *testing.T) {
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": `package c
cluster: name: "lab"
accelerators: {
	"nvidia-l4-24gb": displayName: "L4 (ours)"
	"acme-x1-32gb": {vendor: "nvidia", displayName: "Acme X1 32GB", model: "X1", architecture: "Acme", memoryGB: 32,
		identifiedBy: "nvidia.com/gpu.product": ["ACME-X1"]}
}
profiles: x: {displayName: "X", acceleratorTypes: ["acme-x1-32gb", "nvidia-l4-24gb"]}
`}))
	require.NoError(t, err)
	l4, _ := m.Catalog.Get("nvidia-l4-24gb")
	assert.Equal(t, "L4 (ours)", l4.DisplayName)
	assert.Equal(t, "8.9", l4.ComputeCapability, "fields not overridden are kept")
	x1, ok := m.Catalog.ByLabel("nvidia.com/gpu.product", "ACME-X1")
	require.True(t, ok)
	assert.Equal(t, "nvidia.com/gpu", x1.ResourceName)
}

func TestCheckAgainstInventory(t *testing.T) {
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": `package c
cluster: {name: "lab", nodes: "ghost-node": acceleratorType: "nvidia-t4-16gb"}
profiles: big: {displayName: "Big", acceleratorTypes: ["nvidia-h200-141gb"]}
profiles: t4: {displayName: "T4", acceleratorTypes: ["nvidia-t4-16gb"], gpu: max: 8}
`}))
	require.NoError(t, err)
	raw, _, err := inventory.ReadFile("../../testdata/nodes/real-nodes-sample.json")
	require.NoError(t, err)
	inv := inventory.Classify(raw, m.Catalog, inventory.Options{Pins: m.Pins})
	var msgs []string
	for _, d := range m.Check(inv) {
		assert.Equal(t, compile.Warning, d.Severity)
		msgs = append(msgs, d.String())
	}
	all := strings.Join(msgs, "\n")
	assert.Contains(t, all, "profiles.big: no node in the inventory has nvidia-h200-141gb (0 available)")
	assert.Contains(t, all, "cluster.nodes.ghost-node: no such accelerator node")
	assert.Contains(t, all, "2 node(s) have accelerators of unknown type (219.245.186.40, node-21)")
	assert.NotContains(t, all, "profiles.t4: gpu.max", "T4 nodes offer 16 replicas")
}

func TestNotAClusterDirectory(t *testing.T) {
	_, err := compile.Load(t.TempDir())
	require.ErrorContains(t, err, "no .cue files")
	_, err = compile.Load("does-not-exist")
	require.ErrorContains(t, err, "does-not-exist")
}

func TestTypedProfileResource(t *testing.T) {
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": `package c
cluster: name: "lab"
profiles: slice: {displayName: "Slice", acceleratorTypes: ["nvidia-a100-80gb"], resourceName: "nvidia.com/mig-1g.10gb"}
`}))
	require.NoError(t, err)
	assert.Equal(t, "nvidia.com/mig-1g.10gb", m.Profiles[0].ResourceName)

	_, err = compile.Load(cluster(t, map[string]string{"c.cue": `package c
cluster: name: "lab"
profiles: wrong: {displayName: "W", acceleratorTypes: ["nvidia-a100-80gb"], resourceName: "amd.com/gpu"}
`}))
	require.ErrorContains(t, err, "amd.com/gpu is not a resource of its types' vendor (nvidia.com/gpu)")
}
