# Accelerators are reached only through the device plugin, by a pod that
# goes through a hardware profile. No container may see devices another
# way (device-visibility variables, privileged, device host paths, DRA
# claims no profile governs); a pod that does not go through a profile
# may neither use the GPU runtime class nor aim at accelerator nodes (their
# taints, labels or names), so whatever its image sets it never lands
# where devices are. Excluded namespaces (operators, monitoring) are not
# checked; generic GPU namespaces keep the placement they had before
# accelc.
package accelcdeviceaccess

import data.lib.accelc

excluded_hint := "pods that must (GPU operators, monitoring agents) belong in a namespace of cluster.excludedNamespaces"

violation contains {"msg": msg} if {
	some reason in accelc.device_access
	msg := sprintf("%v: it could reach accelerators outside the device plugin; remove it (%v)", [reason, excluded_hint])
}

# A pod's claims: through a profile that hands out devices by claim, each
# of the pod's claims is made from the profile's ResourceClaimTemplate, or
# names a ResourceClaim (which the claims policy checked when it was
# made); any other pod may hold none.
violation contains {"msg": msg} if {
	accelc.holds_claims
	not accelc.dra_profile
	msg := sprintf("pod holds Dynamic Resource Allocation claims, but %v, so a claim could reach any device: name a profile that does (its HardwareProfile has annotation %v), or ask for the profile's resource (%v)", [claims_why, accelc.key("resource-claim-template"), excluded_hint])
}

claims_why := sprintf("hardware profile %q hands out no devices by claim", [accelc.profile_name]) if accelc.has_profile
else := "the pod names no hardware profile that hands out devices by claim"

# One claim: several, each within the profile's count, would add up past
# it.
violation contains {"msg": msg} if {
	accelc.dra_profile
	count(object.get(accelc.spec, "resourceClaims", [])) > 1
	msg := sprintf("pod holds %v claims; hardware profile %q hands out its devices through one, made from ResourceClaimTemplate %q: hold only that", [count(accelc.spec.resourceClaims), accelc.profile_name, accelc.dra_template])
}

violation contains {"msg": msg} if {
	accelc.dra_profile
	some c in object.get(accelc.spec, "resourceClaims", [])
	not c.resourceClaimName
	object.get(c, "resourceClaimTemplateName", "") != accelc.dra_template
	msg := sprintf("pod claim %v is made from ResourceClaimTemplate %q, but hardware profile %q hands out devices through %q: name that template", [c.name, object.get(c, "resourceClaimTemplateName", ""), accelc.profile_name, accelc.dra_template])
}

no_profile if not accelc.through_profile

why_no_profile := sprintf("hardware profile %q does not hand out accelerators here", [accelc.profile_name]) if {
	accelc.has_profile
} else := "the pod names no hardware profile"

violation contains {"msg": msg} if {
	rc := accelc.spec.runtimeClassName
	input.parameters.deviceRuntimeClasses[rc]
	no_profile
	not accelc.generic_namespace
	msg := sprintf("runtimeClassName %v hands devices to containers, and %v: drop it, or name a profile with annotation %v", [rc, why_no_profile, accelc.profile_annotation])
}

violation contains {"msg": msg} if {
	no_profile
	not accelc.generic_namespace
	some what in accelc.targets_accelerators
	msg := sprintf("%v aims the pod at accelerator nodes, and %v: drop it, or name a profile with annotation %v", [what, why_no_profile, accelc.profile_annotation])
}
