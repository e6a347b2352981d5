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
# names a ResourceClaim, which is judged as it is now (synced); any other
# pod may hold none.
#
# The claim rules are entered only for a pod that holds or uses claims,
# and those of a profile that hands out devices by claim only for its
# pods: OPA pays for every rule body it enters, and most pods have
# neither.
violation contains v if {
	accelc.holds_claims
	some v in claims_violation
}

violation contains v if {
	accelc.dra_profile
	some v in dra_violation
}

claims_violation contains {"msg": msg} if {
	not accelc.dra_profile
	msg := sprintf("pod holds Dynamic Resource Allocation claims, but %v, so a claim could reach any device: name a profile that does (its HardwareProfile has annotation %v), or ask for the profile's resource (%v)", [claims_why, accelc.key("resource-claim-template"), excluded_hint])
}

claims_why := sprintf("hardware profile %q hands out no devices by claim", [accelc.profile_name]) if accelc.has_profile
else := "the pod names no hardware profile that hands out devices by claim"

# A profile that hands out devices by claim hands them out only through
# its claim: a pod of it without one would run on an accelerator node
# with devices no claim governs.
dra_violation contains {"msg": msg} if {
	count(object.get(accelc.spec, "resourceClaims", [])) == 0
	msg := sprintf("hardware profile %q hands out devices by resource claim, and the pod holds none: add spec.resourceClaims [{name: gpu, resourceClaimTemplateName: %v}] and resources.claims [{name: gpu}] on the container that uses it", [accelc.profile_name, accelc.dra_template])
}

# A container's claim must be one the pod declares: the API server
# refuses another, and the policy does not account for it either.
claims_violation contains {"msg": msg} if {
	some c in accelc.resourced_containers
	some r in object.get(c, ["resources", "claims"], [])
	declared := {rc.name | some rc in object.get(accelc.spec, "resourceClaims", [])}
	not r.name in declared
	msg := sprintf("container %v uses DRA claim %q, which spec.resourceClaims does not declare: declare it there (from the profile's ResourceClaimTemplate) or drop it", [c.name, object.get(r, "name", "")])
}

# A named ResourceClaim is judged as it is now, from Gatekeeper's synced
# copy: one that is not synced yet is refused until it is, so that a claim
# the policy cannot read never reaches a device.
dra_violation contains {"msg": msg} if {
	some c in object.get(accelc.spec, "resourceClaims", [])
	name := c.resourceClaimName
	not accelc.synced_claims[name]
	msg := sprintf("pod claim %v names ResourceClaim %v, which Gatekeeper has not synced, so its devices cannot be checked: create the claim first and retry, or use the profile's ResourceClaimTemplate %v", [c.name, name, accelc.dra_template])
}

# The named claims as they are now, judged as the claims policy judges a
# claim when it is made. (A namespace of no team is the entitlement
# policy's denial.)
dra_violation contains {"msg": msg} if {
	accelc.entitlement
	some msg in accelc.claim_problem
}

# Kueue admits a pod of its pod integration only with claims made from
# templates: a pod naming a ResourceClaim stays gated for ever. Refused
# here, with the way that works, rather than admitted to wait.
dra_violation contains {"msg": msg} if {
	accelc.profile_queue
	some c in object.get(accelc.spec, "resourceClaims", [])
	c.resourceClaimName
	msg := sprintf("pod claim %v names ResourceClaim %v, but hardware profile %q schedules through Kueue, which never admits a pod with a named ResourceClaim (it would wait for ever): use the profile's ResourceClaimTemplate %v (resourceClaimTemplateName)", [c.name, c.resourceClaimName, accelc.profile_name, accelc.dra_template])
}

# One claim: several, each within the profile's count, would add up past
# it.
dra_violation contains {"msg": msg} if {
	count(object.get(accelc.spec, "resourceClaims", [])) > 1
	msg := sprintf("pod holds %v claims; hardware profile %q hands out its devices through one, made from ResourceClaimTemplate %q: hold only that", [count(accelc.spec.resourceClaims), accelc.profile_name, accelc.dra_template])
}

dra_violation contains {"msg": msg} if {
	some c in object.get(accelc.spec, "resourceClaims", [])
	not c.resourceClaimName
	object.get(c, "resourceClaimTemplateName", "") != accelc.dra_template
	msg := sprintf("pod claim %v is made from ResourceClaimTemplate %q, but hardware profile %q hands out devices through %q: name that template", [c.name, object.get(c, "resourceClaimTemplateName", ""), accelc.profile_name, accelc.dra_template])
}

no_profile if not accelc.through_profile

why_no_profile := sprintf("hardware profile %q is retired: use %v", [accelc.profile_name, accelc.retired_for]) if {
	accelc.retired_for != ""
} else := sprintf("hardware profile %q is disabled", [accelc.profile_name]) if {
	accelc.hwp
	not accelc.profile_enabled
} else := sprintf("hardware profile %q does not hand out accelerators here", [accelc.profile_name]) if {
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
	not accelc.through_profile
	not accelc.generic_namespace
	some what in accelc.targets_accelerators
	msg := sprintf("%v aims the pod at accelerator nodes, and %v: drop it, or name a profile with annotation %v", [what, why_no_profile, accelc.profile_annotation])
}
