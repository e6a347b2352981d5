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
