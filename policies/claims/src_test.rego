package accelcclaims_test

import data.accelcclaims.violation
import data.lib.fixtures as f

claim(ns, requests) := {
	"apiVersion": "resource.k8s.io/v1",
	"kind": "ResourceClaim",
	"metadata": {"name": "c", "namespace": ns},
	"spec": {"devices": {"requests": requests}},
}

template(ns, requests) := {
	"apiVersion": "resource.k8s.io/v1",
	"kind": "ResourceClaimTemplate",
	"metadata": {"name": "t", "namespace": ns},
	"spec": {"spec": {"devices": {"requests": requests}}},
}

exactly(class) := {"name": "gpu", "exactly": {"deviceClassName": class, "allocationMode": "ExactCount", "count": 1}}

test_entitled_class_allowed if {
	count(violation) == 0 with input as f.input_for(claim("dra", [exactly("nvidia-a100-80gb")])) with data.inventory as f.inventory
	count(violation) == 0 with input as f.input_for(template("dra", [exactly("nvidia-a100-80gb")])) with data.inventory as f.inventory
}

test_narrowing_selector_allowed if {
	r := object.union(exactly("nvidia-a100-80gb"), {"exactly": {"selectors": [{"cel": {"expression": "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0"}}]}})
	count(violation) == 0 with input as f.input_for(claim("dra", [r])) with data.inventory as f.inventory
}

test_unentitled_class_denied if {
	some v in violation with input as f.input_for(claim("dra", [exactly("gpu.nvidia.com")])) with data.inventory as f.inventory
	contains(v.msg, `request gpu names DeviceClass "gpu.nvidia.com", which team dra-team may not use; it may use nvidia-a100-80gb, nvidia-h200-141gb`)
}

test_unentitled_subrequest_denied if {
	r := {"name": "gpu", "firstAvailable": [
		{"name": "a100", "deviceClassName": "nvidia-a100-80gb", "count": 1},
		{"name": "any", "deviceClassName": "gpu.nvidia.com", "count": 1},
	]}
	some v in violation with input as f.input_for(template("dra", [r])) with data.inventory as f.inventory
	contains(v.msg, "ResourceClaimTemplate t: request gpu/any names DeviceClass")
}

test_namespace_without_team_denied if {
	some v in violation with input as f.input_for(claim("elsewhere", [exactly("nvidia-a100-80gb")])) with data.inventory as f.inventory
	contains(v.msg, "namespace elsewhere belongs to no team")
}

test_team_without_dra_denied if {
	some v in violation with input as f.input_for(claim("ml", [exactly("nvidia-a100-80gb")])) with data.inventory as f.inventory
	contains(v.msg, "which team ml-research may not use")
}

test_widening_denied if {
	all := object.union(exactly("nvidia-a100-80gb"), {"exactly": {"allocationMode": "All"}})
	admin := object.union(exactly("nvidia-a100-80gb"), {"exactly": {"adminAccess": true}})
	tolerating := object.union(exactly("nvidia-a100-80gb"), {"exactly": {"tolerations": [{"operator": "Exists"}]}})
	some v1 in violation with input as f.input_for(claim("dra", [all])) with data.inventory as f.inventory
	contains(v1.msg, "allocationMode All")
	some v2 in violation with input as f.input_for(claim("dra", [admin])) with data.inventory as f.inventory
	contains(v2.msg, "admin access")
	some v3 in violation with input as f.input_for(claim("dra", [tolerating])) with data.inventory as f.inventory
	contains(v3.msg, "tolerates device taints")
	configured := object.union(claim("dra", [exactly("nvidia-a100-80gb")]), {"spec": {"devices": {"config": [{"opaque": {"driver": "gpu.nvidia.com", "parameters": {}}}]}}})
	some v4 in violation with input as f.input_for(configured) with data.inventory as f.inventory
	contains(v4.msg, "configures the driver")
}

test_pods_not_judged_here if {
	count(violation) == 0 with input as f.input_for(f.pod("elsewhere", {}, {"containers": [f.gpu_container(1)]})) with data.inventory as f.inventory
}

test_count_over_profiles_max_denied if {
	r := object.union(exactly("nvidia-a100-80gb"), {"exactly": {"count": 3}})
	some v in violation with input as f.input_for(claim("dra", [r])) with data.inventory as f.inventory
	contains(v.msg, "asks for 3 devices of DeviceClass nvidia-a100-80gb; team dra-team's profiles hand out at most 2")
	r2 := object.union(exactly("nvidia-h200-141gb"), {"exactly": {"count": 8}})
	count(violation) == 0 with input as f.input_for(claim("dra", [r2])) with data.inventory as f.inventory
}

test_several_requests_denied if {
	some v in violation with input as f.input_for(claim("dra", [exactly("nvidia-a100-80gb"), object.union(exactly("nvidia-a100-80gb"), {"name": "more"})])) with data.inventory as f.inventory
	contains(v.msg, "it makes 2 device requests")
}

# A cluster that turned DRA on before GA serves v1beta1: the request names
# its class itself.
v1beta1_claim(ns, requests) := object.union(claim(ns, requests), {"apiVersion": "resource.k8s.io/v1beta1"})

test_v1beta1_unentitled_class_denied if {
	some v in violation with input as f.input_for(v1beta1_claim("dra", [{"name": "gpu", "deviceClassName": "h200.example.com", "allocationMode": "ExactCount", "count": 1}])) with data.inventory as f.inventory
	contains(v.msg, `request gpu names DeviceClass "h200.example.com", which team dra-team may not use`)
}

test_v1beta1_entitled_class_allowed if {
	count(violation) == 0 with input as f.input_for(v1beta1_claim("dra", [{"name": "gpu", "deviceClassName": "nvidia-a100-80gb", "count": 1}])) with data.inventory as f.inventory
}

test_v1beta1_all_devices_denied if {
	some v in violation with input as f.input_for(v1beta1_claim("dra", [{"name": "gpu", "deviceClassName": "nvidia-a100-80gb", "allocationMode": "All"}])) with data.inventory as f.inventory
	contains(v.msg, "allocationMode All")
}

# What the policy cannot read is denied, naming the field.
test_unknown_request_field_denied if {
	r := object.union(exactly("nvidia-a100-80gb"), {"deviceSelector": "anything"})
	some v in violation with input as f.input_for(claim("dra", [r])) with data.inventory as f.inventory
	contains(v.msg, "request gpu has field deviceSelector, which accelc's policy does not read")
}

test_unknown_exact_field_denied if {
	r := object.union(exactly("nvidia-a100-80gb"), {"exactly": {"sharing": "all"}})
	some v in violation with input as f.input_for(claim("dra", [r])) with data.inventory as f.inventory
	contains(v.msg, "request gpu has field sharing")
}

test_request_without_class_denied if {
	some v in violation with input as f.input_for(claim("dra", [{"name": "gpu", "count": 1}])) with data.inventory as f.inventory
	contains(v.msg, "request gpu names no DeviceClass")
}

test_unknown_devices_field_denied if {
	c := object.union(claim("dra", [exactly("nvidia-a100-80gb")]), {"spec": {"devices": {"extended": true}}})
	some v in violation with input as f.input_for(c) with data.inventory as f.inventory
	contains(v.msg, "field devices.extended is not one accelc's policy reads")
}

test_empty_claim_denied if {
	some v in violation with input as f.input_for(claim("dra", [])) with data.inventory as f.inventory
	contains(v.msg, "ResourceClaim c: it asks for no device (devices.requests is empty)")
	some w in violation with input as f.input_for(template("dra", [])) with data.inventory as f.inventory
	contains(w.msg, "ResourceClaimTemplate t: it asks for no device")
}

test_claim_without_devices_denied if {
	c := {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "bare", "namespace": "dra"}, "spec": {}}
	some v in violation with input as f.input_for(c) with data.inventory as f.inventory
	contains(v.msg, "ResourceClaim bare: it asks for no device")
}

# The API server sends a claim's empty lists as null.
test_null_requests_denied if {
	c := {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "n", "namespace": "dra"}, "spec": {"devices": {"requests": null, "constraints": null, "config": null}}}
	some v in violation with input as f.input_for(c) with data.inventory as f.inventory
	contains(v.msg, "ResourceClaim n: it asks for no device")
	t := {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t", "namespace": "dra"}, "spec": {"spec": {"devices": null}}}
	some w in violation with input as f.input_for(t) with data.inventory as f.inventory
	contains(w.msg, "ResourceClaimTemplate t: it asks for no device")
}
