# Shared by every accelc ConstraintTemplate: which containers ask for
# accelerators, how many, and which hardware profile a pod names.
package lib.accelc


# The workload's reference to its Open Data Hub HardwareProfile.
profile_annotation := "opendatahub.io/hardware-profile-name"

# Extended resources that are accelerators, for every vendor.
base_prefixes := [
	"nvidia.com/gpu",
	"nvidia.com/mig-",
	"alpha.kubernetes.io/nvidia-gpu",
	"amd.com/",
	"habana.ai/",
	"gpu.intel.com/",
]

pod := input.review.object

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

# Devices a container gets: the limit, else the request (for extended
# resources a request without a limit is rejected by the API server, and a
# limit alone sets the request).
amount(c, name) := to_number(c.resources.limits[name]) if {
	c.resources.limits[name]
} else := to_number(c.resources.requests[name]) if {
	c.resources.requests[name]
} else := 0

# Devices the pod holds at once: init containers run one at a time before
# the app containers, so it is the larger of their maximum and the sum.
pod_amount(name) := max([
	sum([amount(c, name) | some c in object.get(spec, "containers", [])]),
	max(array.concat([0], [amount(c, name) | some c in object.get(spec, "initContainers", [])])),
])

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

profile_tolerations := object.get(hwp, ["spec", "scheduling", "node", "tolerations"], [])

# The namespace's team and the types it may use, from the
# NamespaceEntitlement accelc renders for every team namespace (compiled
# from the CUE; only cluster admins can write them) and Gatekeeper syncs.
entitlement := data.inventory.cluster["accelc.io/v1alpha1"].NamespaceEntitlement[namespace]

team := entitlement.spec.team

entitled_types := {t | some t in entitlement.spec.acceleratorTypes}
