# Fixtures shared by the policies' Rego unit tests: the HardwareProfiles
# and Nodes Gatekeeper would sync for a small cluster, the parameters
# accelc would render, and pods to vary.
package lib.fixtures

prefix := "accelerator.opendatahub.io"

label := "accelerator.opendatahub.io/type"

hwp(name, types, disabled, resource, min, max, tolerations) := {
	"apiVersion": "infrastructure.opendatahub.io/v1",
	"kind": "HardwareProfile",
	"metadata": {
		"name": name,
		"namespace": "opendatahub",
		"annotations": {
			"opendatahub.io/disabled": disabled,
			"accelerator.opendatahub.io/types": concat(",", types),
		},
	},
	"spec": {
		"identifiers": [
			{"displayName": "CPU", "identifier": "cpu", "minCount": 1, "defaultCount": 1, "resourceType": "CPU"},
			{"displayName": "GPU", "identifier": resource, "minCount": min, "maxCount": max, "defaultCount": min, "resourceType": "Accelerator"},
		],
		"scheduling": {"type": "Node", "node": {"tolerations": tolerations}},
	},
}

pool := {"key": "accelerator.opendatahub.io/pool", "operator": "Equal", "value": "premium", "effect": "NoSchedule"}

shared := {"key": "accelerator.opendatahub.io/pool", "operator": "Equal", "value": "a100-ts", "effect": "NoSchedule"}

gpu_taint := {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

inventory := {
	"namespace": {"opendatahub": {"infrastructure.opendatahub.io/v1": {"HardwareProfile": {
		"premium-gpu": hwp("premium-gpu", ["nvidia-h200-141gb"], "false", "nvidia.com/gpu", 1, 8, [pool]),
		"large-memory": hwp("large-memory", ["nvidia-h200-141gb", "nvidia-a100-80gb"], "false", "nvidia.com/gpu", 1, 8, [gpu_taint]),
		"old-gpu": hwp("old-gpu", ["nvidia-v100-16gb"], "true", "nvidia.com/gpu", 1, 1, []),
		# Retired profiles, with and without a replacement.
		"retired-gpu": object.union(
			hwp("retired-gpu", ["nvidia-v100-16gb"], "true", "nvidia.com/gpu", 1, 1, []),
			{"metadata": {"annotations": {"accelerator.opendatahub.io/retired-for": "premium-gpu"}}},
		),
		"retired-orphan": object.union(
			hwp("retired-orphan", ["nvidia-v100-16gb"], "true", "nvidia.com/gpu", 1, 1, []),
			{"metadata": {"annotations": {"accelerator.opendatahub.io/retired-for": ""}}},
		),
		"gpu": hwp("gpu", [], "false", "nvidia.com/gpu", 1, 4, []),
		"mig-slice": hwp("mig-slice", ["nvidia-a100-40gb"], "false", "nvidia.com/mig-1g.5gb", 1, 2, []),
		# A profile that hands out devices by resource claim: no
		# Accelerator identifier, its template named.
		"dra-large": {
			"metadata": {"name": "dra-large", "namespace": "opendatahub", "annotations": {
				"opendatahub.io/disabled": "false",
				"accelerator.opendatahub.io/types": "nvidia-h200-141gb,nvidia-a100-80gb",
				"accelerator.opendatahub.io/resource-claim-template": "dra-large",
			}},
			"spec": {"identifiers": [{"identifier": "cpu", "resourceType": "CPU", "minCount": 1, "defaultCount": 2}]},
		},
		# A claim profile that schedules through Kueue.
		"dra-queued": {
			"metadata": {"name": "dra-queued", "namespace": "opendatahub", "annotations": {
				"opendatahub.io/disabled": "false",
				"accelerator.opendatahub.io/types": "nvidia-a100-80gb",
				"accelerator.opendatahub.io/resource-claim-template": "dra-queued",
			}},
			"spec": {
				"identifiers": [{"identifier": "cpu", "resourceType": "CPU", "minCount": 1, "defaultCount": 2}],
				"scheduling": {"type": "Queue", "kueue": {"localQueueName": "dra-queue"}},
			},
		},
		# A time-sliced profile: pool a100-ts, falling back to a100-ts-b.
		"shared-a100": object.union(
			hwp("shared-a100", ["nvidia-a100-80gb"], "false", "nvidia.com/gpu", 1, 1, [shared]),
			{"metadata": {"annotations": {"accelerator.opendatahub.io/pools": "a100-ts,a100-ts-b"}}},
		),
	}}}},
	"cluster": {
		"v1": {"Node": {
			"h200-01": {"metadata": {"name": "h200-01", "labels": {label: "nvidia-h200-141gb"}}},
			"v100-01": {"metadata": {"name": "v100-01", "labels": {label: "nvidia-v100-16gb"}}},
			"a100-01": {"metadata": {"name": "a100-01", "labels": {label: "nvidia-a100-80gb"}}},
			"a100-ts-01": {"metadata": {"name": "a100-ts-01", "labels": {label: "nvidia-a100-80gb", "accelerator.opendatahub.io/pool": "a100-ts"}}},
			"cpu-01": {"metadata": {"name": "cpu-01", "labels": {}}, "status": {"capacity": {"cpu": "64", "nvidia.com/gpu": "0"}}},
			"gpu-untyped-01": {"metadata": {"name": "gpu-untyped-01", "labels": {}}, "status": {"capacity": {"nvidia.com/gpu": "8"}}},
		}},
		"scheduling.k8s.io/v1": {"PriorityClass": {
			"research": {"metadata": {"name": "research"}, "value": 100},
			"production-inference": {"metadata": {"name": "production-inference"}, "value": 1000},
		}},
		"accelc.io/v1alpha1": {"NamespaceEntitlement": object.union_n([
			{ns: entitlement(ns, team) | some ns, team in namespaces},
			# A team entitled to one MIG-slice profile, queued by Kueue, at
			# the research tier.
			{"slices": object.union(entitlement("slices", "mig-team"), {"spec": {
				"profiles": ["mig-slice"],
				"queue": "accelc",
				"priority": {"className": "research", "value": 100},
			}})},
			# A team whose profiles hand out devices by resource claim.
			{"dra": object.union(entitlement("dra", "dra-team"), {"spec": {
				"deviceClasses": {"nvidia-a100-80gb": 2, "nvidia-h200-141gb": 8},
			}})},
		])},
	},
}

entitlement(ns, team) := {
	"apiVersion": "accelc.io/v1alpha1",
	"kind": "NamespaceEntitlement",
	"metadata": {"name": ns},
	"spec": {"team": team, "acceleratorTypes": sort(object.keys(teams[team]))},
}

teams := {
	"ml-research": {"nvidia-h200-141gb": true, "nvidia-a100-80gb": true, "nvidia-a100-40gb": true},
	"model-serving": {"nvidia-a100-80gb": true},
	"mig-team": {"nvidia-a100-40gb": true},
	"dra-team": {"nvidia-a100-80gb": true, "nvidia-h200-141gb": true},
}

namespaces := {"ml": "ml-research", "serving": "model-serving", "legacy": "ml-research"}

# params are every constraint's parameters, as accelc renders them.
params := {
	"labelPrefix": prefix,
	"profileNamespace": "opendatahub",
	"typeLabel": label,
	"genericNamespaces": {"legacy": true, "scratch": true},
	"taintKeys": {"accelerator.opendatahub.io/pool": true, "nvidia.com/gpu": true},
	"deviceRuntimeClasses": {"nvidia": true},
	"podControllers": {"batch/Job": ["system:serviceaccount:kube-system:job-controller"]},
	"kueueManagers": {"system:serviceaccount:kueue-system:kueue-controller-manager": true},
	"kueueJobKinds": {"batch/Job": true},
	"kueueNamespaces": {"slices": true},
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
