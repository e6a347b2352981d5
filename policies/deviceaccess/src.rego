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

violation contains {"msg": msg} if {
	accelc.holds_claims
	msg := sprintf("pod holds Dynamic Resource Allocation claims: no accelc hardware profile hands out DRA devices, so a claim could reach any device; ask for the profile's resource instead (%v)", [excluded_hint])
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
