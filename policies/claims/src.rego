# A ResourceClaim or ResourceClaimTemplate (Dynamic Resource Allocation)
# in a governed namespace asks only for devices of DeviceClasses the
# namespace's team may use: its types' and their MIG slices' classes, and
# the attribute classes of the DRA profiles it may use (the
# NamespaceEntitlement's deviceClasses, from the CUE). Selectors a user
# adds only narrow the class (DRA ANDs them with the class's); what would
# reach past it is refused: every matching device of a node (allocationMode
# All), admin access to devices other pods hold, tolerating device taints,
# and opaque driver configuration (sharing and partitioning are the
# admins', in the DeviceClass); and no request asks for more devices than
# the team's DRA profiles hand out at most.
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

# The classes the team may claim, each with the most devices a request
# may ask for.
limits := object.get(accelc.entitlement, ["spec", "deviceClasses"], {})

allowed := {c | some c, _ in limits}

violation contains {"msg": msg} if {
	claim
	not accelc.entitlement
	msg := sprintf("%v: namespace %v belongs to no team, so no DeviceClass is its to claim: claim devices in a team's namespace", [what, accelc.namespace])
}

violation contains {"msg": msg} if {
	accelc.entitlement
	some [name, r] in requests
	not r.deviceClassName in allowed
	msg := sprintf("%v: request %v names DeviceClass %q, which team %v may not use; %v", [
		what, name, r.deviceClassName, accelc.team, may_claim,
	])
}

may_claim := sprintf("it may use %v", [concat(", ", sort(allowed))]) if count(allowed) > 0
else := "it may claim none: no hardware profile it may use hands out devices by claim"

violation contains {"msg": msg} if {
	some [name, r] in requests
	limit := limits[r.deviceClassName]
	n := object.get(r, "count", 1)
	n > limit
	msg := sprintf("%v: request %v asks for %v devices of DeviceClass %v; team %v's profiles hand out at most %v: ask for fewer", [what, name, n, r.deviceClassName, accelc.team, limit])
}

# One request: several, each within the count, would add up past it.
violation contains {"msg": msg} if {
	n := count(object.get(devices, "requests", []))
	n > 1
	msg := sprintf("%v: it makes %v device requests; a claim makes one, within the count a profile hands out: merge them", [what, n])
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
