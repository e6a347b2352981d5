# Fixtures shared by the policies' Rego unit tests: the parameters accelc
# would render for a small cluster, and pods to vary.
package lib.fixtures


params := {
	"typeLabel": "accelerator.opendatahub.io/type",
	"labelPrefix": "accelerator.opendatahub.io",
	"profiles": {
		"premium-gpu": {
			"enabled": true, "types": ["nvidia-h200-141gb"], "resourceName": "nvidia.com/gpu",
			"gpuMin": 1, "gpuMax": 8,
			"tolerations": [{"key": "accelerator.opendatahub.io/pool", "operator": "Equal", "value": "premium", "effect": "NoSchedule"}],
		},
		"large-memory": {
			"enabled": true, "types": ["nvidia-h200-141gb", "nvidia-a100-80gb"], "resourceName": "nvidia.com/gpu",
			"gpuMin": 1, "gpuMax": 8,
			"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
		},
		"old-gpu": {"enabled": false, "types": ["nvidia-v100-16gb"], "resourceName": "nvidia.com/gpu", "gpuMin": 1, "gpuMax": 1, "tolerations": []},
		"gpu": {"enabled": true, "types": [], "resourceName": "nvidia.com/gpu", "gpuMin": 1, "gpuMax": 4, "tolerations": []},
		"mig-slice": {"enabled": true, "types": ["nvidia-a100-40gb"], "resourceName": "nvidia.com/mig-1g.5gb", "gpuMin": 1, "gpuMax": 2, "tolerations": []},
	},
	"genericNamespaces": {"legacy": true},
	"namespaces": {"ml": "ml-research", "serving": "model-serving", "legacy": "ml-research"},
	"teams": {
		"ml-research": {"types": ["nvidia-h200-141gb", "nvidia-a100-80gb", "nvidia-a100-40gb"]},
		"model-serving": {"types": ["nvidia-a100-80gb"]},
	},
	"nodes": {"h200-01": "nvidia-h200-141gb", "v100-01": "nvidia-v100-16gb"},
	"taintKeys": {"accelerator.opendatahub.io/pool": true, "nvidia.com/gpu": true},
}

# pod builds a pod in namespace ns with the given annotations and spec.
pod(ns, annotations, spec) := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {"name": "p", "namespace": ns, "annotations": annotations},
	"spec": spec,
}

gpu_container(n) := {"name": "main", "image": "trainer", "resources": {"limits": {"nvidia.com/gpu": n}}}

profile(name) := {"opendatahub.io/hardware-profile-name": name}

input_for(p) := {"review": {"object": p, "namespace": p.metadata.namespace, "operation": "CREATE"}, "parameters": params}
