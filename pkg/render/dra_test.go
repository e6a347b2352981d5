package render_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	resourcev1 "k8s.io/api/resource/v1"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/dra"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// TestDRAObjects: a cluster with DRA renders a DeviceClass per
// accelerator class its teams and profiles name (and per MIG slice a DRA
// profile hands out, and per attribute class), each selector compiling in
// Kubernetes' DRA CEL environment; each DRA profile gets a
// ResourceClaimTemplate in each namespace of the teams that may use it,
// asking for its classes in its order, and its HardwareProfile names the
// template and hands out no extended resource.
func TestDRAObjects(t *testing.T) {
	m := loadCUE(t, `package c

cluster: {
	name: "dra"
	enforcement: "deny"
	mig: {strategy: "mixed", configs: "a100-3g": {acceleratorType: "nvidia-a100-80gb", layout: "3g.40gb": 2}}
	dra: classes: "big-memory": {
		description: "80 GB or more"
		selector: "device.driver == 'gpu.nvidia.com' && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"
	}
}
profiles: {
	large: {displayName: "Large", acceleratorTypes: ["nvidia-h100-80gb", "nvidia-a100-80gb"], gpu: {default: 2, max: 8}, dra: {}}
	slice: {displayName: "Slice", acceleratorTypes: ["nvidia-a100-80gb"], mig: "3g.40gb", dra: {}}
	big: {displayName: "Big", dra: deviceClass: "big-memory"}
	plain: {displayName: "Plain", acceleratorTypes: ["nvidia-l4-24gb"]}
}
teams: {
	ml: {namespaces: ["ml", "ml-dev"], acceleratorTypes: ["nvidia-h100-80gb", "nvidia-a100-80gb", "nvidia-l4-24gb"],
		quota: {"nvidia-h100-80gb": 8, "nvidia-a100-80gb": 16, "nvidia-l4-24gb": 4, "a100-3g": 6}}
	web: {namespaces: ["web"], acceleratorTypes: ["nvidia-l4-24gb"], profiles: ["plain"], quota: "nvidia-l4-24gb": 2}
}
`)
	objs, err := render.Render(m, &inventory.Inventory{})
	require.NoError(t, err)
	require.NoError(t, render.Validate(m, objs))
	tree, err := render.BuildTree("dra", objs, render.Provenance{})
	require.NoError(t, err)

	var classes []string
	for path, data := range tree {
		if !strings.HasPrefix(path, "dra/deviceclass-") {
			continue
		}
		var dc resourcev1.DeviceClass
		require.NoError(t, yaml.Unmarshal(data, &dc))
		classes = append(classes, dc.Name)
		require.Len(t, dc.Spec.Selectors, 1)
		_, err := dra.Compile(dc.Spec.Selectors[0].CEL.Expression)
		assert.NoError(t, err, "DeviceClass %s", dc.Name)
	}
	assert.ElementsMatch(t, []string{"nvidia-a100-80gb", "nvidia-a100-80gb-mig-3g.40gb", "nvidia-h100-80gb", "nvidia-l4-24gb", "big-memory"}, classes)

	template := func(ns, name string) resourcev1.ResourceClaimTemplate {
		t.Helper()
		path := "dra/resourceclaimtemplate-" + ns + "-" + name + ".yaml"
		require.Contains(t, tree, path)
		var rct resourcev1.ResourceClaimTemplate
		require.NoError(t, yaml.Unmarshal(tree[path], &rct))
		require.Len(t, rct.Spec.Spec.Devices.Requests, 1)
		assert.Equal(t, render.DRARequestName, rct.Spec.Spec.Devices.Requests[0].Name)
		return rct
	}
	large := template("ml", "large").Spec.Spec.Devices.Requests[0]
	require.Nil(t, large.Exactly)
	require.Len(t, large.FirstAvailable, 2)
	assert.Equal(t, "nvidia-h100-80gb", large.FirstAvailable[0].DeviceClassName, "the profile's order")
	assert.Equal(t, "nvidia-a100-80gb", large.FirstAvailable[1].DeviceClassName)
	assert.Equal(t, int64(2), large.FirstAvailable[0].Count, "the profile's default count")
	assert.Equal(t, resourcev1.DeviceAllocationModeExactCount, large.FirstAvailable[0].AllocationMode)
	template("ml-dev", "large")
	slice := template("ml", "slice").Spec.Spec.Devices.Requests[0]
	require.NotNil(t, slice.Exactly)
	assert.Equal(t, "nvidia-a100-80gb-mig-3g.40gb", slice.Exactly.DeviceClassName)
	assert.Equal(t, int64(1), slice.Exactly.Count)
	assert.Equal(t, "big-memory", template("ml", "big").Spec.Spec.Devices.Requests[0].Exactly.DeviceClassName)
	assert.NotContains(t, tree, "dra/resourceclaimtemplate-web-large.yaml", "web may use only plain")
	assert.NotContains(t, tree, "dra/resourceclaimtemplate-ml-plain.yaml", "plain hands out an extended resource")

	// The team's quota caps its claims per DeviceClass, in each namespace.
	var rq struct{ Spec struct{ Hard map[string]int } }
	require.Contains(t, tree, "dra/resourcequota-ml-dev-accelc-dra-devices.yaml")
	require.NoError(t, yaml.Unmarshal(tree["dra/resourcequota-ml-accelc-dra-devices.yaml"], &rq))
	assert.Equal(t, map[string]int{
		"nvidia-h100-80gb.deviceclass.resource.k8s.io/devices":             8,
		"nvidia-a100-80gb.deviceclass.resource.k8s.io/devices":             16,
		"nvidia-l4-24gb.deviceclass.resource.k8s.io/devices":               4,
		"nvidia-a100-80gb-mig-3g.40gb.deviceclass.resource.k8s.io/devices": 6,
	}, rq.Spec.Hard)
	assert.NotContains(t, tree, "dra/resourcequota-web-accelc-dra-devices.yaml", "web uses no DRA profile")

	var hwp struct {
		Metadata struct{ Annotations map[string]string }
		Spec     struct {
			Identifiers []struct{ Identifier, ResourceType string }
			Scheduling  *struct {
				Node *struct{ NodeSelector map[string]string } `json:"node"`
			}
		}
	}
	require.NoError(t, yaml.Unmarshal(tree["profiles/hardwareprofile-slice.yaml"], &hwp))
	assert.Equal(t, "slice", hwp.Metadata.Annotations["accelerator.opendatahub.io/resource-claim-template"])
	for _, id := range hwp.Spec.Identifiers {
		assert.NotEqual(t, "Accelerator", id.ResourceType, "the claim hands out the device, not %s", id.Identifier)
	}
	if hwp.Spec.Scheduling != nil && hwp.Spec.Scheduling.Node != nil {
		assert.NotContains(t, hwp.Spec.Scheduling.Node.NodeSelector, "accelerator.opendatahub.io/type", "the allocation places the pod")
	}

	// The type classes select their own class's devices.
	a100, _ := m.Catalog.Get("nvidia-a100-80gb")
	dev, _ := compile.SampleDevice(a100, "3g.40gb")
	res, err := dra.Compile(m.DeviceClasses()[1].Selector)
	require.NoError(t, err)
	ok, err := dra.Match(context.Background(), res, dev)
	require.NoError(t, err)
	assert.True(t, ok, m.DeviceClasses()[1].Name)
}
