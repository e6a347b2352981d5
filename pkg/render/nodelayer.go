package render

import (
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/compile"
)

// GPUOperatorValuesName is the ConfigMap of GPU Operator Helm values
// accelc renders: a Flux HelmRelease of the GPU Operator takes it with
// valuesFrom (kind ConfigMap, valuesKey values.yaml).
const GPUOperatorValuesName = "accelc-gpu-operator-values"

// gpuOperatorValues renders the node layer of enforcement for NVIDIA GPUs:
// the container toolkit stops honouring NVIDIA_VISIBLE_DEVICES from
// unprivileged containers, and the device plugin hands a container its
// devices as volume mounts, which only the kubelet can create. A pod's own
// environment, an envFrom or its image's ENV then reach no device, which
// admission cannot see. (Privileged containers still see every device;
// Pod Security and admission keep them out of team namespaces.)
func gpuOperatorValues(m *compile.Model) (Object, bool, error) {
	nvidia := false
	for i := range m.Profiles {
		nvidia = nvidia || strings.HasPrefix(m.Profiles[i].ResourceName, "nvidia.com/")
	}
	if !nvidia {
		return Object{}, false, nil
	}
	type env struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	values, err := yaml.Marshal(map[string]any{
		"toolkit": map[string]any{"env": []env{
			{Name: "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED", Value: "false"},
			{Name: "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS", Value: "true"},
		}},
		"devicePlugin": map[string]any{"env": []env{
			{Name: "DEVICE_LIST_STRATEGY", Value: "volume-mounts"},
		}},
	})
	if err != nil {
		return Object{}, false, err
	}
	return gpuOperatorConfigMap(m, GPUOperatorValuesName, map[string]string{
		"accelc.io/usage": "GPU Operator Helm values: HelmRelease spec.valuesFrom [{kind: ConfigMap, name: " + GPUOperatorValuesName + ", valuesKey: values.yaml}]",
	}, map[string]string{"values.yaml": string(values)}), true, nil
}
