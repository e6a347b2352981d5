package accelcprofilerequired_test

import data.accelcprofilerequired.violation
import data.lib.fixtures as f

test_cpu_pod_allowed if {
	count(violation) == 0 with input as f.input_for(f.pod("ml", {}, {"containers": [{"name": "c", "resources": {"limits": {"cpu": "2"}}}]})) with data.inventory as f.inventory
}

test_profile_allowed if {
	count(violation) == 0 with input as f.input_for(f.pod("ml", f.profile("premium-gpu"), {"containers": [f.gpu_container(1)]})) with data.inventory as f.inventory
}

test_no_profile_denied if {
	some v in violation with input as f.input_for(f.pod("ml", {}, {"containers": [f.gpu_container(1)]})) with data.inventory as f.inventory
	contains(v.msg, "names no hardware profile")
}

test_requests_only_denied if {
	spec := {"containers": [{"name": "c", "resources": {"requests": {"nvidia.com/gpu": 1}}}]}
	count(violation) == 1 with input as f.input_for(f.pod("ml", {}, spec)) with data.inventory as f.inventory
}

test_init_container_denied if {
	spec := {"containers": [{"name": "c"}], "initContainers": [f.gpu_container(1)]}
	count(violation) == 1 with input as f.input_for(f.pod("ml", {}, spec)) with data.inventory as f.inventory
}

test_ephemeral_container_denied if {
	spec := {"containers": [{"name": "c"}], "ephemeralContainers": [f.gpu_container(1)]}
	count(violation) == 1 with input as f.input_for(f.pod("ml", {}, spec)) with data.inventory as f.inventory
}

test_every_vendor_denied if {
	every r in ["nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb", "amd.com/gpu", "habana.ai/gaudi", "gpu.intel.com/i915", "alpha.kubernetes.io/nvidia-gpu", "google.com/tpu", "cloud-tpus.google.com/v3", "cloud-tpus.google.com/preemptible-v3", "aws.amazon.com/neuroncore", "aws.amazon.com/neurondevice"] {
		count(violation) == 1 with input as f.input_for(f.pod("ml", {}, {"containers": [{"name": "c", "resources": {"limits": {r: 1}}}]})) with data.inventory as f.inventory
	}
}

test_generic_namespace_allowed if {
	count(violation) == 0 with input as f.input_for(f.pod("legacy", {}, {"containers": [f.gpu_container(1)]})) with data.inventory as f.inventory
}

test_unknown_profile_denied if {
	some v in violation with input as f.input_for(f.pod("ml", f.profile("nope"), {"containers": [f.gpu_container(1)]})) with data.inventory as f.inventory
	contains(v.msg, "does not exist")
}

test_disabled_profile_denied if {
	some v in violation with input as f.input_for(f.pod("ml", f.profile("old-gpu"), {"containers": [f.gpu_container(1)]})) with data.inventory as f.inventory
	contains(v.msg, "is disabled")
}

test_retired_profile_names_replacement if {
	vs := violation with input as f.input_for(f.pod("ml", f.profile("retired-gpu"), {"containers": [f.gpu_container(1)]})) with data.inventory as f.inventory
	count(vs) == 1
	some v in vs
	contains(v.msg, `hardware profile "retired-gpu" is retired: use premium-gpu`)
}

test_retired_profile_without_replacement_lists_profiles if {
	some v in violation with input as f.input_for(f.pod("ml", f.profile("retired-orphan"), {"containers": [f.gpu_container(1)]})) with data.inventory as f.inventory
	contains(v.msg, "is retired and names no replacement: pick one of:")
}

test_label_reference_allowed if {
	p := object.union(f.pod("ml", {}, {"containers": [f.gpu_container(1)]}), {"metadata": {"labels": {"accelerator.opendatahub.io/profile": "premium-gpu"}}})
	count(violation) == 0 with input as f.input_for(p) with data.inventory as f.inventory
}

test_label_and_annotation_disagree_denied if {
	p := object.union(f.pod("ml", f.profile("premium-gpu"), {"containers": [f.gpu_container(1)]}), {"metadata": {"labels": {"accelerator.opendatahub.io/profile": "large-memory"}}})
	some v in violation with input as f.input_for(p) with data.inventory as f.inventory
	contains(v.msg, "name different hardware profiles")
}

test_profile_from_another_namespace_denied if {
	ann := object.union(f.profile("premium-gpu"), {"opendatahub.io/hardware-profile-namespace": "ml"})
	some v in violation with input as f.input_for(f.pod("ml", ann, {"containers": [f.gpu_container(1)]})) with data.inventory as f.inventory
	contains(v.msg, "accelc only trusts hardware profiles in opendatahub")
}

# Every resource under an accelerator vendor's domain needs a profile,
# whatever its name: per-board names, and vendors accelc has no class for.
test_vendor_domain_resources_denied if {
	every r in ["nvidia.com/GH100_H200_141GB", "nvidia.com/GA102GL_A10", "huawei.com/Ascend910", "huawei.com/ascend-1980", "qualcomm.com/qaic", "cambricon.com/mlu", "tenstorrent.com/n300"] {
		spec := {"containers": [{"name": "c", "resources": {"limits": {r: 1}}}]}
		some v in violation with input as f.input_for(f.pod("ml", {}, spec)) with data.inventory as f.inventory
		contains(v.msg, sprintf("pod asks for %v but names no hardware profile", [r]))
	}
}
