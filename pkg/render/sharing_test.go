package render_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/render"
)

// TestMIGPartedConfig reads back small-lab's mig-parted ConfigMap in
// mig-parted's v1 format: all-disabled, and the named config filtered to
// the A100 40GB's PCI ids, as the GPU Operator's MIG manager expects.
func TestMIGPartedConfig(t *testing.T) {
	tree := renderExample(t, "small-lab")
	var cm struct {
		Metadata struct{ Namespace string }
		Data     map[string]string
	}
	require.NoError(t, yaml.Unmarshal(tree["sharing/configmap-"+render.MIGConfigMapName+".yaml"], &cm))
	assert.Equal(t, "gpu-operator", cm.Metadata.Namespace)
	var cfg struct {
		Version    string `json:"version"`
		MIGConfigs map[string][]struct {
			DeviceFilter []string       `json:"device-filter"`
			Devices      string         `json:"devices"`
			MIGEnabled   bool           `json:"mig-enabled"`
			MIGDevices   map[string]int `json:"mig-devices"`
		} `json:"mig-configs"`
	}
	require.NoError(t, yaml.UnmarshalStrict([]byte(cm.Data["config.yaml"]), &cfg))
	assert.Equal(t, "v1", cfg.Version)
	require.Contains(t, cfg.MIGConfigs, "all-disabled")
	lab := cfg.MIGConfigs["lab-a100-1g"]
	require.Len(t, lab, 1)
	assert.Equal(t, []string{"0x20B010DE", "0x20B110DE", "0x20F110DE"}, lab[0].DeviceFilter, "NVIDIA's default mig-parted config lists 0x20F110DE (A100 PCIe 40GB) too")
	assert.Equal(t, "all", lab[0].Devices)
	assert.True(t, lab[0].MIGEnabled)
	assert.Equal(t, map[string]int{"1g.5gb": 7}, lab[0].MIGDevices)
	assert.Contains(t, string(tree["nodes/nodefeaturerule-accelc-accelerator-types.yaml"]), "nvidia.com/mig.config: lab-a100-1g")
}

// TestDevicePluginConfig reads back small-lab's device-plugin ConfigMap:
// a default key without sharing, and the T4 pool's time-slicing ×4, with
// the node label that selects it.
func TestDevicePluginConfig(t *testing.T) {
	tree := renderExample(t, "small-lab")
	var cm struct{ Data map[string]string }
	require.NoError(t, yaml.Unmarshal(tree["sharing/configmap-"+render.DevicePluginConfigMapName+".yaml"], &cm))
	type config struct {
		Version string `json:"version"`
		Flags   struct {
			MIGStrategy string `json:"migStrategy"`
		} `json:"flags"`
		Sharing *struct {
			TimeSlicing *struct {
				RenameByDefault bool `json:"renameByDefault"`
				Resources       []struct {
					Name     string `json:"name"`
					Replicas int    `json:"replicas"`
				} `json:"resources"`
			} `json:"timeSlicing"`
		} `json:"sharing"`
	}
	var def, pool config
	require.NoError(t, yaml.UnmarshalStrict([]byte(cm.Data["default"]), &def))
	require.NoError(t, yaml.UnmarshalStrict([]byte(cm.Data["t4-notebooks"]), &pool))
	assert.Equal(t, "v1", def.Version)
	assert.Nil(t, def.Sharing)
	assert.Equal(t, "single", pool.Flags.MIGStrategy, "the device plugin's MIG strategy follows cluster.mig")
	require.NotNil(t, pool.Sharing.TimeSlicing)
	assert.Equal(t, "nvidia.com/gpu", pool.Sharing.TimeSlicing.Resources[0].Name)
	assert.Equal(t, 4, pool.Sharing.TimeSlicing.Resources[0].Replicas)
	assert.Contains(t, string(tree["nodes/nodefeaturerule-accelc-accelerator-types.yaml"]), "nvidia.com/device-plugin.config: t4-notebooks")
}
