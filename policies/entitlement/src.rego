# The pod's namespace belongs to a team (from the CUE, not from namespace
# labels a namespace owner could change), and that team may use every type
# of the pod's hardware profile. The pod asks for the profile's resource
# and for a device count within the profile's limits.
package accelcentitlement

import data.lib.accelc

checked if {
	accelc.requests_accelerators
	accelc.hwp
}

violation contains {"msg": msg} if {
	checked
	not accelc.team
	msg := sprintf("namespace %v belongs to no team, so it may use no accelerator: add it to a team's namespaces in the cluster's CUE", [accelc.namespace])
}

violation contains {"msg": msg} if {
	checked
	some t in accelc.profile_types
	not t in accelc.entitled_types
	msg := sprintf("team %v may not use %v (hardware profile %q): it may use %v; pick another profile or ask for the type in the team's CUE", [
		accelc.team, t, accelc.profile_name, concat(", ", sort(accelc.entitled_types)),
	])
}

violation contains {"msg": msg} if {
	checked
	some r in accelc.accelerator_resources
	r != accelc.profile_resource
	msg := sprintf("hardware profile %q is requested through %v, not %v: ask for %v", [
		accelc.profile_name, accelc.profile_resource, r, accelc.profile_resource,
	])
}

count_of := accelc.pod_amount(accelc.profile_resource)

violation contains {"msg": msg} if {
	checked
	count_of < accelc.profile_min
	msg := sprintf("hardware profile %q needs at least %v %v per pod; the pod asks for %v", [
		accelc.profile_name, accelc.profile_min, accelc.profile_resource, count_of,
	])
}

violation contains {"msg": msg} if {
	checked
	count_of > accelc.profile_max
	msg := sprintf("hardware profile %q allows at most %v %v per pod; the pod asks for %v", [
		accelc.profile_name, accelc.profile_max, accelc.profile_resource, count_of,
	])
}
