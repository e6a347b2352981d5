package compile_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// poolsCluster is seed 004's pools in small: an A100 80GB pool
// time-sliced three ways, an H100 pool two ways, and A100 80GB MIG configs.
const poolsCluster = `package c

cluster: {
	name: "pools"
	sharing: {
		"a100-ts": {acceleratorType: "nvidia-a100-80gb", nodes: ["a100-ts-1"], replicas: 3, failRequestsGreaterThanOne: true}
		"h100-ts": {acceleratorType: "nvidia-h100-80gb", replicas: 2, taint: {key: "example.com/gpu", value: "true"}}
		"h100-renamed": {acceleratorType: "nvidia-h100-80gb", nodes: ["h100-r-1"], replicas: 2, renameByDefault: true}
	}
	mig: {
		strategy: "mixed"
		configs: {
			"a100-3g": {acceleratorType: "nvidia-a100-80gb", nodes: ["a100-mig-1"], layout: {"3g.40gb": 1, "2g.20gb": 2}}
			"a100-1g": {acceleratorType: "nvidia-a100-80gb", nodes: ["a100-mig-2"], layout: "1g.10gb": 7, taint: "none"}
		}
	}
}
`

// TestSharedProfiles: a MIG profile requests its slice's resource and
// tolerates its configs' taints; a pool profile takes its pools' types in
// order, their resource and taints.
func TestSharedProfiles(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": poolsCluster + `
profiles: {
	"slice-3g": {displayName: "3g", acceleratorTypes: ["nvidia-a100-80gb"], mig: "3g.40gb"}
	"slice-1g": {displayName: "1g", acceleratorTypes: ["nvidia-a100-80gb"], mig: "1g.10gb"}
	research: {displayName: "r", pool: "a100-ts", fallbackPools: ["h100-ts"], gpu: max: 1,
		tolerations: [{key: "nvidia.com/gpu", operator: "Exists"}]}
}
`})
	m, err := compile.Load(dir)
	require.NoError(t, err)
	byName := map[string]compile.Profile{}
	for _, p := range m.Profiles {
		byName[p.Name] = p
	}

	s := byName["slice-3g"]
	assert.Equal(t, "nvidia.com/mig-3g.40gb", s.ResourceName, "mixed strategy: the slice's own resource")
	assert.Equal(t, []string{"a100-3g"}, s.Pools)
	assert.Equal(t, compile.ShareMIG, s.Sharing)
	assert.Equal(t, 40, s.SliceMemoryGB)
	assert.Equal(t, []compile.Toleration{{Key: "accelerator.opendatahub.io/pool", Operator: "Equal", Value: "a100-3g", Effect: "NoSchedule"}}, s.Tolerations,
		"the default taint of a config: <prefix>/pool=<name>")
	assert.Empty(t, byName["slice-1g"].Tolerations, `taint: "none" puts no taint, so nothing to tolerate`)

	r := byName["research"]
	assert.Equal(t, []string{"nvidia-a100-80gb", "nvidia-h100-80gb"}, r.AcceleratorTypes, "the pools' types, in order")
	assert.Equal(t, []string{"a100-ts", "h100-ts"}, r.Pools)
	assert.Equal(t, "nvidia.com/gpu", r.ResourceName)
	assert.Equal(t, compile.ShareTimeSlicing, r.Sharing)
	assert.Zero(t, r.Replicas, "the pools share three and two ways: no one replica count")
	assert.Equal(t, []compile.Toleration{
		{Key: "nvidia.com/gpu", Operator: "Exists"},
		{Key: "accelerator.opendatahub.io/pool", Operator: "Equal", Value: "a100-ts", Effect: "NoSchedule"},
		{Key: "example.com/gpu", Operator: "Equal", Value: "true", Effect: "NoSchedule"},
	}, r.Tolerations)

	require.Len(t, m.NodePools, 5)
	pool, ok := m.Pool("h100-renamed")
	require.True(t, ok)
	assert.True(t, pool.Renamed)
	assert.Equal(t, "a100-1g", m.PoolOf("a100-mig-2", "nvidia-a100-80gb").Name, "a listed node")
	assert.Equal(t, "h100-ts", m.PoolOf("h100-9", "nvidia-h100-80gb").Name, "a type-wide pool takes the type's other nodes")
	assert.Nil(t, m.PoolOf("a100-9", "nvidia-a100-80gb"), "an A100 80GB no pool lists stays whole")
}

// TestSharedProfileErrors: every mistake in a profile over shared GPUs
// names its file and line and says what to do.
func TestSharedProfileErrors(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": poolsCluster + `
profiles: {
	both: {displayName: "x", acceleratorTypes: ["nvidia-a100-80gb"], mig: "3g.40gb", pool: "a100-ts"}
	"mig-fallback": {displayName: "x", acceleratorTypes: ["nvidia-a100-80gb"], mig: "3g.40gb", fallbackPools: ["a100-ts"]}
	"mig-two-types": {displayName: "x", acceleratorTypes: ["nvidia-a100-80gb", "nvidia-h100-80gb"], mig: "3g.40gb"}
	"mig-misnamed": {displayName: "x", acceleratorTypes: ["nvidia-a100-80gb"], mig: "4g.20gb"}
	"mig-unconfigured": {displayName: "x", acceleratorTypes: ["nvidia-a100-80gb"], mig: "7g.80gb"}
	"mig-no-mig": {displayName: "x", acceleratorTypes: ["nvidia-t4-16gb"], mig: "1g.4gb"}
	"pool-missing": {displayName: "x", pool: "a100-shared"}
	"pool-is-mig": {displayName: "x", pool: "a100-3g"}
	"fallback-to-mig": {displayName: "x", pool: "a100-ts", fallbackPools: ["a100-1g"], gpu: max: 1}
	"fallback-twice": {displayName: "x", pool: "a100-ts", fallbackPools: ["a100-ts"], gpu: max: 1}
	"pool-other-type": {displayName: "x", acceleratorTypes: ["nvidia-a100-80gb"], pool: "a100-ts", fallbackPools: ["h100-ts"], gpu: max: 1}
	"pool-two-replicas": {displayName: "x", pool: "a100-ts", gpu: {min: 1, max: 2}}
	"pool-mixed-resources": {displayName: "x", pool: "h100-ts", fallbackPools: ["h100-renamed"]}
	"fallback-alone": {displayName: "x", acceleratorTypes: ["nvidia-a100-80gb"], fallbackPools: ["a100-ts"]}
	"wrong-resource": {displayName: "x", acceleratorTypes: ["nvidia-a100-80gb"], mig: "3g.40gb", resourceName: "nvidia.com/gpu"}
}
`})
	_, err := compile.Load(dir)
	var errs compile.Errors
	require.ErrorAs(t, err, &errs)
	at := filepath.ToSlash(filepath.Clean(dir)) + "/c.cue:"
	for _, want := range []string{
		at + "20:83: profiles.both: it sets both mig and pool: a profile targets a MIG slice or a shared pool, not both",
		at + "21:93: profiles.mig-fallback.fallbackPools: a MIG profile never falls back to a shared pool (its workloads need MIG's isolation)",
		at + `22:38: profiles.mig-two-types: a MIG profile (mig: "3g.40gb") names exactly one accelerator type, the GPU its slices are cut from; it names 2`,
		at + "23:77: profiles.mig-misnamed.mig: nvidia-a100-80gb: no MIG profile 4g.20gb on this GPU (did you mean 4g.40gb?)",
		at + "24:81: profiles.mig-unconfigured.mig: no cluster.mig config cuts nvidia-a100-80gb into 7g.80gb slices; its configs: a100-1g (7×1g.10gb), a100-3g (2×2g.20gb + 1×3g.40gb): target one of their profiles, or add a config",
		at + "25:73: profiles.mig-no-mig.mig: nvidia-t4-16gb has no MIG (MIG-capable types:",
		at + "26:37: profiles.pool-missing.pool: no shared pool a100-shared in cluster.sharing (it has a100-ts, h100-renamed, h100-ts)",
		at + `27:36: profiles.pool-is-mig.pool: a100-3g is a MIG config, not a shared pool: target its slices with mig: "2g.20gb"`,
		at + "28:73: profiles.fallback-to-mig.fallbackPools[0]: a100-1g is a MIG config: a time-sliced profile falls back only to shared pools",
		at + "29:72: profiles.fallback-twice.fallbackPools[0]: pool a100-ts is listed twice",
		at + "30:113: profiles.pool-other-type.fallbackPools[0]: pool h100-ts is of nvidia-h100-80gb, which is not among the profile's acceleratorTypes (nvidia-a100-80gb)",
		at + "31:59: profiles.pool-two-replicas.gpu: pool a100-ts fails requests for more than one replica (failRequestsGreaterThanOne): set gpu: max: 1",
		at + "32:62: profiles.pool-mixed-resources: its pools are requested through different resources: nvidia.com/gpu (h100-ts), nvidia.com/gpu.shared (h100-renamed)",
		at + "33:79: profiles.fallback-alone.fallbackPools: fallback pools need a pool to fall back from: set pool",
		at + "34:95: profiles.wrong-resource.resourceName: nvidia.com/gpu, but its pods get nvidia.com/mig-3g.40gb from a100-3g: drop resourceName",
	} {
		assert.Contains(t, err.Error(), want)
	}
}

// TestPoolOfUnknownType: a profile over a pool whose type the catalog
// lacks is an error at the pool's type and the profile's, not a crash.
func TestPoolOfUnknownType(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": `package c

cluster: {name: "lab", sharing: s: {acceleratorType: "nvidia-zz-9gb", replicas: 2}}
profiles: p: {displayName: "p", pool: "s"}
profiles: q: {displayName: "q", acceleratorTypes: ["nvidia-t4-16gb"], pool: "s"}
`})
	_, err := compile.Load(dir)
	require.Error(t, err)
	at := filepath.ToSlash(filepath.Clean(dir)) + "/c.cue:"
	assert.Contains(t, err.Error(), at+`3:37: cluster.sharing.s.acceleratorType: unknown accelerator type "nvidia-zz-9gb"`)
	assert.Contains(t, err.Error(), at+`4:33: profiles.p.acceleratorTypes[0]: unknown accelerator type "nvidia-zz-9gb"`)
	assert.NotContains(t, err.Error(), "CUE evaluation failed")
	assert.NotContains(t, err.Error(), "profiles.q", "the pool's type is the error")
}

// TestPoolNamesCollide: a MIG config and a sharing pool cannot share a
// name: a node carries one pool label value.
func TestPoolNamesCollide(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": `package c

cluster: {
	name: "lab"
	sharing: lab: {acceleratorType: "nvidia-t4-16gb", replicas: 2}
	mig: configs: lab: {acceleratorType: "nvidia-a100-40gb", layout: "1g.5gb": 7}
}
`})
	_, err := compile.Load(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c.cue:6:16: cluster.mig.configs.lab: cluster.sharing has a pool of the same name; nodes carry one accelerator.opendatahub.io/pool value: rename one of them")
}

const poolsInventory = `{"kind":"NodeList","items":[
  {"metadata":{"name":"a100-ts-1","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB-SHARED","nvidia.com/gpu.count":"8","nvidia.com/gpu.replicas":"3","nvidia.com/gpu.sharing-strategy":"time-slicing"}},
   "status":{"capacity":{"nvidia.com/gpu":"24"},"conditions":[{"type":"Ready","status":"True"}]}},
  {"metadata":{"name":"a100-mig-1","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","nvidia.com/gpu.count":"8"}},
   "status":{"capacity":{"nvidia.com/gpu":"8"},"conditions":[{"type":"Ready","status":"True"}]}},
  {"metadata":{"name":"a100-mig-2","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB-MIG-1g.10gb","nvidia.com/gpu.count":"28","nvidia.com/mig.strategy":"single"}},
   "status":{"capacity":{"nvidia.com/gpu":"28"},"conditions":[{"type":"Ready","status":"True"}]}},
  {"metadata":{"name":"h100-1","labels":{"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3","nvidia.com/gpu.count":"4"}},
   "status":{"capacity":{"nvidia.com/gpu":"4"},"conditions":[{"type":"Ready","status":"True"}]}},
  {"metadata":{"name":"h100-r-1","labels":{"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3","nvidia.com/gpu.count":"4"}},
   "status":{"capacity":{"nvidia.com/gpu":"4"},"conditions":[{"type":"Ready","status":"True"}]}}]}`

func poolsModel(t *testing.T, extra string) (*compile.Model, *inventory.Inventory) {
	t.Helper()
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": poolsCluster + extra}))
	require.NoError(t, err)
	raw, _, err := inventory.Decode([]byte(poolsInventory))
	require.NoError(t, err)
	return m, inventory.Classify(raw, m.Catalog, inventory.Options{})
}

// TestProfileCapacity: what users can request, not GPUs. A reconfigured
// node counts as it reports itself; one the MIG manager or the device
// plugin has yet to reconfigure, from the config, as pending.
func TestProfileCapacity(t *testing.T) {
	m, inv := poolsModel(t, `
profiles: {
	"slice-2g": {displayName: "2g", acceleratorTypes: ["nvidia-a100-80gb"], mig: "2g.20gb"}
	"slice-1g": {displayName: "1g", acceleratorTypes: ["nvidia-a100-80gb"], mig: "1g.10gb"}
	research: {displayName: "r", pool: "a100-ts", fallbackPools: ["h100-ts"], gpu: max: 1}
}
`)
	caps := map[string]compile.Capacity{}
	for i := range m.Profiles {
		c, _, ok := m.ProfileCapacity(&m.Profiles[i], inv)
		require.True(t, ok)
		caps[m.Profiles[i].Name] = c
	}
	// a100-mig-1 is still whole: 8 GPUs × 2 slices of 2g.20gb, pending.
	assert.Equal(t, compile.Capacity{Nodes: 1, GPUs: 8, Devices: 16, Available: 16, Pending: 16}, caps["slice-2g"])
	// a100-mig-2 is cut already (single: GFD counts 28 devices): 4 GPUs.
	assert.Equal(t, compile.Capacity{Nodes: 1, GPUs: 4, Devices: 28, Available: 28}, caps["slice-1g"])
	// 24 replicas reported on 8 A100s, and 4 H100s × 2 to come.
	assert.Equal(t, compile.Capacity{Nodes: 2, GPUs: 12, Devices: 32, Available: 32, Pending: 8}, caps["research"])
}

// TestPoolNodesAgainstInventory: a pool that takes no node is an error
// with the names; a listed node of another type too; a listed node the
// inventory lacks is a warning.
func TestPoolNodesAgainstInventory(t *testing.T) {
	m, inv := poolsModel(t, "")
	assert.Empty(t, errorsOf(m.Check(inv)))

	src := strings.Replace(poolsCluster, `nodes: ["a100-ts-1"]`, `nodes: ["a100-ts-1", "a100-ts-2"]`, 1)
	src = strings.Replace(src, `nodes: ["a100-mig-2"]`, `nodes: ["a100-mig-x", "h100-1"]`, 1)
	src = strings.Replace(src, `nodes: ["h100-r-1"]`, `nodes: ["h100-gone"]`, 1)
	m, err := compile.Load(cluster(t, map[string]string{"c.cue": src}))
	require.NoError(t, err)
	var errs, warnings []string
	for _, d := range m.Check(inv) {
		if d.Severity == compile.Error {
			errs = append(errs, d.String())
		} else {
			warnings = append(warnings, d.String())
		}
	}
	all := strings.Join(errs, "\n")
	assert.Contains(t, all, "c.cue:14:4: cluster.mig.configs.a100-1g.nodes: node h100-1 is a nvidia-h100-80gb node, not nvidia-a100-80gb")
	assert.Contains(t, all, "c.cue:14:4: cluster.mig.configs.a100-1g: targets no node: none of its nodes (a100-mig-x, h100-1) is a nvidia-a100-80gb node in the inventory")
	assert.Contains(t, all, "c.cue:8:3: cluster.sharing.h100-renamed: targets no node: none of its nodes (h100-gone) is a nvidia-h100-80gb node in the inventory")
	assert.Contains(t, strings.Join(warnings, "\n"), "c.cue:6:3: cluster.sharing.a100-ts.nodes: a100-ts-2 not in the inventory; the pool takes effect on them when they join")
	assert.Len(t, errs, 3)
}

// TestWholeGPUProfileOnSharedType: a profile of whole GPUs warns where its
// type's nodes are all in pools it cannot enter, or in an untainted pool.
func TestWholeGPUProfileOnSharedType(t *testing.T) {
	m, inv := poolsModel(t, `
profiles: {
	whole: {displayName: "w", acceleratorTypes: ["nvidia-a100-80gb"]}
	h100: {displayName: "h", acceleratorTypes: ["nvidia-h100-80gb"]}
}
`)
	var msgs []string
	for _, d := range m.Check(inv) {
		msgs = append(msgs, d.String())
	}
	all := strings.Join(msgs, "\n")
	assert.Contains(t, all, `profiles.whole: nvidia-a100-80gb nodes of pool a100-1g have no taint (taint: "none"), so the profile's pods may be handed a shared replica or a MIG slice there`)
	assert.Contains(t, all, "profiles.h100: every nvidia-h100-80gb node is in pool h100-renamed, h100-ts, whose taint the profile does not tolerate: its pods stay Pending")
}

func errorsOf(ds []compile.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		if d.Severity == compile.Error {
			out = append(out, d.String())
		}
	}
	return out
}

// TestSliceQuota: a MIG config cut into several profiles under the mixed
// strategy (the 1×3g.40gb + 2×2g.20gb fleet of issue 17) takes its quota
// per profile; each profile's queue then covers its slice's resource with
// the config's flavor.
func TestSliceQuota(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": poolsCluster + `
profiles: {
	"slice-3g": {displayName: "3g", acceleratorTypes: ["nvidia-a100-80gb"], mig: "3g.40gb"}
	"slice-2g": {displayName: "2g", acceleratorTypes: ["nvidia-a100-80gb"], mig: "2g.20gb"}
}
teams: a: {
	namespaces: ["a"]
	acceleratorTypes: ["nvidia-a100-80gb"]
	profiles: ["slice-3g", "slice-2g"]
	quota: "a100-3g": {"3g.40gb": 2, "2g.20gb": 4}
}
`})
	m, err := compile.Load(dir)
	require.NoError(t, err)
	team := &m.Teams[0]
	assert.Equal(t, map[string]int{"a100-3g": 6}, team.Quota, "all the config's slices")
	assert.Equal(t, map[string]int{"nvidia.com/mig-3g.40gb": 2, "nvidia.com/mig-2g.20gb": 4}, m.KeyQuotas(team, "a100-3g"))
	assert.Equal(t, []string{"a100-3g"}, m.QueueFlavors(team, m.Profile("slice-3g")))
	assert.Equal(t, []string{"a100-3g"}, m.QueueFlavors(team, m.Profile("slice-2g")))

	dir = cluster(t, map[string]string{"c.cue": poolsCluster + `
teams: a: {
	namespaces: ["a"]
	acceleratorTypes: ["nvidia-a100-80gb"]
	quota: {
		"a100-3g": {"3g.40gb": 2, "4g.40gb": 1}
		"a100-1g": {"1g.10gb": 7}
		"nvidia-a100-80gb": {"3g.40gb": 2}
	}
}
`})
	_, err = compile.Load(dir)
	require.Error(t, err)
	at := filepath.ToSlash(filepath.Clean(dir)) + "/c.cue:"
	for _, want := range []string{
		at + "23:29: teams.a.quota: 4g.40gb is not a MIG profile of a100-3g's layout (2×2g.20gb + 1×3g.40gb): use 2g.20gb, 3g.40gb",
		at + "24:3: teams.a.quota: a quota per MIG profile is for a MIG config that cuts each GPU into several profiles under the mixed strategy; a100-1g's pods request one resource (nvidia.com/mig-1g.10gb): give a number",
		at + "25:3: teams.a.quota: a quota per MIG profile is for a MIG config of cluster.mig that cuts each GPU into several profiles; nvidia-a100-80gb is an accelerator type: give a number of devices",
	} {
		assert.Contains(t, err.Error(), want)
	}
}

// TestPoolQuotaErrors: a quota in a pool of a type the team may not use,
// in an untainted pool Kueue could not keep whole GPUs out of, and per
// config of a mixed layout, are errors with file and line.
func TestPoolQuotaErrors(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": poolsCluster + `
teams: a: {
	namespaces: ["a"]
	acceleratorTypes: ["nvidia-a100-80gb"]
	quota: {"h100-ts": 4, "a100-1g": 7, "a100-3g": 2, "a100-ts": 6}
}
`})
	_, err := compile.Load(dir)
	require.Error(t, err)
	for _, want := range []string{
		"teams.a.quota: a quota in h100-ts, a pool of nvidia-h100-80gb, which the team is not entitled to",
		`teams.a.quota: a100-3g cuts each GPU into several MIG profiles (2×2g.20gb + 1×3g.40gb), each its own resource under the mixed strategy: give its quota per profile, as "a100-3g": {"2g.20gb": N, "3g.40gb": N}`,
	} {
		assert.Contains(t, err.Error(), want)
	}
	assert.NotContains(t, err.Error(), "quota: a100-ts", "a tainted pool's quota is fine")
	assert.NotContains(t, err.Error(), "quota: a100-1g", "untainted, but under mixed its slices are their own resource")

	dir = cluster(t, map[string]string{"c.cue": `package c

cluster: {
	name: "lab"
	sharing: t4: {acceleratorType: "nvidia-t4-16gb", replicas: 4, taint: "none"}
}
teams: a: {namespaces: ["a"], acceleratorTypes: ["nvidia-t4-16gb"], quota: t4: 8}
`})
	_, err = compile.Load(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c.cue:7:76: teams.a.quota: t4 has no taint and its pods request nvidia.com/gpu like whole GPUs, so Kueue cannot keep whole-GPU workloads out of its quota: give the pool a taint (or renameByDefault)")
	assert.NotContains(t, err.Error(), "has no quota", "pool quotas alone ask no quota per type")
}

// TestMPSUnderMixedMIG: the NVIDIA device plugin refuses MPS under MIG
// strategy mixed, so vet does too, at the pool's strategy; single and no
// MIG at all are fine.
func TestMPSUnderMixedMIG(t *testing.T) {
	mps := strings.Replace(poolsCluster, `replicas: 3, failRequestsGreaterThanOne: true}`, `replicas: 3, strategy: "mps"}`, 1)
	dir := cluster(t, map[string]string{"c.cue": mps})
	_, err := compile.Load(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.ToSlash(filepath.Clean(dir))+`/c.cue:6:87: cluster.sharing.a100-ts: MPS under MIG strategy mixed (the default once cluster.mig has configs): the NVIDIA device plugin refuses to start ("using --mig-strategy=mixed is not supported with MPS"); share the pool with time-slicing, or set cluster.mig.strategy: "single"`)

	single := strings.Replace(strings.Replace(mps, `strategy: "mixed"`, `strategy: "single"`, 1), `layout: {"3g.40gb": 1, "2g.20gb": 2}`, `layout: {"3g.40gb": 2}`, 1)
	_, err = compile.Load(cluster(t, map[string]string{"c.cue": single}))
	assert.NoError(t, err)
}

// TestPoolTaintsNFDApplies: a pool taint Node Feature Discovery would drop
// (NFD v0.19's rule validation) is an error at the taint's key.
func TestPoolTaintsNFDApplies(t *testing.T) {
	for key, why := range map[string]string{
		"gpu":                              "unprefixed keys are not allowed",
		"node.kubernetes.io/gpu":           "the kubernetes.io namespace is not allowed",
		"example.com/a b":                  "name part must consist of alphanumeric characters",
		"feature.node.kubernetes.io/gpu":   "",
		"gpu.feature.node.kubernetes.io/x": "",
	} {
		src := strings.Replace(poolsCluster, `taint: {key: "example.com/gpu", value: "true"}`, `taint: {key: "`+key+`", value: "true"}`, 1)
		dir := cluster(t, map[string]string{"c.cue": src})
		_, err := compile.Load(dir)
		if why == "" {
			assert.NoError(t, err, key)
			continue
		}
		require.Error(t, err, key)
		assert.Contains(t, err.Error(), filepath.ToSlash(filepath.Clean(dir))+`/c.cue:7:73:`, key)
		assert.Contains(t, err.Error(), `cluster.sharing.h100-ts.taint: `+key+`=true:NoSchedule: Node Feature Discovery would drop this taint (`+why, key)
	}
}
