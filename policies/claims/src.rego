# A ResourceClaim or ResourceClaimTemplate (Dynamic Resource Allocation)
# in a governed namespace asks only for devices of DeviceClasses the
# namespace's team may use: its types' and their MIG slices' classes, and
# the attribute classes of the DRA profiles it may use (the
# NamespaceEntitlement's deviceClasses, from the CUE). Selectors a user
# adds only narrow the class (DRA ANDs them with the class's); what would
# reach past it is refused: every matching device of a node (allocationMode
# All), admin access to devices other pods hold, tolerating device taints,
# and opaque driver configuration (sharing and partitioning are the
# admins', in the DeviceClass).
package accelcclaims

import data.lib.accelc

claim := input.review.object if input.review.object.kind in {"ResourceClaim", "ResourceClaimTemplate"}

devices := object.get(claim, ["spec", "devices"], {}) if claim.kind == "ResourceClaim"

devices := object.get(claim, ["spec", "spec", "devices"], {}) if claim.kind == "ResourceClaimTemplate"

what := sprintf("%v %v", [claim.kind, claim.metadata.name])

# Every request that names a class: an exact one, or a subrequest of a
# firstAvailable list, with its name.
requests contains [r.name, r.exactly] if {
	some r in object.get(devices, "requests", [])
	r.exactly
}

requests contains [concat("/", [r.name, s.name]), s] if {
	some r in object.get(devices, "requests", [])
	some s in object.get(r, "firstAvailable", [])
}

allowed := {c | some c in object.get(accelc.entitlement, ["spec", "deviceClasses"], [])}

violation contains {"msg": msg} if {
	claim
	not accelc.entitlement
	msg := sprintf("%v: namespace %v belongs to no team, so no DeviceClass is its to claim: claim devices in a team's namespace", [what, accelc.namespace])
}

violation contains {"msg": msg} if {
	accelc.entitlement
	some [name, r] in requests
	not r.deviceClassName in allowed
	msg := sprintf("%v: request %v names DeviceClass %q, which team %v may not use; it may use %v", [
		what, name, r.deviceClassName, accelc.team, concat(", ", sort(allowed)),
	])
}

violation contains {"msg": msg} if {
	some [name, r] in requests
	r.allocationMode == "All"
	msg := sprintf("%v: request %v asks for every matching device of a node (allocationMode All): ask for a count (allocationMode ExactCount)", [what, name])
}

violation contains {"msg": msg} if {
	some [name, r] in requests
	r.adminAccess == true
	msg := sprintf("%v: request %v asks for admin access, which reaches devices other pods hold: drop adminAccess", [what, name])
}

violation contains {"msg": msg} if {
	some [name, r] in requests
	count(object.get(r, "tolerations", [])) > 0
	msg := sprintf("%v: request %v tolerates device taints, which keep devices out of use: drop its tolerations", [what, name])
}

violation contains {"msg": msg} if {
	claim
	count(object.get(devices, "config", [])) > 0
	msg := sprintf("%v: it configures the driver (devices.config), which can change how devices are shared; the admins' DeviceClass holds configuration: drop it", [what])
}
