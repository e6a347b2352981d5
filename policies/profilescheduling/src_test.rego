package accelcprofilescheduling_test

import data.accelcprofilescheduling.violation
import data.lib.fixtures as f

label := "accelerator.opendatahub.io/type"

premium(spec) := f.input_for(f.pod("ml", f.profile("premium-gpu"), object.union({"containers": [f.gpu_container(1)]}, spec)))

multi(spec) := f.input_for(f.pod("ml", f.profile("large-memory"), object.union({"containers": [f.gpu_container(1)]}, spec)))

affinity(terms) := {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}}

test_node_selector_allowed if {
	count(violation) == 0 with input as premium({"nodeSelector": {label: "nvidia-h200-141gb"}}) with data.inventory as f.inventory
}

test_no_selector_denied if {
	some v in violation with input as premium({}) with data.inventory as f.inventory
	contains(v.msg, "allows nvidia-h200-141gb: add nodeSelector accelerator.opendatahub.io/type: nvidia-h200-141gb")
}

test_wrong_type_denied if {
	count(violation) == 1 with input as premium({"nodeSelector": {label: "nvidia-a100-80gb"}}) with data.inventory as f.inventory
}

test_affinity_subset_allowed if {
	count(violation) == 0 with input as multi(affinity([{"matchExpressions": [{"key": label, "operator": "In", "values": ["nvidia-a100-80gb"]}]}])) with data.inventory as f.inventory
}

test_affinity_exists_denied if {
	count(violation) == 1 with input as multi(affinity([{"matchExpressions": [{"key": label, "operator": "Exists"}]}])) with data.inventory as f.inventory
}

test_affinity_extra_term_denied if {
	terms := [
		{"matchExpressions": [{"key": label, "operator": "In", "values": ["nvidia-h200-141gb"]}]},
		{"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]},
	]
	count(violation) == 1 with input as multi(affinity(terms)) with data.inventory as f.inventory
}

test_affinity_wider_set_denied if {
	count(violation) == 1 with input as multi(affinity([{"matchExpressions": [{"key": label, "operator": "In", "values": ["nvidia-h200-141gb", "nvidia-v100-16gb"]}]}])) with data.inventory as f.inventory
}

test_vendor_label_denied_with_hint if {
	some v in violation with input as premium({"nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-H200"}}) with data.inventory as f.inventory
	contains(v.msg, "nvidia.com/gpu.product selects on a vendor label")
}

test_node_name_of_allowed_type if {
	count(violation) == 0 with input as premium({"nodeName": "h200-01"}) with data.inventory as f.inventory
}

test_node_name_of_other_type_denied if {
	some v in violation with input as premium({"nodeName": "v100-01"}) with data.inventory as f.inventory
	contains(v.msg, "is a nvidia-v100-16gb node")
}

test_node_name_from_synced_node if {
	nodes := {"cluster": {"v1": {"Node": {"new-node": {"metadata": {"labels": {label: "nvidia-h200-141gb"}}}}}}}
	count(violation) == 0 with input as premium({"nodeName": "new-node"}) with data.inventory as object.union(f.inventory, nodes)
}

test_synced_label_wins if {
	nodes := {"cluster": {"v1": {"Node": {"h200-01": {"metadata": {"labels": {label: "nvidia-t4-16gb"}}}}}}}
	count(violation) == 1 with input as premium({"nodeName": "h200-01"}) with data.inventory as object.union(f.inventory, nodes)
}

test_node_name_unknown_denied if {
	count(violation) == 1 with input as premium({"nodeName": "who-knows"}) with data.inventory as f.inventory
}

test_node_name_not_checked_on_update_of_bound_pod if {
	inp := premium({"nodeName": "who-knows"})
	update := {"review": {"operation": "UPDATE", "oldObject": {"metadata": {"annotations": f.profile("premium-gpu")}, "spec": {"nodeName": "who-knows"}}}}
	count(violation) == 0 with input as object.union(inp, update) with data.inventory as f.inventory
}

# Gatekeeper judges a Deployment's UPDATE as the pod its template makes,
# with no old pod: a nodeName put into the template is checked.
test_node_name_checked_on_update_without_old_pod if {
	inp := premium({"nodeName": "who-knows"})
	some v in violation with input as object.union(inp, {"review": {"operation": "UPDATE"}}) with data.inventory as f.inventory
	contains(v.msg, "spec.nodeName who-knows")
}

test_node_name_checked_on_update_that_changes_the_profile if {
	inp := premium({"nodeName": "who-knows"})
	update := {"review": {"operation": "UPDATE", "oldObject": {"metadata": {"annotations": {"opendatahub.io/hardware-profile-name": "standard-gpu"}}, "spec": {"nodeName": "who-knows"}}}}
	some v in violation with input as object.union(inp, update) with data.inventory as f.inventory
	contains(v.msg, "spec.nodeName who-knows")
}

test_node_name_checked_on_update_that_moves_it if {
	inp := premium({"nodeName": "who-knows"})
	update := {"review": {"operation": "UPDATE", "oldObject": {"spec": {"nodeName": "elsewhere"}}}}
	some v in violation with input as object.union(inp, update) with data.inventory as f.inventory
	contains(v.msg, "spec.nodeName who-knows")
}

test_own_toleration_allowed if {
	tol := {"key": "accelerator.opendatahub.io/pool", "operator": "Equal", "value": "premium", "effect": "NoSchedule"}
	count(violation) == 0 with input as premium({"nodeSelector": {label: "nvidia-h200-141gb"}, "tolerations": [tol]}) with data.inventory as f.inventory
}

test_other_pool_toleration_denied if {
	tol := {"key": "accelerator.opendatahub.io/pool", "operator": "Equal", "value": "standard", "effect": "NoSchedule"}
	some v in violation with input as premium({"nodeSelector": {label: "nvidia-h200-141gb"}, "tolerations": [tol]}) with data.inventory as f.inventory
	contains(v.msg, "another pool")
}

test_tolerate_everything_denied if {
	count(violation) == 1 with input as premium({"nodeSelector": {label: "nvidia-h200-141gb"}, "tolerations": [{"operator": "Exists"}]}) with data.inventory as f.inventory
}

test_unrelated_toleration_allowed if {
	tol := {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
	count(violation) == 0 with input as premium({"nodeSelector": {label: "nvidia-h200-141gb"}, "tolerations": [tol]}) with data.inventory as f.inventory
}

generic(ns, spec) := f.input_for(f.pod(ns, f.profile("gpu"), object.union({"containers": [f.gpu_container(1)]}, spec)))

# A generic profile's pods are confined to their team's types: the
# mutation adds the team's types; a pod's own placement must stay within.
test_generic_profile_unconfined_denied if {
	some v in violation with input as generic("serving", {}) with data.inventory as f.inventory
	contains(v.msg, "team model-serving (generic hardware profile \"gpu\") allows nvidia-a100-80gb: add nodeSelector")
}

test_generic_profile_team_types_admitted if {
	count(violation) == 0 with input as generic("serving", {"nodeSelector": {label: "nvidia-a100-80gb"}}) with data.inventory as f.inventory
	count(violation) == 0 with input as generic("ml", affinity([{"matchExpressions": [{"key": label, "operator": "In", "values": ["nvidia-h200-141gb", "nvidia-a100-80gb"]}]}])) with data.inventory as f.inventory
}

test_generic_profile_other_type_denied if {
	count(violation) == 1 with input as generic("serving", {"nodeSelector": {label: "nvidia-h200-141gb"}}) with data.inventory as f.inventory
	count(violation) == 1 with input as generic("serving", affinity([{"matchExpressions": [{"key": label, "operator": "In", "values": ["nvidia-h200-141gb"]}]}])) with data.inventory as f.inventory
}

test_generic_profile_node_name_of_other_type_denied if {
	some v in violation with input as generic("serving", {"nodeName": "h200-01"}) with data.inventory as f.inventory
	contains(v.msg, "spec.nodeName h200-01 is a nvidia-h200-141gb node")
}

test_generic_namespace_confined_to_team_types if {
	in_legacy := f.input_for(f.pod("legacy", {}, {"containers": [f.gpu_container(1)], "nodeSelector": {label: "nvidia-v100-16gb"}}))
	some v in violation with input as in_legacy with data.inventory as f.inventory
	contains(v.msg, "team ml-research (generic GPU namespace legacy) allows")
}

pool_label := "accelerator.opendatahub.io/pool"

shared(spec) := f.input_for(f.pod("ml", f.profile("shared-a100"), object.union({"containers": [f.gpu_container(1)]}, spec)))

test_pool_selector_allowed if {
	count(violation) == 0 with input as shared({"nodeSelector": {label: "nvidia-a100-80gb", pool_label: "a100-ts"}}) with data.inventory as f.inventory
}

test_type_without_pool_denied if {
	some v in violation with input as shared({"nodeSelector": {label: "nvidia-a100-80gb"}}) with data.inventory as f.inventory
	contains(v.msg, "runs on shared GPUs in a100-ts, a100-ts-b: add nodeSelector accelerator.opendatahub.io/pool: a100-ts")
}

test_pool_affinity_with_fallback_allowed if {
	terms := [{"matchExpressions": [
		{"key": label, "operator": "In", "values": ["nvidia-a100-80gb"]},
		{"key": pool_label, "operator": "In", "values": ["a100-ts", "a100-ts-b"]},
	]}]
	count(violation) == 0 with input as shared(affinity(terms)) with data.inventory as f.inventory
}

test_pool_affinity_wider_denied if {
	terms := [{"matchExpressions": [
		{"key": label, "operator": "In", "values": ["nvidia-a100-80gb"]},
		{"key": pool_label, "operator": "In", "values": ["a100-ts", "a100-mig"]},
	]}]
	count(violation) == 1 with input as shared(affinity(terms)) with data.inventory as f.inventory
}

test_pool_node_name_outside_pool_denied if {
	some v in violation with input as shared({"nodeName": "a100-01"}) with data.inventory as f.inventory
	contains(v.msg, "spec.nodeName a100-01 is in pool none")
}

test_pool_node_name_in_pool_allowed if {
	count(violation) == 0 with input as shared({"nodeName": "a100-ts-01"}) with data.inventory as f.inventory
}

test_whole_gpu_profile_ignores_pools if {
	count(violation) == 0 with input as premium({"nodeSelector": {label: "nvidia-h200-141gb"}, "tolerations": [f.pool]}) with data.inventory as f.inventory
}

# The mutation adds the team's affinity to a generic-profile pod that
# selects another type by nodeSelector: still denied.
test_generic_selector_outside_mutated_affinity_denied if {
	spec := object.union(affinity([{"matchExpressions": [{"key": label, "operator": "In", "values": ["nvidia-a100-80gb"]}]}]), {"nodeSelector": {label: "nvidia-h200-141gb"}})
	some v in violation with input as generic("serving", spec) with data.inventory as f.inventory
	contains(v.msg, "but nodeSelector accelerator.opendatahub.io/type is nvidia-h200-141gb: drop it")
}

dra_spec(extra) := object.union({"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "dra-large"}], "containers": [{"name": "main", "image": "trainer", "resources": {"claims": [{"name": "gpu"}]}}]}, extra)

# A claim profile's pods are confined to its types like any profile's,
# and may reach nodes of two models (type mixed), where the claim is
# allocated a device of its class.
test_dra_profile_unconfined_denied if {
	p := f.pod("dra", f.profile("dra-large"), dra_spec({}))
	some v in violation with input as f.input_for(p) with data.inventory as f.inventory
	contains(v.msg, `hardware profile "dra-large" allows nvidia-h200-141gb, nvidia-a100-80gb, mixed`)
}

test_dra_profile_confined_admitted if {
	affinity := {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": label, "operator": "In", "values": ["nvidia-h200-141gb", "nvidia-a100-80gb", "mixed"]}]}]}}}
	count(violation) == 0 with input as f.input_for(f.pod("dra", f.profile("dra-large"), dra_spec({"affinity": affinity}))) with data.inventory as f.inventory
}

test_dra_profile_on_other_type_denied if {
	p := f.pod("dra", f.profile("dra-large"), dra_spec({"nodeName": "v100-01"}))
	some v in violation with input as f.input_for(p) with data.inventory as f.inventory
	contains(v.msg, "spec.nodeName v100-01 is a nvidia-v100-16gb node")
}

# A constraint of a stage that does not deny (parameter forecast) judges
# a pod as accelc's mutations would have changed it, for none ran: a
# profile pod without a selector is admitted, one pinned to another type
# is still reported.
forecast_input(spec) := object.union(premium(spec), {"parameters": {"forecast": true}})

test_forecast_no_selector_allowed if {
	count(violation) == 0 with input as forecast_input({}) with data.inventory as f.inventory
}

test_forecast_wrong_type_denied if {
	count(violation) == 1 with input as forecast_input({"nodeSelector": {label: "nvidia-a100-80gb"}}) with data.inventory as f.inventory
}

# Before Kubernetes 1.36 (labelledFromQueue set), a workload's template
# that names its profile by annotation only gets no label: refused up
# front, but for a one-template kind Gatekeeper labels from the profile's
# queue, or a template that carries the label itself.
older_params := object.union(f.params, {"labelledFromQueue": {"apps/Deployment": true}})

older_workload(kind, api, labels, template_labels) := {"review": {
	"operation": "CREATE",
	"object": {
		"apiVersion": api, "kind": kind,
		"metadata": {"name": "w", "namespace": "ml", "labels": labels},
		"spec": {"template": {
			"metadata": {"annotations": f.profile("premium-gpu"), "labels": template_labels},
			"spec": {"containers": [f.gpu_container(1)]},
		}},
	},
}, "parameters": older_params}

unlabelled_denials contains v.msg if {
	some v in violation
	contains(v.msg, "before Kubernetes 1.36 nothing gives its pods accelc's label")
}

queued_premium := object.union(f.inventory, {"namespace": {"opendatahub": {"infrastructure.opendatahub.io/v1": {"HardwareProfile": {"premium-gpu": {"spec": {"scheduling": {"type": "Queue", "kueue": {"localQueueName": "premium"}}}}}}}}})

test_older_minor_annotation_only_template_denied if {
	some v in violation with input as older_workload("Deployment", "apps/v1", {}, {}) with data.inventory as queued_premium
	contains(v.msg, `Deployment w: the pod template at spec.template names hardware profile "premium-gpu" by annotation opendatahub.io/hardware-profile-name only`)
	contains(v.msg, "label the template accelerator.opendatahub.io/profile: premium-gpu")
}

test_older_minor_template_labelled_from_queue_admitted if {
	count(unlabelled_denials) == 0 with input as older_workload("Deployment", "apps/v1", {"kueue.x-k8s.io/queue-name": "premium"}, {}) with data.inventory as queued_premium
}

test_older_minor_template_in_the_queue_admitted if {
	inp := older_workload("StatefulSet", "apps/v1", {}, {"kueue.x-k8s.io/queue-name": "premium"})
	count(unlabelled_denials) == 0 with input as inp with data.inventory as queued_premium
}

test_older_minor_other_kind_in_a_queue_denied if {
	inp := older_workload("StatefulSet", "apps/v1", {"kueue.x-k8s.io/queue-name": "premium"}, {})
	count(unlabelled_denials) == 1 with input as inp with data.inventory as queued_premium
}

test_older_minor_template_with_label_admitted if {
	count(unlabelled_denials) == 0 with input as older_workload("Deployment", "apps/v1", {}, {"accelerator.opendatahub.io/profile": "premium-gpu"}) with data.inventory as queued_premium
}

test_older_minor_not_judged_on_newer if {
	inp := {"review": older_workload("Deployment", "apps/v1", {}, {}).review, "parameters": f.params}
	count(unlabelled_denials) == 0 with input as inp with data.inventory as queued_premium
}
