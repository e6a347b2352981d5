package render

// The node layer of enforcement: the GPU Operator's and Gatekeeper's Helm
// values accelc renders as ConfigMaps.

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	values, err := yaml.Marshal(gpuOperatorHelmValues{
		Toolkit: componentValues{Env: []corev1.EnvVar{
			{Name: "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED", Value: "false"},
			{Name: "ACCEPT_NVIDIA_VISIBLE_DEVICES_AS_VOLUME_MOUNTS", Value: "true"},
		}},
		DevicePlugin: componentValues{Env: []corev1.EnvVar{
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

// gpuOperatorHelmValues are the GPU Operator chart's values accelc sets:
// a few of the chart's, which Helm merges over the rest.
type gpuOperatorHelmValues struct {
	Toolkit      componentValues `json:"toolkit"`
	DevicePlugin componentValues `json:"devicePlugin"`
}

// componentValues are a component's values: its containers' environment.
type componentValues struct {
	Env []corev1.EnvVar `json:"env"`
}

// GatekeeperValuesName is the ConfigMap of Gatekeeper Helm values accelc
// renders, in Gatekeeper's namespace: its HelmRelease takes it with
// valuesFrom (kind ConfigMap, valuesKey values.yaml).
const GatekeeperValuesName = "accelc-gatekeeper-values"

// GatekeeperNamespace is where Gatekeeper's chart installs it.
const GatekeeperNamespace = "gatekeeper-system"

// gatekeeperValues renders how Gatekeeper must be installed for accelc
// (GatekeeperHelmValues): a ConfigMap of the chart's values.
func gatekeeperValues(m *compile.Model) (Object, bool, error) {
	v, err := GatekeeperInstallValues(m)
	if err != nil {
		return Object{}, false, err
	}
	values, err := yaml.Marshal(v)
	if err != nil {
		return Object{}, false, err
	}
	return Object{
		Dir: "mutations",
		Body: &corev1.ConfigMap{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: GatekeeperValuesName, Namespace: GatekeeperNamespace, Labels: managedLabels(m.Cluster.Name), Annotations: map[string]string{
				"accelc.io/usage": "Gatekeeper Helm values: HelmRelease spec.valuesFrom [{kind: ConfigMap, name: " + GatekeeperValuesName + ", valuesKey: values.yaml}]",
			}},
			Data: map[string]string{"values.yaml": string(values)},
		},
	}, true, nil
}
