package accelcannotations_test

import data.accelcannotations.violation
import data.lib.fixtures as f

with_annotations(profile, extra) := f.input_for(f.pod("ml", object.union(f.profile(profile), extra), {"containers": [f.gpu_container(1)]}))

test_missing_annotations_allowed if {
	count(violation) == 0 with input as with_annotations("premium-gpu", {}) with data.inventory as f.inventory
}

test_right_annotations_allowed if {
	annotations := {
		"accelerator.opendatahub.io/type": "nvidia-h200-141gb",
		"accelerator.opendatahub.io/types": "nvidia-h200-141gb",
		"accelerator.opendatahub.io/team": "ml-research",
	}
	count(violation) == 0 with input as with_annotations("premium-gpu", annotations) with data.inventory as f.inventory
}

test_forged_type_denied if {
	some v in violation with input as with_annotations("premium-gpu", {"accelerator.opendatahub.io/type": "nvidia-t4-16gb"}) with data.inventory as f.inventory
	contains(v.msg, "give nvidia-h200-141gb")
}

test_type_on_multi_type_profile_denied if {
	count(violation) == 1 with input as with_annotations("large-memory", {"accelerator.opendatahub.io/type": "nvidia-h200-141gb"}) with data.inventory as f.inventory
}

test_type_without_profile_denied if {
	count(violation) == 1 with input as f.input_for(f.pod("legacy", {"accelerator.opendatahub.io/type": "nvidia-h200-141gb"}, {"containers": [f.gpu_container(1)]})) with data.inventory as f.inventory
}

test_forged_team_denied if {
	some v in violation with input as with_annotations("premium-gpu", {"accelerator.opendatahub.io/team": "model-serving"}) with data.inventory as f.inventory
	contains(v.msg, "give ml-research")
}

# accelc serve --record-types: an UPDATE of a bound pod of a multi-type or
# generic profile may set the type its node has, and nothing else.
recorded(profile, node, type, old) := object.union(with_annotations(profile, {"accelerator.opendatahub.io/type": type}), {"review": {
	"operation": "UPDATE",
	"object": {"spec": {"nodeName": node}},
	"oldObject": {"metadata": {"annotations": object.union(f.profile(profile), old)}, "spec": {"nodeName": node}},
}})

test_recorded_type_of_multi_type_profile_allowed if {
	count(violation) == 0 with input as recorded("large-memory", "a100-01", "nvidia-a100-80gb", {}) with data.inventory as f.inventory
}

test_recorded_type_of_generic_profile_allowed if {
	count(violation) == 0 with input as recorded("gpu", "h200-01", "nvidia-h200-141gb", {}) with data.inventory as f.inventory
}

test_recorded_type_not_the_nodes_denied if {
	some v in violation with input as recorded("large-memory", "a100-01", "nvidia-h200-141gb", {}) with data.inventory as f.inventory
	contains(v.msg, "node a100-01's accelerator.opendatahub.io/type label gives nvidia-a100-80gb")
}

test_recorded_type_of_untyped_node_denied if {
	some v in violation with input as recorded("gpu", "gpu-untyped-01", "nvidia-h200-141gb", {}) with data.inventory as f.inventory
	contains(v.msg, "is not set by accelc")
}

test_recorded_type_of_unsynced_node_denied if {
	count(violation) == 1 with input as recorded("large-memory", "who-knows", "nvidia-a100-80gb", {}) with data.inventory as f.inventory
}

# The type the pod had already stays, though its node's label changed.
test_kept_type_allowed if {
	count(violation) == 0 with input as recorded("large-memory", "h200-01", "nvidia-a100-80gb", {"accelerator.opendatahub.io/type": "nvidia-a100-80gb"}) with data.inventory as f.inventory
}

test_changed_recorded_type_denied if {
	count(violation) == 1 with input as recorded("large-memory", "a100-01", "nvidia-h200-141gb", {"accelerator.opendatahub.io/type": "nvidia-a100-80gb"}) with data.inventory as f.inventory
}

# At creation, bound or not, the pod's type is not the user's to write.
test_type_on_bound_multi_type_pod_at_creation_denied if {
	inp := object.union(with_annotations("large-memory", {"accelerator.opendatahub.io/type": "nvidia-a100-80gb"}), {"review": {"object": {"spec": {"nodeName": "a100-01"}}}})
	count(violation) == 1 with input as inp with data.inventory as f.inventory
}

# An UPDATE that binds the pod (no node before) is no recording.
test_type_on_unbound_update_denied if {
	inp := object.union(recorded("large-memory", "a100-01", "nvidia-a100-80gb", {}), {"review": {"oldObject": {"spec": {"nodeName": ""}}}})
	count(violation) == 1 with input as inp with data.inventory as f.inventory
}

# Gatekeeper judges a Deployment's UPDATE as the pod its template makes,
# with no old pod: a type written into the template stays denied.
test_type_in_expanded_template_denied if {
	inp := object.union(with_annotations("large-memory", {"accelerator.opendatahub.io/type": "nvidia-a100-80gb"}), {"review": {"operation": "UPDATE", "object": {"spec": {"nodeName": "a100-01"}}}})
	count(violation) == 1 with input as inp with data.inventory as f.inventory
}

# A single-type profile's type is its profile's, recording or not.
test_single_type_update_keeps_profile_type if {
	some v in violation with input as recorded("premium-gpu", "a100-01", "nvidia-a100-80gb", {}) with data.inventory as f.inventory
	contains(v.msg, "give nvidia-h200-141gb")
}
