package compile_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/dra"
)

// matches is what dra.Evaluate makes of one selector over the catalog.
func matches(t *testing.T, cat *catalog.Catalog, expr string) compile.SelectorOutcome {
	t.Helper()
	return dra.Evaluate(context.Background(), map[string]string{"x": expr}, compile.SampleDevices(cat))["x"]
}

// TestTypeDeviceClassesSelectTheirClassOnly: for every catalog class whose
// vendor has a DRA driver accelc knows, the DeviceClass selector compiles
// in Kubernetes' own DRA CEL environment, selects a device of the class as
// the driver publishes it, and no device of any other class: the class id
// names the same devices in DRA as in the type label.
func TestTypeDeviceClassesSelectTheirClassOnly(t *testing.T) {
	cat, err := catalog.Builtin()
	require.NoError(t, err)
	m := &compile.Model{Catalog: cat, Cluster: compile.Cluster{DRA: &compile.DRA{}}}
	for _, c := range cat.Classes() {
		m.Teams = append(m.Teams, compile.Team{Name: "t", AcceleratorTypes: []string{c.ID}})
	}
	classes := m.DeviceClasses()
	require.NotEmpty(t, classes)
	nvidia, amd := 0, 0
	for _, dc := range classes {
		o := matches(t, cat, dc.Selector)
		require.Empty(t, o.Error, dc.Name)
		require.Empty(t, o.EvalError, dc.Name)
		assert.Equal(t, []string{dc.Class.ID}, o.Matches, "DeviceClass %s (%s) selects exactly its class", dc.Name, dc.Selector)
		switch compile.DRADriver(dc.Class) {
		case "gpu.nvidia.com":
			nvidia++
		case "gpu.amd.com":
			amd++
		}
	}
	t.Logf("%d NVIDIA and %d AMD classes have DeviceClasses", nvidia, amd)
	assert.Positive(t, nvidia)
	assert.Positive(t, amd)

	// A MIG slice's class selects that slice of that class, not the whole
	// device, nor another slice.
	a100, _ := cat.Get("nvidia-a100-80gb")
	m.Profiles = []compile.Profile{{Name: "s", AcceleratorTypes: []string{"nvidia-a100-80gb"}, MIG: "3g.40gb", DRA: &compile.ProfileDRA{}}}
	var slice *compile.DeviceClass
	for _, dc := range m.DeviceClasses() {
		if dc.MIG != "" {
			slice = &dc
		}
	}
	require.NotNil(t, slice)
	assert.Equal(t, "nvidia-a100-80gb-mig-3g.40gb", slice.Name)
	res, err := dra.Compile(slice.Selector)
	require.NoError(t, err)
	for _, tc := range []struct {
		mig  string
		want bool
	}{{"3g.40gb", true}, {"2g.20gb", false}, {"", false}} {
		dev, ok := compile.SampleDevice(a100, tc.mig)
		require.True(t, ok)
		got, err := dra.Match(context.Background(), res, dev)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "slice %q", tc.mig)
	}
}

// TestAttributeClasses: an admin's class by attribute compiles and selects
// the catalog classes it says; a selector that does not compile, or
// selects nothing, is an error at its file and line; DRA profiles need the
// cluster's DRA, a class that exists, types with a driver.
func TestAttributeClasses(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": `package c

cluster: {
	name: "lab"
	dra: classes: {
		"big-hopper": {
			description: "80 GB or more, Hopper or newer"
			selector: "device.driver == 'gpu.nvidia.com' && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0 && device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('9.0.0')) >= 0"
		}
	}
}
profiles: big: {displayName: "Big", dra: deviceClass: "big-hopper"}
profiles: a100: {displayName: "A100", acceleratorTypes: ["nvidia-a100-80gb", "nvidia-h100-80gb"], dra: {}}
`})
	m, err := compile.Load(dir)
	require.NoError(t, err)
	var big compile.DeviceClass
	for _, dc := range m.DeviceClasses() {
		if dc.Name == "big-hopper" {
			big = dc
		}
	}
	ids := matches(t, m.Catalog, big.Selector).Matches
	assert.Contains(t, ids, "nvidia-h100-80gb")
	assert.Contains(t, ids, "nvidia-h200-141gb")
	assert.NotContains(t, ids, "nvidia-a100-80gb", "Ampere")
	assert.NotContains(t, ids, "nvidia-l4-24gb", "24 GB")
	assert.False(t, slices.ContainsFunc(ids, func(id string) bool { return id[:3] == "amd" }), "NVIDIA's driver only")
	assert.Equal(t, []string{"big-hopper"}, m.ProfileDeviceClasses(m.Profile("big")))
	assert.Equal(t, []string{"nvidia-a100-80gb", "nvidia-h100-80gb"}, m.ProfileDeviceClasses(m.Profile("a100")), "the profile's order")

	dir = cluster(t, map[string]string{"c.cue": `package c

cluster: {
	name: "lab"
	dra: classes: {
		broken: selector: "device.driver == "
		nothing: selector: "device.driver == 'gpu.example.com'"
		"nvidia-l4-24gb": selector: "true"
	}
}
profiles: a: {displayName: "A", dra: deviceClass: "brokn"}
profiles: b: {displayName: "B", dra: {}}
profiles: c: {displayName: "C", acceleratorTypes: ["intel-gaudi3-128gb"], dra: {}}
`})
	_, err = compile.Load(dir)
	require.Error(t, err)
	at := filepath.ToSlash(filepath.Clean(dir)) + "/c.cue:"
	for _, want := range []string{
		at + "8:3: cluster.dra.classes.nvidia-l4-24gb: nvidia-l4-24gb is an accelerator type: its DeviceClass is the catalog's",
		at + `11:38: profiles.a.dra.deviceClass: no attribute class "brokn" in cluster.dra.classes; did you mean broken?`,
		at + "12:33: profiles.b.dra: profile b names no accelerator type, so its claims would have no DeviceClass",
		at + "13:75: profiles.c.dra: accelc knows no DRA driver that publishes intel-gaudi3-128gb's devices",
	} {
		assert.Contains(t, err.Error(), want)
	}

	// The selectors, checked in the DRA CEL environment.
	dir = cluster(t, map[string]string{"c.cue": `package c

cluster: {
	name: "lab"
	dra: classes: {
		broken: selector: "device.driver == "
		nothing: selector: "device.driver == 'gpu.example.com'"
		guarded: selector: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].numa == 0"
		fine: selector: "device.driver == 'gpu.amd.com'"
	}
}
`})
	m, err = compile.Load(dir)
	require.NoError(t, err, "the selectors are not compile's to check")
	outcomes := dra.Evaluate(context.Background(), m.AttributeSelectors(), compile.SampleDevices(m.Catalog))
	var msgs []string
	for _, d := range m.SelectorDiagnostics(outcomes) {
		msgs = append(msgs, d.String())
	}
	at = filepath.ToSlash(filepath.Clean(dir)) + "/c.cue:"
	assert.Len(t, msgs, 3, "fine selects every AMD class")
	all := strings.Join(msgs, "\n")
	assert.Contains(t, all, at+"6:11: cluster.dra.classes.broken.selector: the selector does not compile in Kubernetes' DRA CEL environment, so the API server would refuse the DeviceClass: ")
	assert.Contains(t, all, at+"7:12: cluster.dra.classes.nothing.selector: the selector matches no device of any catalog class")
	assert.Contains(t, all, at+"8:12: cluster.dra.classes.guarded.selector: the selector matches no device of any catalog class")
	assert.Contains(t, all, "no such key: numa (guard an attribute a driver may not publish")

	dir = cluster(t, map[string]string{"c.cue": `package c

cluster: name: "lab"
profiles: a: {displayName: "A", acceleratorTypes: ["nvidia-l4-24gb"], dra: {}}
`})
	_, err = compile.Load(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "profiles.a.dra: profile a hands out devices through Dynamic Resource Allocation, but the cluster declares none: add cluster.dra")
}

// TestAttributeClassReachesOnlyEntitledTypes: an attribute class hands out
// whatever it selects, so a team whose DRA profile uses it must be
// entitled to every type of the cluster it selects.
func TestAttributeClassReachesOnlyEntitledTypes(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": `package c

cluster: {
	name: "lab"
	dra: classes: "big-memory": selector: "device.driver == 'gpu.nvidia.com' && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
}
profiles: big: {displayName: "Big", dra: deviceClass: "big-memory"}
teams: {
	research: {namespaces: ["r"], acceleratorTypes: ["nvidia-a100-80gb"]}
	serving: {namespaces: ["s"], acceleratorTypes: ["nvidia-h100-80gb", "nvidia-a100-80gb"], profiles: ["big"]}
	web: {namespaces: ["w"], acceleratorTypes: ["nvidia-l4-24gb"], profiles: []}
}
`})
	m, err := compile.Load(dir)
	require.NoError(t, err)
	outcomes := dra.Evaluate(context.Background(), m.AttributeSelectors(), compile.SampleDevices(m.Catalog))
	var msgs []string
	for _, d := range m.SelectorDiagnostics(outcomes) {
		msgs = append(msgs, d.String())
	}
	require.Len(t, msgs, 1, "serving may use both types; web lists no DRA profile")
	assert.Contains(t, msgs[0], "cluster.dra.classes.big-memory.selector: team research may use profile big, whose class big-memory also selects nvidia-h100-80gb, which the team may not use: narrow the selector, or entitle the team")
	for i := range m.Teams {
		if m.Teams[i].Name == "research" {
			assert.Equal(t, map[string]int{"big-memory": 1}, m.TeamDeviceClasses(&m.Teams[i]), "its DRA profile's class, at the profile's count")
		}
	}
}
