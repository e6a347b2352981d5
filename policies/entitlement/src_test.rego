package accelcentitlement_test

import data.accelcentitlement.violation
import data.lib.fixtures as f

pod_in(ns, profile, containers) := f.input_for(f.pod(ns, f.profile(profile), {"containers": containers}))

test_entitled_allowed if {
	count(violation) == 0 with input as pod_in("ml", "premium-gpu", [f.gpu_container(2)]) with data.inventory as f.inventory
}

test_namespace_without_team_denied if {
	some v in violation with input as pod_in("stray", "premium-gpu", [f.gpu_container(1)]) with data.inventory as f.inventory
	contains(v.msg, "belongs to no team")
}

test_team_not_entitled_denied if {
	some v in violation with input as pod_in("serving", "premium-gpu", [f.gpu_container(1)]) with data.inventory as f.inventory
	contains(v.msg, "team model-serving may not use nvidia-h200-141gb")
}

test_multi_type_needs_every_type if {
	count(violation) == 1 with input as pod_in("serving", "large-memory", [f.gpu_container(1)]) with data.inventory as f.inventory
}

# Team membership comes from the parameters, never from namespace labels.
test_relabelled_namespace_still_denied if {
	inp := pod_in("serving", "premium-gpu", [f.gpu_container(1)])
	ns := {"metadata": {"name": "serving", "labels": {"team": "ml-research", "accelerator.opendatahub.io/team": "ml-research"}}}
	count(violation) == 1 with input as object.union(inp, {"review": {"namespaceObject": ns}}) with data.inventory as f.inventory
}

test_wrong_resource_denied if {
	some v in violation with input as pod_in("ml", "mig-slice", [f.gpu_container(1)]) with data.inventory as f.inventory
	contains(v.msg, "is requested through nvidia.com/mig-1g.5gb, not nvidia.com/gpu")
}

test_too_many_denied if {
	some v in violation with input as pod_in("ml", "premium-gpu", [f.gpu_container(5), f.gpu_container(4)]) with data.inventory as f.inventory
	contains(v.msg, "at most 8")
}

test_init_containers_count_once if {
	init := {"name": "warmup", "resources": {"limits": {"nvidia.com/gpu": 8}}}
	inp := f.input_for(f.pod("ml", f.profile("premium-gpu"), {"containers": [f.gpu_container(8)], "initContainers": [init]}))
	count(violation) == 0 with input as inp with data.inventory as f.inventory
}

test_zero_denied if {
	count(violation) == 1 with input as pod_in("ml", "premium-gpu", [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 0}}}]) with data.inventory as f.inventory
}
