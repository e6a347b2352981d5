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

claim := accelc.reviewed_claim

what := sprintf("%v %v", [claim.kind, claim.metadata.name])

violation contains {"msg": msg} if {
	claim
	not accelc.entitlement
	msg := sprintf("%v: namespace %v belongs to no team, so no DeviceClass is its to claim: claim devices in a team's namespace", [what, accelc.namespace])
}

# What the claim asks for, judged by the library as the device access
# policy judges a ResourceClaim a pod names.
violation contains {"msg": msg} if {
	claim
	accelc.entitlement
	some msg in accelc.claim_problem
}
