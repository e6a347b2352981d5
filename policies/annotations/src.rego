# The accelerator-type annotations a pod carries for cost attribution must
# agree with its hardware profile and namespace: a pod cannot claim a type,
# profile types or a team it does not have. (Annotations a pod lacks are
# added by accelc's mutation; this policy denies only wrong ones.) A pod of
# a profile with several types, or none, learns its type only once bound:
# accelc serve --record-types then writes its node's type, and that is the
# one value the annotation may take.
package accelcannotations

import data.lib.accelc

types := accelc.profile_types

type_key := accelc.type_key

old_annotations := object.get(input.review, ["oldObject", "metadata", "annotations"], {})

# The node of an UPDATE of a pod already bound, of a profile that does not
# fix its type (several types, or a generic profile's none): the pod's
# type is its node's. Gatekeeper judges a workload's expansion with no
# old pod, so a template never gets here and a type in one stays denied.
recording_node := node if {
	accelc.operation == "UPDATE"
	input.review.object.kind == "Pod"
	node := input.review.oldObject.spec.nodeName
	node != ""
	input.review.object.spec.nodeName == node
	accelc.through_profile
	count(types) != 1
}

# A type the pod had already (admitted then) may stay, though its node
# was relabelled since: accelc serve reports the disagreement, and an
# update of the pod by its controllers must not fail on it.
kept_type := v if {
	recording_node
	v := accelc.annotations[type_key]
	old_annotations[type_key] == v
}

expected[type_key] := types[0] if count(types) == 1

expected[type_key] := kept_type

expected[type_key] := t if {
	not kept_type
	t := accelc.nodes[recording_node].metadata.labels[type_key]
}

expected[accelc.types_key] := concat(",", types) if count(types) > 0

expected[accelc.team_key] := accelc.team

# Where an expected value comes from, for messages.
source(k) := sprintf("node %v's %v label gives", [recording_node, type_key]) if {
	k == type_key
	recording_node
	not kept_type
} else := sprintf("hardware profile %q and namespace %v give", [
	object.get(accelc.annotations, accelc.profile_annotation, ""), accelc.namespace,
])

# The annotations of the three the pod carries: most pods carry none
# when they are judged (the mutation adds them after), and then neither
# rule below works out what they should be.
carried contains k if {
	a := accelc.annotations
	some k in [type_key, accelc.types_key, accelc.team_key]
	a[k] = _
}

violation contains {"msg": msg} if {
	some k in carried
	v := accelc.annotations[k]
	not expected[k]
	msg := sprintf("annotation %v=%v is not set by accelc for this pod (hardware profile %q, namespace %v): remove it", [
		k, v, object.get(accelc.annotations, accelc.profile_annotation, ""), accelc.namespace,
	])
}

violation contains {"msg": msg} if {
	some k in carried
	v := accelc.annotations[k]
	want := expected[k]
	v != want
	msg := sprintf("annotation %v=%v does not match: %v %v; remove it or set %v", [k, v, source(k), want, want])
}
