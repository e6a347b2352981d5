# The pod's namespace belongs to a team (from the CUE, not from namespace
# labels a namespace owner could change), and that team may use every type
# of the pod's hardware profile. The pod asks for the profile's resource
# and for a device count within the profile's limits.
package accelcentitlement

import data.lib.accelc

team := input.parameters.namespaces[accelc.namespace]

entitled := types if {
	types := input.parameters.teams[team].types
} else := []

checked if {
	accelc.requests_accelerators
	accelc.profile
}

violation contains {"msg": msg} if {
	checked
	not team
	msg := sprintf("namespace %v belongs to no team, so it may use no accelerator: add it to a team's namespaces in the cluster's CUE", [accelc.namespace])
}

violation contains {"msg": msg} if {
	checked
	team
	some t in accelc.profile.types
	not t in entitled
	msg := sprintf("team %v may not use %v (hardware profile %q): it may use %v; pick another profile or ask for the type in the team's CUE", [
		team, t, accelc.profile_name, concat(", ", entitled),
	])
}

violation contains {"msg": msg} if {
	checked
	some r in accelc.accelerator_resources
	r != accelc.profile.resourceName
	msg := sprintf("hardware profile %q is requested through %v, not %v: ask for %v", [
		accelc.profile_name, accelc.profile.resourceName, r, accelc.profile.resourceName,
	])
}

count_of := accelc.pod_amount(accelc.profile.resourceName)

violation contains {"msg": msg} if {
	checked
	count_of < accelc.profile.gpuMin
	msg := sprintf("hardware profile %q needs at least %v %v per pod; the pod asks for %v", [
		accelc.profile_name, accelc.profile.gpuMin, accelc.profile.resourceName, count_of,
	])
}

violation contains {"msg": msg} if {
	checked
	max := accelc.profile.gpuMax
	count_of > max
	msg := sprintf("hardware profile %q allows at most %v %v per pod; the pod asks for %v", [
		accelc.profile_name, max, accelc.profile.resourceName, count_of,
	])
}
