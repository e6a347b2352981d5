# A pod of a typed hardware profile must be confined to the profile's
# accelerator types: a nodeSelector on the normalized type label, or a
# required node affinity whose every term selects only those types. A pod
# of a generic profile (and one of a generic GPU namespace that asks for
# accelerators without a profile) is confined the same way to its team's
# types. A pod of a profile over shared GPUs must likewise be confined to
# the profile's pools (MIG configs or time-slicing pools), so that it
# cannot take a whole GPU. A pod that names its node must name a node of
# one of those types and pools. It may not tolerate accelerator taints its
# profile does not tolerate.
package accelcprofilescheduling

import data.lib.accelc

type_label := input.parameters.typeLabel

# What confines the pod, and to which types: a typed profile to its own;
# a generic profile, or a generic namespace's pod without one, to the
# types of the namespace's team. (who names it, for messages only.)
# A profile that hands out devices by resource claim is confined the
# same way: its claim's DeviceClasses say which devices its pods get (the
# claims policy checks them), and the node says what else a pod there
# could reach; a node holding two models (type mixed) holds the claim's
# class too, so it is among a claim profile's types.
scope := "profile" if {
	count(accelc.profile_types) > 0
} else := "team-profile" if {
	accelc.through_profile
	accelc.team
} else := "team-namespace" if {
	not accelc.has_profile
	accelc.requests_accelerators
	accelc.generic_namespace
	accelc.team
}

scope_types := accelc.confining_types(accelc.profile_types) if scope == "profile"
else := accelc.confining_types(sort(accelc.entitled_types)) if scope

who := sprintf("hardware profile %q", [accelc.profile_name]) if scope == "profile"
else := sprintf("team %v (generic hardware profile %q)", [accelc.team, accelc.profile_name]) if scope == "team-profile"
else := sprintf("team %v (generic GPU namespace %v)", [accelc.team, accelc.namespace])

types := scope_types

typed if count(types) > 0

selector := object.get(accelc.spec, "nodeSelector", {})

terms := object.get(accelc.spec, ["affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"], [])

term_confines(term) if {
	some e in object.get(term, "matchExpressions", [])
	e.key == type_label
	e.operator == "In"
	count(e.values) > 0
	every v in e.values {
		v in types
	}
}

confined if selector[type_label] in types

confined if {
	count(terms) > 0
	every t in terms {
		term_confines(t)
	}
}

vendor_hint := sprintf(" (%v selects on a vendor label; select on %v instead)", [k, type_label]) if {
	some k, _ in selector
	k != type_label
	some prefix in ["nvidia.com/", "amd.com/", "cloud.google.com/gke-accelerator", "karpenter.k8s.aws/"]
	startswith(k, prefix)
} else := ""

violation contains {"msg": msg} if {
	typed
	not accelc.spec.nodeName
	not confined
	msg := sprintf("%v allows %v: add nodeSelector %v: %v, or required node affinity %v In [%v] in every term%v", [
		who, concat(", ", types), type_label, types[0], type_label, concat(", ", types), vendor_hint,
	])
}

violation contains {"msg": msg} if {
	t := selector[type_label]
	not t in types
	typed
	confined
	msg := sprintf("%v allows %v, but nodeSelector %v is %v: drop it (the pod's node affinity already picks the types)", [
		who, concat(", ", types), type_label, t,
	])
}

violation contains {"msg": msg} if {
	scope
	not typed
	msg := sprintf("%v: the team may use no accelerator type, so the pod has nowhere to run; give the team acceleratorTypes or profiles in the cluster's CUE", [who])
}

# spec.nodeName skips the scheduler, so the node itself must be of an
# allowed type, by its type label as Gatekeeper syncs it (SyncSet for
# Node). Not on an UPDATE that keeps the node the pod already had
# (accelc.bound_already).
node_type(node) := t if {
	t := data.inventory.cluster.v1.Node[node].metadata.labels[type_label]
} else := "unknown (not synced, or no type label)"

violation contains {"msg": msg} if {
	typed
	node := accelc.spec.nodeName
	not accelc.bound_already(node)
	t := node_type(node)
	not t in types
	msg := sprintf("%v allows %v but spec.nodeName %v is a %v node: drop nodeName and let the scheduler pick", [
		who, concat(", ", types), node, t,
	])
}

# A toleration for a taint some profile's nodes carry (or one that
# tolerates every taint) must be one of the pod's own profile.
widens(tol) if input.parameters.taintKeys[object.get(tol, "key", "")]

widens(tol) if {
	object.get(tol, "key", "") == ""
	object.get(tol, "operator", "Equal") == "Exists"
}

allowed(tol) if {
	some p in accelc.profile_tolerations
	object.get(tol, "key", "") == object.get(p, "key", "")
	tolerated_value(tol, p)
	object.get(p, "effect", "") in {"", object.get(tol, "effect", "")}
}

tolerated_value(_, p) if object.get(p, "operator", "Equal") == "Exists"

tolerated_value(tol, p) if {
	object.get(p, "operator", "Equal") == "Equal"
	object.get(tol, "operator", "Equal") == "Equal"
	object.get(tol, "value", "") == object.get(p, "value", "")
}

violation contains {"msg": msg} if {
	accelc.hwp
	some tol in object.get(accelc.spec, "tolerations", [])
	widens(tol)
	not allowed(tol)
	msg := sprintf("toleration %v is not one of hardware profile %q's: it would let the pod onto another pool's nodes; use the profile's tolerations %v", [
		tol, accelc.profile_name, accelc.profile_tolerations,
	])
}

# Profiles over shared GPUs: the same confinement on the pool label.
pool_label := accelc.pool_key

pools := accelc.profile_pools

term_confines_pool(term) if {
	some e in object.get(term, "matchExpressions", [])
	e.key == pool_label
	e.operator == "In"
	count(e.values) > 0
	every v in e.values {
		v in pools
	}
}

pool_confined if selector[pool_label] in pools

pool_confined if {
	count(terms) > 0
	every t in terms {
		term_confines_pool(t)
	}
}

# (Entered only for a profile over shared GPUs: OPA pays for every rule
# body it enters.)
violation contains v if {
	count(pools) > 0
	some v in pool_violation
}

pool_violation contains {"msg": msg} if {
	not accelc.spec.nodeName
	not pool_confined
	msg := sprintf("hardware profile %q runs on shared GPUs in %v: add nodeSelector %v: %v, or required node affinity %v In [%v] in every term", [
		accelc.profile_name, concat(", ", pools), pool_label, pools[0], pool_label, concat(", ", pools),
	])
}

node_pool(node) := p if {
	p := data.inventory.cluster.v1.Node[node].metadata.labels[pool_label]
} else := "none (not synced, or in no pool)"

pool_violation contains {"msg": msg} if {
	node := accelc.spec.nodeName
	not accelc.bound_already(node)
	p := node_pool(node)
	not p in pools
	msg := sprintf("hardware profile %q runs on shared GPUs in %v but spec.nodeName %v is in pool %v: drop nodeName and let the scheduler pick", [
		accelc.profile_name, concat(", ", pools), node, p,
	])
}

# Before Kubernetes 1.36 no MutatingAdmissionPolicy gives a workload's pod
# templates the profile label from Open Data Hub's annotation; the
# constraint is told so by labelledFromQueue, the kinds whose one pod
# template Gatekeeper's mutators label from the profile's LocalQueue
# instead, and every pod that joins a profile's queue is labelled as a
# pod. A template that names its profile by annotation only, of any other
# kind (a RayCluster's, a PyTorchJob's, a LeaderWorkerSet's) or outside
# the profile's queue, would be admitted here and its
# pods, placed by no mutator, refused when its controller makes them: it
# is refused now, naming the label to add.
violation contains {"msg": msg} if {
	kinds := input.parameters.labelledFromQueue
	w := input.review.object
	not w.kind in {"Pod", "Notebook"}
	some [path, t] in accelc.object_templates(w)
	count(path) > 0
	name := t.metadata.annotations[accelc.profile_annotation]
	not t.metadata.labels[accelc.profile_label]
	not labelled_from_queue(w, kinds, t, name)
	msg := sprintf("%v %v: the pod template at %v names hardware profile %q by annotation %v only; before Kubernetes 1.36 nothing gives its pods accelc's label, so they would be refused when made: label the template %v: %v", [
		w.kind, object.get(w.metadata, "name", ""), concat(".", [sprintf("%v", [x]) | some x in path]), name, accelc.profile_annotation, accelc.profile_label, name,
	])
}

# The kind's one template is labelled from the workload's queue label, or
# the template's pods join the profile's queue themselves (each is then
# labelled as a pod).
labelled_from_queue(w, kinds, _, name) if {
	kinds[accelc.group_kind(w)]
	q := accelc.profiles[name].spec.scheduling.kueue.localQueueName
	object.get(w.metadata, ["labels", "kueue.x-k8s.io/queue-name"], "") == q
}

labelled_from_queue(_, _, t, name) if {
	q := accelc.profiles[name].spec.scheduling.kueue.localQueueName
	object.get(t.metadata, ["labels", "kueue.x-k8s.io/queue-name"], "") == q
}
