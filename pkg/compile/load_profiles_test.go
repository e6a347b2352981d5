package compile_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/compile"
)

// TestSettingsRenderWouldRefuse: a profile whose nodeSelector sets the
// type or pool label accelc sets to another value is refused at load, at
// the selector's key, as vet reports it (render used to fail on it with
// no file:line).
func TestSettingsRenderWouldRefuse(t *testing.T) {
	for name, tc := range map[string]struct {
		src  string
		want string
	}{
		"type label": {`package c

cluster: name: "lab"
profiles: l4: {
	displayName: "L4"
	acceleratorTypes: ["nvidia-l4-24gb"]
	nodeSelector: "accelerator.opendatahub.io/type": "nvidia-t4-16gb"
}
`, `c.cue:7:16: profiles.l4.nodeSelector.accelerator.opendatahub.io/type: sets accelerator.opendatahub.io/type=nvidia-t4-16gb but the profile's type is nvidia-l4-24gb: drop it from nodeSelector (accelc selects the type itself)`},
		"pool label": {`package c

cluster: {
	name: "lab"
	sharing: "a100-ts": {acceleratorType: "nvidia-a100-80gb", replicas: 3, taint: {key: "example.com/gpu", value: "true"}}
}
profiles: shared: {
	displayName: "A100 shared"
	pool: "a100-ts"
	nodeSelector: "accelerator.opendatahub.io/pool": "other"
}
`, `c.cue:10:16: profiles.shared.nodeSelector.accelerator.opendatahub.io/pool: sets accelerator.opendatahub.io/pool=other but the profile's pool is a100-ts: drop it from nodeSelector (accelc selects the pool itself)`},
	} {
		t.Run(name, func(t *testing.T) {
			dir := cluster(t, map[string]string{"c.cue": tc.src})
			_, err := compile.Load(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), filepath.ToSlash(filepath.Clean(dir))+"/"+tc.want)
		})
	}
}

// TestSelectorAgreeing: a nodeSelector that repeats the label's own value
// is fine.
func TestSelectorAgreeing(t *testing.T) {
	dir := cluster(t, map[string]string{"c.cue": `package c

cluster: name: "lab"
profiles: l4: {
	displayName: "L4"
	acceleratorTypes: ["nvidia-l4-24gb"]
	nodeSelector: "accelerator.opendatahub.io/type": "nvidia-l4-24gb"
}
`})
	_, err := compile.Load(dir)
	require.NoError(t, err)
}

// TestCatalogServiceMemoryFloor: a catalog service's memory below what
// accelc serve takes with no nodes is refused at load, at the setting.
func TestCatalogServiceMemoryFloor(t *testing.T) {
	src := `package c

cluster: {
	name: "lab"
	catalogService: {image: "example.com/accelc:v1", memory: "%s"}
}
`
	dir := cluster(t, map[string]string{"c.cue": fmt.Sprintf(src, "32Mi")})
	_, err := compile.Load(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.ToSlash(filepath.Clean(dir))+"/c.cue:5:51: cluster.catalogService.memory: 32Mi is below the 64Mi accelc serve takes before it watches any node")
	dir = cluster(t, map[string]string{"c.cue": fmt.Sprintf(src, "64Mi")})
	_, err = compile.Load(dir)
	require.NoError(t, err)
}
