# The accelerator-type annotations a pod carries for cost attribution must
# agree with its hardware profile and namespace: a pod cannot claim a type,
# profile types or a team it does not have. (Annotations a pod lacks are
# added by accelc's mutation; this policy denies only wrong ones.)
package accelcannotations

import data.lib.accelc

types := accelc.profile_types

expected[accelc.key("type")] := types[0] if count(types) == 1

expected[accelc.key("types")] := concat(",", types) if count(types) > 0

expected[accelc.key("team")] := accelc.team

violation contains {"msg": msg} if {
	some name in ["type", "types", "team"]
	k := accelc.key(name)
	v := accelc.annotations[k]
	not expected[k]
	msg := sprintf("annotation %v=%v is not set by accelc for this pod (hardware profile %q, namespace %v): remove it", [
		k, v, object.get(accelc.annotations, accelc.profile_annotation, ""), accelc.namespace,
	])
}

violation contains {"msg": msg} if {
	some k, want in expected
	v := accelc.annotations[k]
	v != want
	msg := sprintf("annotation %v=%v does not match: hardware profile %q and namespace %v give %v; remove it or set %v", [
		k, v, object.get(accelc.annotations, accelc.profile_annotation, ""), accelc.namespace, want, want,
	])
}
