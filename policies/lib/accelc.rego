# Shared by every accelc ConstraintTemplate: which containers ask for
# accelerators, how many, and which hardware profile a pod names.
package lib.accelc


# The workload's reference to its Open Data Hub HardwareProfile.
profile_annotation := "opendatahub.io/hardware-profile-name"

# Extended resources that are accelerators, for every vendor, and Dynamic
# Resource Allocation's extended resource names (a DeviceClass's
# extendedResourceName defaults to deviceclass.resource.kubernetes.io/…).
base_prefixes := [
	"nvidia.com/gpu",
	"nvidia.com/mig-",
	"alpha.kubernetes.io/nvidia-gpu",
	"amd.com/",
	"habana.ai/",
	"gpu.intel.com/",
	"deviceclass.resource.kubernetes.io/",
]

# The pod under review; undefined for the other kinds the admission
# constraint matches (the claims policy's ResourceClaims and
# ResourceClaimTemplates), so that no pod rule judges them.
pod := input.review.object if object.get(input.review.object, "kind", "Pod") == "Pod"

spec := object.get(pod, "spec", {})

namespace := ns if {
	ns := input.review.namespace
	ns != ""
} else := object.get(pod, ["metadata", "namespace"], "")

annotations := object.get(pod, ["metadata", "annotations"], {})

# All containers, init and ephemeral ones included: any of them can hold a
# device.
all_containers := array.concat(
	array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", [])),
	object.get(spec, "ephemeralContainers", []),
)

# Parameters live in OPA's store: look them up by path, never hand a
# whole parameter map to a builtin (that copies it on every review).
is_accelerator(name) if {
	some prefix in base_prefixes
	startswith(name, prefix)
}

is_accelerator(name) if {
	some prefix in input.parameters.extraResourcePrefixes
	startswith(name, prefix)
}

# Accelerator resources the pod asks for, in requests or limits.
accelerator_resources contains name if {
	some c in all_containers
	some section in ["requests", "limits"]
	some name, _ in object.get(c, ["resources", section], {})
	is_accelerator(name)
}

requests_accelerators if count(accelerator_resources) > 0

# Dynamic Resource Allocation: claims the pod holds, or its containers use.
holds_claims if count(object.get(spec, "resourceClaims", [])) > 0

holds_claims if {
	some c in all_containers
	count(object.get(c, ["resources", "claims"], [])) > 0
}

# Environment variables that make a container runtime hand devices to a
# container, whatever it asked the device plugin for: the NVIDIA Container
# Toolkit's (MIG management ones included), AMD's container toolkit's and
# Habana's. "void", "none" and "" hand out none.
visibility_env := {
	"NVIDIA_VISIBLE_DEVICES",
	"NVIDIA_MIG_CONFIG_DEVICES",
	"NVIDIA_MIG_MONITOR_DEVICES",
	"AMD_VISIBLE_DEVICES",
	"HABANA_VISIBLE_DEVICES",
}

harmless_visibility := {"", "void", "none"}

# Host paths that hold device nodes, or the sockets and specs that hand
# them out (CDI specs, the kubelet's device plugin sockets), as segment
# lists; /var/run is /run on the host.
device_paths := [
	["dev"],
	["proc"],
	["sys"],
	["run", "nvidia"],
	["run", "cdi"],
	["var", "run"],
	["etc", "cdi"],
	["var", "lib", "kubelet"],
]

path_segments(p) := [s | some s in split(p, "/"); s != ""; s != "."]

# A path reaches a device path when one is a prefix of the other ("/"
# and "/var" hold /var/run; "/dev/nvidia0" is under /dev); a path that
# climbs with ".." is not trusted.
device_host_path(p) if {
	segs := path_segments(p)
	".." in segs
}

device_host_path(p) if {
	segs := path_segments(p)
	some d in device_paths
	n := min([count(segs), count(d)])
	array.slice(segs, 0, n) == array.slice(d, 0, n)
}

# Why a pod could reach devices outside the device plugin and DRA: each
# reason names the container or volume. Admission denies every one of
# them outside the excluded namespaces; the node layer (the container
# toolkit ignoring visibility variables of unprivileged containers)
# covers what admission cannot see: envFrom and the image's own ENV.
device_access contains sprintf("container %v sets %v=%v", [c.name, e.name, e.value]) if {
	some c in all_containers
	some e in object.get(c, "env", [])
	e.name in visibility_env
	not e.valueFrom
	not object.get(e, "value", "") in harmless_visibility
}

device_access contains sprintf("container %v takes %v from valueFrom", [c.name, e.name]) if {
	some c in all_containers
	some e in object.get(c, "env", [])
	e.name in visibility_env
	e.valueFrom
}

device_access contains sprintf("container %v is privileged (it sees every device of its node)", [c.name]) if {
	some c in all_containers
	object.get(c, ["securityContext", "privileged"], false) == true
}

device_access contains sprintf("volume %v mounts host path %v", [v.name, v.hostPath.path]) if {
	some v in object.get(spec, "volumes", [])
	device_host_path(v.hostPath.path)
}

# Devices a container gets: the limit, else the request (for extended
# resources a request without a limit is rejected by the API server, and a
# limit alone sets the request).
amount(c, name) := to_number(c.resources.limits[name]) if {
	c.resources.limits[name]
} else := to_number(c.resources.requests[name]) if {
	c.resources.requests[name]
} else := 0

# Devices the pod holds at once: init containers run one at a time before
# the app containers, so it is the larger of their maximum and the sum —
# but sidecars (init containers with restartPolicy Always) keep running
# beside the rest, so they add to both (at most: a sidecar started after an
# init container does not hold its devices during it).
sidecar(c) if object.get(c, "restartPolicy", "") == "Always"

pod_amount(name) := max([
	sum([amount(c, name) | some c in object.get(spec, "containers", [])]),
	max(array.concat([0], [amount(c, name) | some c in object.get(spec, "initContainers", []); not sidecar(c)])),
]) + sum([amount(c, name) | some c in object.get(spec, "initContainers", []); sidecar(c)])

labels := object.get(pod, ["metadata", "labels"], {})

# A pod names its profile with ODH's annotation, or with accelc's
# <prefix>/profile label, which accelc's mutations key on (Gatekeeper
# mutations can select by label, not by annotation) and which they turn
# into the annotation.
profile_label := key("profile")

profile_name := n if {
	n := annotations[profile_annotation]
} else := labels[profile_label]

has_profile if profile_name

# The pod's profile is the HardwareProfile object itself, which Gatekeeper
# syncs into data.inventory (accelc renders the SyncSet): policies read
# what the dashboard and ODH's webhook read, and parameters stay small.
# Only the admins' profile namespace is trusted: a user who may create
# HardwareProfiles in their own namespace must not be able to write the
# profile their pod is checked against.
profile_namespace := input.parameters.profileNamespace

profile_namespace_annotation := "opendatahub.io/hardware-profile-namespace"

profiles := data.inventory.namespace[profile_namespace]["infrastructure.opendatahub.io/v1"].HardwareProfile

hwp := profiles[profile_name]

key(name) := concat("/", [input.parameters.labelPrefix, name])

profile_enabled if object.get(hwp, ["metadata", "annotations", "opendatahub.io/disabled"], "false") != "true"

# The profile's accelerator types in preference order; empty for a
# generic profile.
profile_types := split(t, ",") if {
	t := hwp.metadata.annotations[key("types")]
	t != ""
} else := []

# The node pools (values of the <prefix>/pool label that accelc's node
# rules put on sharing pools' and MIG configs' nodes) a profile over
# shared GPUs runs in, in preference order; empty for whole GPUs.
profile_pools := split(p, ",") if {
	p := hwp.metadata.annotations[key("pools")]
	p != ""
} else := []

accelerator_identifier := id if {
	some id in hwp.spec.identifiers
	id.resourceType == "Accelerator"
}

profile_resource := accelerator_identifier.identifier

profile_min := to_number(accelerator_identifier.minCount)

profile_max := to_number(accelerator_identifier.maxCount)

# The profile's tolerations: its HardwareProfile's (scheduling type
# Node), or, for a profile that schedules through Kueue (type Queue, which
# holds no tolerations), the JSON list in accelc's tolerations annotation.
profile_tolerations := t if {
	t := hwp.spec.scheduling.node.tolerations
} else := t if {
	t := json.unmarshal(hwp.metadata.annotations[key("tolerations")])
} else := []

# The Kueue LocalQueue a profile of scheduling type Queue names.
profile_queue := hwp.spec.scheduling.kueue.localQueueName

# The namespace's team and the types it may use, from the
# NamespaceEntitlement accelc renders for every team namespace (compiled
# from the CUE; only cluster admins can write them) and Gatekeeper syncs.
entitlement := data.inventory.cluster["accelc.io/v1alpha1"].NamespaceEntitlement[namespace]

team := entitlement.spec.team

entitled_types := {t | some t in entitlement.spec.acceleratorTypes}

# The hardware profiles the team may use, by name; empty: every profile
# whose types it may use.
entitled_profiles := {p | some p in object.get(entitlement, ["spec", "profiles"], [])}

# A profile hands out accelerators when it has an Accelerator identifier
# (Open Data Hub's own CPU-only profiles have none).
accelerator_profile if accelerator_identifier

# A profile that hands out devices by resource claim (Dynamic Resource
# Allocation) names its ResourceClaimTemplate; its pods claim devices with
# it instead of asking for an extended resource.
dra_template := hwp.metadata.annotations[key("resource-claim-template")]

dra_profile if dra_template

accelerator_profile if dra_profile

# A pod goes through a profile when it names an enabled HardwareProfile
# of the admins' namespace that hands out accelerators.
through_profile if {
	hwp
	profile_enabled
	accelerator_profile
}

generic_namespace if input.parameters.genericNamespaces[namespace]

# Placement. Nodes are synced by Gatekeeper (SyncSet).
nodes := data.inventory.cluster.v1.Node

# A node is an accelerator node when accelc's node rules typed or pooled
# it, or it offers an accelerator resource.
accelerator_node(name) if nodes[name].metadata.labels[key("type")]

accelerator_node(name) if nodes[name].metadata.labels[key("pool")]

accelerator_node(name) if {
	some section in ["capacity", "allocatable"]
	some r, q in object.get(nodes[name], ["status", section], {})
	is_accelerator(r)
	not q in {"0", 0}
}

# Node labels that pick out accelerator nodes: accelc's own, the vendors'
# (GPU Feature Discovery, AMD's and Intel's labellers), NFD's PCI
# features and the clouds' accelerator labels.
accelerator_label_prefixes := [
	"nvidia.com/",
	"amd.com/",
	"beta.amd.com/",
	"habana.ai/",
	"gpu.intel.com/",
	"intel.feature.node.kubernetes.io/gpu",
	"feature.node.kubernetes.io/pci-",
	"cloud.google.com/gke-accelerator",
	"cloud.google.com/gke-gpu",
	"karpenter.k8s.aws/instance-gpu",
	"k8s.amazonaws.com/accelerator",
]

accelerator_label(k) if startswith(k, concat("", [input.parameters.labelPrefix, "/"]))

accelerator_label(k) if {
	some p in accelerator_label_prefixes
	startswith(k, p)
}

# A toleration of a taint accelerator nodes carry (the parameter lists the
# taint keys of profiles, pools, inventory accelerator nodes and the
# vendors), or of every taint.
accelerator_toleration(tol) if input.parameters.taintKeys[object.get(tol, "key", "")]

accelerator_toleration(tol) if {
	object.get(tol, "key", "") == ""
	object.get(tol, "operator", "Equal") == "Exists"
}

node_affinity := object.get(spec, ["affinity", "nodeAffinity"], {})

required_terms := object.get(node_affinity, ["requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms"], [])

preferred_terms := [p.preference | some p in object.get(node_affinity, "preferredDuringSchedulingIgnoredDuringExecution", [])]

selecting_operators := {"In", "Exists", "Gt", "Lt"}

operation := object.get(input.review, "operation", "")

# How a pod aims at accelerator nodes, each way named.
targets_accelerators contains sprintf("nodeSelector %v", [k]) if {
	some k, _ in object.get(spec, "nodeSelector", {})
	accelerator_label(k)
}

targets_accelerators contains sprintf("node affinity on %v", [e.key]) if {
	some t in array.concat(required_terms, preferred_terms)
	some e in object.get(t, "matchExpressions", [])
	accelerator_label(e.key)
	e.operator in selecting_operators
}

targets_accelerators contains sprintf("node affinity on node %v (an accelerator node)", [n]) if {
	some t in array.concat(required_terms, preferred_terms)
	some e in object.get(t, "matchFields", [])
	e.key == "metadata.name"
	some n in object.get(e, "values", [])
	accelerator_node(n)
}

targets_accelerators contains sprintf("spec.nodeName %v (an accelerator node)", [n]) if {
	operation != "UPDATE"
	n := spec.nodeName
	accelerator_node(n)
}

targets_accelerators contains sprintf("toleration %v (accelerator nodes carry it)", [tol]) if {
	some tol in object.get(spec, "tolerations", [])
	accelerator_toleration(tol)
}

# Priority: the value the Priority admission plugin resolved, else the
# synced class's.
priority_classes := data.inventory.cluster["scheduling.k8s.io/v1"].PriorityClass

pod_priority := spec.priority if is_number(spec.priority)
else := priority_classes[spec.priorityClassName].value if spec.priorityClassName
else := 0 if not spec.priorityClassName
