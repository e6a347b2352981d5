# A pod that asks for an accelerator must name an enabled hardware profile
# of this cluster, unless its namespace is allowed generic GPU use (the
# rollout allowance that keeps existing workloads running).
package accelcprofilerequired

import data.lib.accelc

# Only on the deny path: it lists every profile.
known := concat(", ", sort(object.keys(accelc.profiles))) if {
	accelc.profiles
} else := "(none synced)"

# The profile rules below are entered only where the pod's profile is
# not a usable one (most pods name one): OPA pays for every rule body it
# enters.
usable_profile if {
	accelc.hwp
	accelc.profile_enabled
	not accelc.retired_for
}

violation contains v if {
	accelc.requests_accelerators
	not usable_profile
	some v in profile_violation
}

profile_violation contains {"msg": msg} if {
	not accelc.has_profile
	not input.parameters.genericNamespaces[accelc.namespace]
	msg := sprintf("pod asks for %v but names no hardware profile: set annotation %v to one of: %v (namespace %v is not allowed generic GPU use)", [
		concat(", ", sort(accelc.accelerator_resources)), accelc.profile_annotation, known, accelc.namespace,
	])
}

profile_violation contains {"msg": msg} if {
	accelc.has_profile
	not accelc.hwp
	msg := sprintf("hardware profile %q does not exist in namespace %v: set annotation %v to one of: %v", [
		accelc.profile_name, accelc.profile_namespace, accelc.profile_annotation, known,
	])
}

profile_violation contains {"msg": msg} if {
	accelc.hwp
	not accelc.profile_enabled
	not accelc.retired_for
	msg := sprintf("hardware profile %q is disabled: pick an enabled one (%v)", [accelc.profile_name, known])
}

profile_violation contains {"msg": msg} if {
	r := accelc.retired_for
	r != ""
	msg := sprintf("hardware profile %q is retired: use %v (its running pods finish; new ones are refused)", [accelc.profile_name, r])
}

profile_violation contains {"msg": msg} if {
	accelc.retired_for == ""
	msg := sprintf("hardware profile %q is retired and names no replacement: pick one of: %v (its running pods finish; new ones are refused)", [accelc.profile_name, known])
}

violation contains {"msg": msg} if {
	a := accelc.annotations[accelc.profile_annotation]
	l := accelc.labels[accelc.profile_label]
	a != l
	msg := sprintf("annotation %v=%v and label %v=%v name different hardware profiles: keep one", [
		accelc.profile_annotation, a, accelc.profile_label, l,
	])
}

violation contains {"msg": msg} if {
	accelc.requests_accelerators
	ns := accelc.annotations[accelc.profile_namespace_annotation]
	ns != accelc.profile_namespace
	msg := sprintf("annotation %v=%v: accelc only trusts hardware profiles in %v; use one of: %v", [
		accelc.profile_namespace_annotation, ns, accelc.profile_namespace, known,
	])
}
