# Shared by every accelc ConstraintTemplate: which containers ask for
# accelerators, how many, and which hardware profile a pod names.
package lib.accelc


# The workload's reference to its Open Data Hub HardwareProfile.
profile_annotation := "opendatahub.io/hardware-profile-name"

# Extended resources that are accelerators, for every vendor: everything
# under an accelerator vendor's domain (NVIDIA's device plugin's
# nvidia.com/gpu and MIG slices, and the per-board names Confidential
# Containers and KubeVirt advertise, nvidia.com/GH100_H200_141GB; AMD's,
# Intel's and Habana's; Huawei's Ascend, Qualcomm's Cloud AI, Cambricon's
# MLU, Hygon's DCU, MetaX's, Iluvatar's, Moore Threads', Enflame's,
# Kunlunxin's, Tenstorrent's and AMD-Xilinx's device plugins), Google's
# TPU chips (and the cloud-tpus.google.com/v2, v3… of GKE's older TPU
# nodes), AWS's Neuron devices and cores (aws.amazon.com/neuron,
# neurondevice and neuroncore), and Dynamic Resource Allocation's extended
# resource names (a DeviceClass's extendedResourceName defaults to
# deviceclass.resource.kubernetes.io/…). Whatever else a node of the
# inventory advertises reaches the policies as extraResourcePrefixes.
base_prefixes := [
	"nvidia.com/",
	"alpha.kubernetes.io/nvidia-gpu",
	"amd.com/",
	"habana.ai/",
	"gpu.intel.com/",
	"huawei.com/",
	"qualcomm.com/",
	"cambricon.com/",
	"hygon.com/",
	"metax-tech.com/",
	"iluvatar.ai/",
	"iluvatar.com/",
	"mthreads.com/",
	"enflame.com/",
	"enflame-tech.com/",
	"kunlunxin.com/",
	"baidu.com/xpu",
	"tenstorrent.com/",
	"birentech.com/",
	"vastaitech.com/",
	"xilinx.com/",
	"google.com/tpu",
	"cloud-tpus.google.com/",
	"aws.amazon.com/neuron",
	"deviceclass.resource.kubernetes.io/",
]

# The pod under review, as written: a Pod, or a Kubeflow Notebook as the
# pod its controller makes (the Notebook's own labels, which the
# controller copies to the pod, and its template's spec; the controller
# ignores the template's metadata). Undefined for the other kinds the
# admission constraint matches (the claims policy's ResourceClaims and
# ResourceClaimTemplates), so that no pod rule judges them. Workloads with
# metadata in their templates (Deployments, Jobs, …) reach the policy
# through Gatekeeper's expansion, as Pods.
written := input.review.object if object.get(input.review.object, "kind", "Pod") == "Pod"

written := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {
		"name": object.get(nb, ["metadata", "name"], ""),
		"namespace": object.get(nb, ["metadata", "namespace"], ""),
		"labels": object.get(nb, ["metadata", "labels"], {}),
	},
	"spec": object.get(nb, ["spec", "template", "spec"], {}),
} if {
	input.review.object.kind == "Notebook"
	nb := input.review.object
	startswith(object.get(nb, "apiVersion", ""), "kubeflow.org/")
}

# A Notebook is judged as its pod will be once accelc's mutators have
# changed it (its pod carries the profile label the workload policy gave
# the Notebook, and Gatekeeper mutates it when it is made); a Pod as it
# is, mutated already. The forecast writes what the mutators write where
# the pod has nothing: the required node affinity of its profile's types
# and pools (or, for a generic profile, its team's types; one type and no
# pool, a node selector), its Kueue queue, and its profile's priority
# class.
forecast if input.review.object.kind == "Notebook"

# A pod template in a list (a JobSet's replicated jobs, a RayCluster's
# worker groups), which no ExpansionTemplate can reach, is judged by the
# admission entry as the pod it makes, forecast the same way: the entry
# sets fromTemplate, a field no AdmissionRequest has, so no object can.
forecast if input.review.fromTemplate

# Where a constraint's namespaces do not deny (dryrun, warn), accelc's
# mutators do not run, so that a dry run changes nothing a pod does: the
# constraint judges each pod as the mutators would have changed it, and
# reports what deny would refuse.
forecast if input.parameters.forecast == true

# The pods a workload's list templates make, by where the template is:
# the template's labels and annotations (the pod admission policy labels
# the pod from ODH's annotation when it is made) and its spec.
list_template_pods[where] := template_pod(t) if {
	w := input.review.object
	some l in object.get(template_lists, review_kind, [])
	some i, e in object.get(w, l.path, [])
	where := sprintf("%v[%d] %v", [l.path[count(l.path) - 1], i, object.get(e, l.name, "")])
	t := object.get(e, l.template, {})
}

# The pod templates of the workload kinds accelc judges that no
# ExpansionTemplate reaches, by group/kind (render.WorkloadKinds; a test
# keeps these and fixed_templates equal to it): at fixed paths an object
# may leave out, and in lists (the list, an element's template, and the
# element's field that names it). An AppWrapper's wrapped objects are read
# through them and fixed_templates.
# The templates at fixed paths an object may leave out, which the
# admission entry judges as the pods they make where they are there:
# Gatekeeper's webhook fails a request whose object lacks an
# ExpansionTemplate's source.
constraint_paths := {
	"ray.io/RayJob": [["spec", "rayClusterSpec", "headGroupSpec", "template"], ["spec", "submitterPodTemplate"]],
	"leaderworkerset.x-k8s.io/LeaderWorkerSet": [["spec", "leaderWorkerTemplate", "leaderTemplate"]],
	"kubeflow.org/MPIJob": [["spec", "mpiReplicaSpecs", "Worker", "template"]],
}

list_template_pods[where] := template_pod(t) if {
	w := input.review.object
	some p in object.get(constraint_paths, review_kind, [])
	t := object.get(w, p, null)
	is_object(t)
	where := concat(".", p)
}

template_lists := {
	"ray.io/RayCluster": [{"path": ["spec", "workerGroupSpecs"], "template": ["template"], "name": "groupName"}],
	"ray.io/RayJob": [{"path": ["spec", "rayClusterSpec", "workerGroupSpecs"], "template": ["template"], "name": "groupName"}],
	"jobset.x-k8s.io/JobSet": [{"path": ["spec", "replicatedJobs"], "template": ["template", "spec", "template"], "name": "name"}],
}

# object_templates are the pod templates an object of a judged kind holds,
# as [path, template] (the path as object.get takes it); a bare Pod is its
# own template.
object_templates(o) := kind_templates(o, group_kind(o))

# (Its kind worked out once: a function's result is not kept.)
kind_templates(o, kind) := ({[p, t] |
	some p in array.concat(object.get(fixed_templates, kind, []), object.get(constraint_paths, kind, []))
	t := object.get(o, p, null)
	is_object(t)
} | {[p, t] |
	some l in object.get(template_lists, kind, [])
	some i, e in object.get(o, l.path, [])
	t := object.get(e, l.template, null)
	is_object(t)
	p := array.concat(array.concat(l.path, [i]), l.template)
}) | {[[], o] | kind == "/Pod"}

# An AppWrapper's components each wrap a whole object (a Job, a
# PyTorchJob, a RayJob, …), which the AppWrapper controller creates once
# Kueue admits the AppWrapper: the pod templates are where the wrapped
# object's kind holds them and where the component's podSets paths say
# ("template.spec.template": "template" is the wrapped object). Kueue's
# podSetInfos, which the controller merges into the templates, are
# Kueue's, written on its admission, and not judged here; the pods
# themselves are.
list_template_pods[where] := template_pod(t) if {
	w := input.review.object
	review_kind == "workload.codeflare.dev/AppWrapper"
	some i, c in object.get(w, ["spec", "components"], [])
	o := object.get(c, "template", {})
	some [p, t] in wrapped_templates(o, c)
	where := sprintf("components[%d] %v %v", [i, object.get(o, "kind", ""), wrapped_path(p)])
}

wrapped_templates(o, c) := object_templates(o) | {[p, t] |
	some ps in object.get(c, "podSets", [])
	startswith(object.get(ps, "path", ""), "template")
	p := [k | some x in split(replace(replace(trim_prefix(ps.path, "template"), "[", ".["), "]", ""), "."); x != ""; k := path_key(x)]
	t := object.get(o, p, null)
	is_object(t)
}

path_key(x) := to_number(substring(x, 1, -1)) if startswith(x, "[")
else := x

# wrapped_path writes a path as an AppWrapper's podSets do.
wrapped_path(p) := concat("", array.concat(["template"], [s |
	some x in p
	s := path_step(x)
]))

path_step(x) := sprintf("[%d]", [x]) if is_number(x)
else := concat("", [".", x])

# A TrainJob's pods come from the training runtime it references (a
# ClusterTrainingRuntime's JobSet), which the TrainJob does not hold; what
# the TrainJob says of them is judged: the trainer's container (its image,
# env and resourcesPerNode, on the runtime's "node" job) and each override
# of its jobs' pods (podTemplateOverrides, Trainer v2.1 on;
# podSpecOverrides before), with the labels and annotations the TrainJob
# gives them (spec.labels and spec.annotations, an override's metadata)
# and the profile it names on itself.
list_template_pods[where] := template_pod(trainjob_template(w, [o | some [_, o] in trainjob_overrides(w); "node" in o.targets], trainer_containers(w))) if {
	w := input.review.object
	review_kind == "trainer.kubeflow.org/TrainJob"
	where := "trainer node"
}

list_template_pods[where] := template_pod(trainjob_template(w, [o], [])) if {
	w := input.review.object
	review_kind == "trainer.kubeflow.org/TrainJob"
	some [at, o] in trainjob_overrides(w)
	not "node" in o.targets
	where := sprintf("%v %v", [at, concat(",", o.targets)])
}

trainjob_overrides(w) := {[sprintf("podTemplateOverrides[%d]", [i]), o] |
	some i, x in object.get(w, ["spec", "podTemplateOverrides"], [])
	o := {
		"targets": [n | some j in object.get(x, "targetJobs", []); n := object.get(j, "name", "")],
		"metadata": object.get(x, "metadata", {}),
		"spec": object.get(x, "spec", {}),
	}
} | {[sprintf("podSpecOverrides[%d]", [i]), o] |
	some i, x in object.get(w, ["spec", "podSpecOverrides"], [])
	o := {
		"targets": [n | some j in object.get(x, "targetJobs", []); n := object.get(j, "name", "")],
		"metadata": {},
		"spec": object.remove(x, ["targetJobs"]),
	}
}

trainjob_template(w, overrides, containers) := {
	"metadata": {
		"labels": object.union_n(array.concat([own_profile(w, "labels", profile_label), object.get(w, ["spec", "labels"], {})], [object.get(o.metadata, "labels", {}) | some o in overrides])),
		"annotations": object.union_n(array.concat([own_profile(w, "annotations", profile_annotation), object.get(w, ["spec", "annotations"], {})], [object.get(o.metadata, "annotations", {}) | some o in overrides])),
	},
	"spec": object.union(object.union_n([o.spec | some o in overrides]), {"containers": array.concat(containers, [c | some o in overrides; some c in object.get(o.spec, "containers", [])])}),
}

# The trainer's container, where the TrainJob says anything of it: on the
# pods of the runtime's "node" job.
trainer_containers(w) := [object.union(object.filter(trainer, ["image", "command", "args", "env"]), {"name": "node", "resources": object.get(trainer, "resourcesPerNode", {})})] if {
	trainer := object.get(w, ["spec", "trainer"], {})
	count(trainer) > 0
} else := []

# The profile an object names on itself, as a map of its one key.
own_profile(w, field, k) := {k: v} if {
	v := w.metadata[field][k]
} else := {}

# An InferenceService's predictor, transformer and explainer are each a
# PodSpec with the component's fields inline (replicas, labels and
# annotations for its pods, …) and, for a predictor, a model framework's
# container (sklearn, model, …; an explainer's art), which KServe makes
# the kserve-container; a multi-node predictor's workerSpec is another
# PodSpec. KServe gives the pods the InferenceService's labels and
# annotations and the component's.
list_template_pods[c] := template_pod(isvc_template(w, w.spec[c], w.spec[c])) if {
	w := input.review.object
	review_kind == "serving.kserve.io/InferenceService"
	some c in ["predictor", "transformer", "explainer"]
	is_object(w.spec[c])
}

list_template_pods["predictor workerSpec"] := template_pod(isvc_template(w, w.spec.predictor.workerSpec, w.spec.predictor)) if {
	w := input.review.object
	review_kind == "serving.kserve.io/InferenceService"
	is_object(w.spec.predictor.workerSpec)
}

isvc_containers := ["sklearn", "xgboost", "tensorflow", "pytorch", "triton", "onnx", "huggingface", "pmml", "lightgbm", "paddle", "model", "art"]

isvc_template(w, s, component) := {
	"metadata": {
		"labels": object.union(object.get(w, ["metadata", "labels"], {}), object.get(component, "labels", {})),
		"annotations": object.union(object.get(w, ["metadata", "annotations"], {}), object.get(component, "annotations", {})),
	},
	"spec": object.union(object.remove(s, array.concat(isvc_containers, ["labels", "annotations", "workerSpec"])), {"containers": array.concat(
		object.get(s, "containers", []),
		[object.union(s[k], {"name": "kserve-container"}) | some k in isvc_containers; is_object(s[k])],
	)}),
}

# An UPDATE is judged by what it changes, not as if the object were made
# now: what the object had when it was admitted (or before enforcement
# reached its namespace) stays, so that its controllers can finish it
# (the Job controller's and Kueue's finalizers, owner references,
# Flux's re-apply, a Deployment's revision) and a profile retired under
# it does not strand it. The admission entry reports on an UPDATE only
# the violations the object as it was, judged as made now, did not have
# (kept_violation), and judges a workload's pod templates only where
# the update changed them (template_pods).
update_with_old if {
	operation == "UPDATE"
	is_object(input.review.oldObject)
}

# Gatekeeper judges the pods a workload's ExpansionTemplates make under
# the workload's operation but without the old workload (its review of a
# resultant carries an empty uid, no user and no old object; an API
# server's request always has a uid), so on an UPDATE it
# cannot tell a changed template from the one the workload had. Those
# reviews stay silent; the workload's own review judges its templates on
# UPDATE instead (template_pods), against the old ones.
expansion_of_update if {
	operation == "UPDATE"
	object.get(input.review, "uid", "") == ""
}

# The fixed places of the pod templates of the kinds Gatekeeper expands
# (pkg/render's WorkloadKinds with an ExpansionTemplate), by
# "<group>/<Kind>".
fixed_templates := {
	"apps/Deployment": [["spec", "template"]],
	"apps/StatefulSet": [["spec", "template"]],
	"apps/ReplicaSet": [["spec", "template"]],
	"apps/DaemonSet": [["spec", "template"]],
	"batch/Job": [["spec", "template"]],
	"batch/CronJob": [["spec", "jobTemplate", "spec", "template"]],
	"kubeflow.org/PyTorchJob": [
		["spec", "pytorchReplicaSpecs", "Master", "template"],
		["spec", "pytorchReplicaSpecs", "Worker", "template"],
	],
	"ray.io/RayCluster": [["spec", "headGroupSpec", "template"]],
	"leaderworkerset.x-k8s.io/LeaderWorkerSet": [["spec", "leaderWorkerTemplate", "workerTemplate"]],
	"kubeflow.org/MPIJob": [["spec", "mpiReplicaSpecs", "Launcher", "template"]],
}

# group_kind is an object's API group and kind, as "group/Kind" ("/Pod"
# for the core group).
group_kind(o) := sprintf("%v/%v", [group_of(object.get(o, "apiVersion", "")), object.get(o, "kind", "")])

# The reviewed object's, worked out once per review (OPA evaluates a
# function again at every call; a rule's value it keeps).
review_kind := group_kind(input.review.object)

group_of(api) := g if {
	contains(api, "/")
	g := split(api, "/")[0]
} else := ""

# The pods a workload's templates make that its own review judges: those
# in lists (which no ExpansionTemplate reaches) always, and on an UPDATE
# those at fixed places too, whose expansions stay silent then.
template_pods[where] := p if {
	some where, p in list_template_pods
}

template_pods[where] := template_pod(t) if {
	operation == "UPDATE"
	some path in fixed_templates[review_kind]
	t := object.get(input.review.object, path, null)
	is_object(t)
	where := concat(".", path)
}

# A template the UPDATE left as it was is not judged again.
template_kept(where, p) if {
	update_with_old
	old_template_pods[where] == p
}

# (Worked out once per review, not once per template: OPA forgets what it
# worked out under a with when the with ends.)
old_template_pods := old if {
	old := template_pods with input.review.object as input.review.oldObject
}

template_pod(t) := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {
		"name": object.get(input.review.object, ["metadata", "name"], ""),
		"namespace": object.get(input.review.object, ["metadata", "namespace"], ""),
		"labels": object.get(t, ["metadata", "labels"], {}),
		"annotations": object.get(t, ["metadata", "annotations"], {}),
	},
	"spec": object.get(t, "spec", {}),
}

pod := object.union(written, forecast_fill) if forecast
else := written

spec := object.get(pod, "spec", {})

written_spec := object.get(written, "spec", {})

written_labels := object.get(written, ["metadata", "labels"], {})

forecast_fill := {"metadata": {"labels": forecast_labels}, "spec": object.union(object.union(forecast_affinity, forecast_node_selector), forecast_priority)}

forecast_queue := profile_queue if profile_queue
else := q if {
	q := entitlement.spec.queue
	q != ""
}

forecast_labels := {"kueue.x-k8s.io/queue-name": forecast_queue} if {
	through_profile
	not written_labels["kueue.x-k8s.io/queue-name"]
	forecast_queue
} else := {}

forecast_type_values := confining_types(profile_types) if {
	count(profile_types) > 0
} else := confining_types(sort(entitled_types)) if {
	through_profile
	count(profile_types) == 0
	count(entitled_types) > 0
} else := []

# The type label values a pod may be confined to, given its types: for a
# profile that hands out devices by claim, nodes of two models too (type
# label mixed), where the claim is allocated a device of its class.
mixed_type := "mixed"

confining_types(types) := array.concat(types, [mixed_type]) if {
	dra_profile
	count(types) > 0
	not mixed_type in types
} else := types

forecast_expressions := array.concat(
	[{"key": input.parameters.typeLabel, "operator": "In", "values": forecast_type_values} | count(forecast_type_values) > 0],
	[{"key": pool_key, "operator": "In", "values": profile_pools} | count(profile_pools) > 0],
)

forecast_required := {"nodeSelectorTerms": [{"matchExpressions": forecast_expressions}]} if {
	not written_spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution
} else := {"nodeSelectorTerms": [forecast_term(t) | some t in written_spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms]}

# A term the pod brings gets each expression on a key it has none on.
forecast_term(t) := object.union(t, {"matchExpressions": array.concat(
	object.get(t, "matchExpressions", []),
	[e | some e in forecast_expressions; not term_has_key(t, e.key)],
)})

term_has_key(t, k) if {
	some e in object.get(t, "matchExpressions", [])
	e.key == k
}

forecast_affinity := {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": forecast_required}}} if {
	through_profile
	count(forecast_expressions) > 0
	not forecast_one_type
} else := {}

# One type and no pool is a node selector, as the mutators write it, where
# the pod has none on the type label.
forecast_one_type := forecast_type_values[0] if {
	count(forecast_type_values) == 1
	count(profile_pools) == 0
}

forecast_node_selector := {"nodeSelector": {input.parameters.typeLabel: forecast_one_type}} if {
	through_profile
	not object.get(written_spec, ["nodeSelector", input.parameters.typeLabel], false)
} else := {}

forecast_priority := {"priorityClassName": pc, "priority": priority_classes[pc].value} if {
	through_profile
	pc := hwp.metadata.annotations[priority_class_key]
} else := {}

namespace := ns if {
	ns := input.review.namespace
	ns != ""
} else := object.get(written, ["metadata", "namespace"], "")

annotations := object.get(written, ["metadata", "annotations"], {})

# All containers, init and ephemeral ones included: any of them can hold a
# device.
all_containers := array.concat(
	array.concat(object.get(s, "containers", []), object.get(s, "initContainers", [])),
	object.get(s, "ephemeralContainers", []),
) if s := spec

# The containers with something to judge, each list made once per review:
# a rule over containers reads one of these fields, and most containers
# have none of them, so it looks at only those that do.
resourced_containers := [c | some c in all_containers; c.resources]

env_containers := [c | some c in all_containers; c.env]

secured_containers := [c | some c in all_containers; c.securityContext]

# Parameters live in OPA's store: look them up by path, never hand a
# whole parameter map to a builtin (that copies it on every review); the
# prefixes are a short list, matched in one builtin call rather than a
# rule body a prefix. Every base prefix has a "/" (a test keeps it so).
is_accelerator(name) if strings.any_prefix_match(name, base_prefixes)

is_accelerator(name) if strings.any_prefix_match(name, input.parameters.extraResourcePrefixes)

# The resources the pod asks for, in requests or limits.
resource_names contains name if {
	some c in resourced_containers
	some section in ["requests", "limits"]
	some name, _ in object.get(c, ["resources", section], {})
}

# Accelerator resources the pod asks for: is_accelerator, written out (a
# function call is a rule body OPA enters, once a name).
accelerator_resources contains name if {
	some name in resource_names
	strings.any_prefix_match(name, base_prefixes)
}

accelerator_resources contains name if {
	some name in resource_names
	strings.any_prefix_match(name, input.parameters.extraResourcePrefixes)
}

requests_accelerators if count(accelerator_resources) > 0

# Dynamic Resource Allocation: claims the pod holds, or its containers use.
holds_claims if count(object.get(spec, "resourceClaims", [])) > 0

holds_claims if {
	some c in resourced_containers
	count(object.get(c, ["resources", "claims"], [])) > 0
}

holds_accelerators if requests_accelerators

holds_accelerators if holds_claims

# Who made the request (Gatekeeper passes the AdmissionRequest's
# userInfo): controllers are told apart from users by their identity.
username := object.get(input.review, ["userInfo", "username"], "")

# The pod's controller, as its ownerReferences name it, keyed
# "<group>/<Kind>" as the podControllers parameter is.
controller_owner_of(obj) := o if {
	some o in object.get(obj, ["metadata", "ownerReferences"], [])
	object.get(o, "controller", false) == true
}

owner_key(o) := concat("/", [g, o.kind]) if {
	parts := split(object.get(o, "apiVersion", ""), "/")
	g := parts[0]
	count(parts) == 2
} else := concat("/", ["", o.kind])

# Environment variables that make a container runtime hand devices to a
# container, whatever it asked the device plugin for: the NVIDIA Container
# Toolkit's (MIG management ones included), AMD's container toolkit's,
# Habana's and the Neuron OCI hook's. "void", "none" and "" hand out none.
visibility_env := {
	"NVIDIA_VISIBLE_DEVICES",
	"NVIDIA_MIG_CONFIG_DEVICES",
	"NVIDIA_MIG_MONITOR_DEVICES",
	"AMD_VISIBLE_DEVICES",
	"HABANA_VISIBLE_DEVICES",
	"AWS_NEURON_VISIBLE_DEVICES",
}

harmless_visibility := {"", "void", "none"}

# Host paths that hold device nodes, or the sockets and specs that hand
# them out (CDI specs, the kubelet's device plugin sockets, the container
# runtime's socket under /run: containerd's, CRI-O's, Docker's), as
# segment lists; /var/run is /run on the host.
device_paths := [
	["dev"],
	["proc"],
	["sys"],
	["run"],
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
	some c in env_containers
	some e in object.get(c, "env", [])
	e.name in visibility_env
	not e.valueFrom
	not object.get(e, "value", "") in harmless_visibility
}

device_access contains sprintf("container %v takes %v from valueFrom", [c.name, e.name]) if {
	some c in env_containers
	some e in object.get(c, "env", [])
	e.name in visibility_env
	e.valueFrom
}

device_access contains sprintf("container %v is privileged (it sees every device of its node)", [c.name]) if {
	some c in secured_containers
	object.get(c, ["securityContext", "privileged"], false) == true
}

device_access contains sprintf("volume %v mounts host path %v", [v.name, v.hostPath.path]) if {
	some v in object.get(spec, "volumes", [])
	device_host_path(v.hostPath.path)
}

# A host path a container may write. Pod Security baseline refuses every
# host path; where it is not enforced, what a container writes on the
# node outlives it: the container toolkit's configuration (which devices
# each container gets, whether a visibility variable counts), the
# runtimes' binaries and configuration, and links that a later pod's
# host path follows (a path the rule above allows, made a link to /dev or
# to the runtime's socket: the kubelet mounts what the link names). So a
# host path is mounted read-only by every container, or not at all.
device_access contains sprintf("container %v mounts host path %v writable (volume %v): what it writes on the node outlives the pod (the container toolkit's configuration, the runtimes, a link another pod's host path follows to the node's devices); mount it with readOnly: true", [c.name, v.hostPath.path, v.name]) if {
	some v in object.get(spec, "volumes", [])
	v.hostPath
	not device_host_path(v.hostPath.path)
	some c in all_containers
	some m in object.get(c, "volumeMounts", [])
	m.name == v.name
	object.get(m, "readOnly", false) != true
}

# Pod annotations the container runtime reads as device requests: the
# Container Device Interface's (cdi.k8s.io/<name>, and the vendors'
# <vendor>.cdi.k8s.io/<name>, which containerd and CRI-O hand to the
# runtime and the NVIDIA Container Toolkit honours) and CRI-O's device
# annotation. The device plugin never writes them on a pod: it hands CDI
# devices to the kubelet, not through the pod's annotations.
runtime_device_annotation(k) if contains(k, "cdi.k8s.io/")

runtime_device_annotation(k) if startswith(k, "io.kubernetes.cri-o.Devices")

device_access contains sprintf("annotation %v asks the container runtime for devices", [k]) if {
	some k, _ in annotations
	runtime_device_annotation(k)
}

# Pod Security baseline's view of what reaches a node's devices, held in
# every namespace accelc governs (team namespaces enforce baseline too;
# generic and other namespaces may enforce nothing): capabilities beyond
# baseline's set (CAP_SYS_ADMIN mounts and opens devices, CAP_SYS_PTRACE
# with the host's PID namespace enters other containers'), the host's
# PID, IPC and network namespaces (the last reaches the node's local
# GPU management endpoints), and an unmasked /proc.
baseline_capabilities := {
	"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
	"NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
}

capability_name(c) := trim_prefix(upper(c), "CAP_")

device_access contains sprintf("container %v adds capability %v (Pod Security baseline allows %v)", [c.name, cap, concat(", ", sort(baseline_capabilities))]) if {
	some c in secured_containers
	some cap in object.get(c, ["securityContext", "capabilities", "add"], [])
	not capability_name(cap) in baseline_capabilities
}

device_access contains sprintf("container %v unmasks /proc (procMount %v)", [c.name, c.securityContext.procMount]) if {
	some c in secured_containers
	object.get(c, ["securityContext", "procMount"], "Default") != "Default"
}

device_access contains sprintf("the pod shares the node's %v namespace (spec.%v)", [what, field]) if {
	s := spec
	some field, what in {"hostPID": "PID", "hostIPC": "IPC", "hostNetwork": "network"}
	object.get(s, field, false) == true
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

# (A container without resources holds none: it is not looked at.)
pod_amount(name) := max([
	sum([amount(c, name) | some c in object.get(s, "containers", []); c.resources]),
	max(array.concat([0], [amount(c, name) | some c in inits; c.resources; not sidecar(c)])),
]) + sum([amount(c, name) | some c in inits; c.resources; sidecar(c)]) if {
	s := spec
	inits := object.get(s, "initContainers", [])
}

labels := object.get(pod, ["metadata", "labels"], {})

# A pod names its profile with ODH's annotation, or with accelc's
# <prefix>/profile label, which accelc's mutations key on (Gatekeeper
# mutations can select by label, not by annotation) and which they turn
# into the annotation.
profile_label := concat("/", [input.parameters.labelPrefix, "profile"])

profile_name := n if {
	n := annotations[profile_annotation]
} else := n if {
	n := written_labels[profile_label]
} else := n if {
	# Where no mutation ran, a Notebook (whose pod takes the Notebook's
	# labels, not its annotations) is forecast with the label accelc's
	# admission policy gives it from its own annotation.
	forecast
	n := input.review.object.metadata.annotations[profile_annotation]
}

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

# The keys the rules read on every pod, each worked out once per review
# (written out rather than through key: a function call is a rule body
# OPA enters).
type_key := concat("/", [input.parameters.labelPrefix, "type"])

types_key := concat("/", [input.parameters.labelPrefix, "types"])

pools_key := concat("/", [input.parameters.labelPrefix, "pools"])

pool_key := concat("/", [input.parameters.labelPrefix, "pool"])

team_key := concat("/", [input.parameters.labelPrefix, "team"])

priority_class_key := concat("/", [input.parameters.labelPrefix, "priority-class"])

profile_enabled if object.get(hwp, ["metadata", "annotations", "opendatahub.io/disabled"], "false") != "true"

# A retired profile (dashboard-disabled too) names the profile that
# replaces it, "" for none: its new pods are refused, its running ones
# finish (an UPDATE reports only what it adds).
retired_for := hwp.metadata.annotations[concat("/", [input.parameters.labelPrefix, "retired-for"])]

# The profile's accelerator types in preference order; empty for a
# generic profile.
profile_types := split(t, ",") if {
	t := hwp.metadata.annotations[types_key]
	t != ""
} else := []

# The node pools (values of the <prefix>/pool label that accelc's node
# rules put on sharing pools' and MIG configs' nodes) a profile over
# shared GPUs runs in, in preference order; empty for whole GPUs.
profile_pools := split(p, ",") if {
	p := hwp.metadata.annotations[pools_key]
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
# Allocation) names its ResourceClaimTemplate — in Open Data Hub's own
# field, spec.dra.resourceClaimTemplateName, else (trees rendered before
# ODH had it) accelc's annotation; its pods claim devices with it instead
# of asking for an extended resource.
dra_template := t if {
	t := hwp.spec.dra.resourceClaimTemplateName
	t != ""
} else := hwp.metadata.annotations[key("resource-claim-template")]

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

# A pod of a namespace allowed generic GPU use (and of no team) that names
# a generic profile — as ODH's dashboard does when the user picks it — is
# judged as one that names none: the profile confines nothing, and the
# namespace has no team whose queues or types it could join.
generic_use if {
	generic_namespace
	not entitlement
	hwp
	count(profile_types) == 0
	not dra_profile
}

# Placement. Nodes are synced by Gatekeeper (SyncSet).
# Of a Node the policies read only accelc's type and pool labels and the
# accelerator capacity: accelc audit syncs nodes with those alone.
nodes := data.inventory.cluster.v1.Node

# A node is an accelerator node when accelc's node rules typed or pooled
# it, or it offers an accelerator resource.
accelerator_node(name) if nodes[name].metadata.labels[type_key]

accelerator_node(name) if nodes[name].metadata.labels[pool_key]

accelerator_node(name) if {
	some section in ["capacity", "allocatable"]
	some r, q in object.get(nodes[name], ["status", section], {})
	is_accelerator(r)
	not q in {"0", 0}
}

# Node labels that pick out accelerator nodes: accelc's own, the vendors'
# (GPU Feature Discovery, AMD's and Intel's labellers), NFD's PCI
# features and the clouds' accelerator labels: GKE's GPU and TPU ones
# (cloud.google.com/gke-tpu-accelerator, gke-tpu-topology), Karpenter's
# GPU and accelerator (Neuron) instance labels.
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
	"cloud.google.com/gke-tpu",
	"karpenter.k8s.aws/instance-gpu",
	"karpenter.k8s.aws/instance-accelerator",
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
	n := spec.nodeName
	not bound_already(n)
	accelerator_node(n)
}

# An UPDATE that keeps the node the pod already had, and the profile it
# named: a pod the scheduler bound must stay updatable (by its
# controllers too) though its node was relabelled or is not synced. One
# that names another profile is judged again, node and all. Gatekeeper
# judges a workload's expansion under the workload's operation, with no
# old pod, so a nodeName written into a template is judged on every
# UPDATE as on CREATE.
bound_already(node) if {
	operation == "UPDATE"
	old := input.review.oldObject
	old.spec.nodeName == node
	object.get(old, ["metadata", "annotations", profile_annotation], "") == object.get(annotations, profile_annotation, "")
	object.get(old, ["metadata", "labels", profile_label], "") == object.get(written_labels, profile_label, "")
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

# Dynamic Resource Allocation claims: the claims policy judges a
# ResourceClaim or ResourceClaimTemplate when it is made, and the device
# access policy the ResourceClaims a pod names (synced) when the pod is
# made. One review holds one or the other.
reviewed_claim := input.review.object if input.review.object.kind in {"ResourceClaim", "ResourceClaimTemplate"}

# The ResourceClaims of the pod's namespace, synced (SyncSet): a pod that
# names a claim is judged by the claim as it is now, not trusted.
synced_claims := data.inventory.namespace[namespace]["resource.k8s.io/v1"].ResourceClaim

# The claims the review judges, each [what (for messages), its devices].
judged_claims contains [what, claim_devices(object.get(c, ["spec", "devices"], {}))] if {
	c := reviewed_claim
	c.kind == "ResourceClaim"
	what := sprintf("%v %v", [c.kind, c.metadata.name])
}

judged_claims contains [what, claim_devices(object.get(c, ["spec", "spec", "devices"], {}))] if {
	c := reviewed_claim
	c.kind == "ResourceClaimTemplate"
	what := sprintf("%v %v", [c.kind, c.metadata.name])
}

judged_claims contains [what, claim_devices(object.get(rc, ["spec", "devices"], {}))] if {
	dra_profile
	some c in object.get(spec, "resourceClaims", [])
	rc := synced_claims[c.resourceClaimName]
	what := sprintf("pod claim %v: ResourceClaim %v", [c.name, c.resourceClaimName])
}

# A claim's requests: none where it has none, written as null too (the
# API server sends an empty list of a ResourceClaim as null).
device_requests(devs) := r if {
	r := object.get(devs, "requests", [])
	is_array(r)
} else := []

claim_devices(d) := d if is_object(d)
else := {}

# Every request of a judged claim that names a class, with its name:
# v1's and v1beta2's exact request (exactly) or a subrequest of a
# firstAvailable list, and v1beta1's request, which names its class itself
# (deviceClassName beside the count, no exactly). A cluster that turned DRA
# on before it went GA serves v1beta1 and v1beta2 too; each is read as
# written.
claim_requests contains [what, r.name, r.exactly] if {
	some [what, devs] in judged_claims
	some r in device_requests(devs)
	r.exactly
}

claim_requests contains [what, r.name, r] if {
	some [what, devs] in judged_claims
	some r in device_requests(devs)
	not r.exactly
	r.deviceClassName
}

claim_requests contains [what, concat("/", [r.name, sub.name]), sub] if {
	some [what, devs] in judged_claims
	some r in device_requests(devs)
	some sub in object.get(r, "firstAvailable", [])
}

# What the policy reads of a claim; any other field could change which
# devices it reaches, so the claim is denied naming it (fail closed).
known_devices_fields := {"requests", "constraints", "config"}

known_request_fields := {"name", "exactly", "firstAvailable", "deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity"}

# The classes the namespace's team may claim, each with the most devices a
# request may ask for.
claim_limits := object.get(entitlement, ["spec", "deviceClasses"], {})

claimable := {c | some c, _ in claim_limits}

may_claim := sprintf("it may use %v", [concat(", ", sort(claimable))]) if count(claimable) > 0
else := "it may claim none: no hardware profile it may use hands out devices by claim"

# Why a judged claim could reach past what the namespace's team may use,
# each a message starting with what it is about.
claim_problem contains sprintf("%v: field devices.%v is not one accelc's policy reads (%v), so it cannot tell which devices the claim reaches: drop it", [what, f, concat(", ", sort(known_devices_fields))]) if {
	some [what, devs] in judged_claims
	some f, _ in devs
	not f in known_devices_fields
}

claim_problem contains sprintf("%v: request %v has field %v, which accelc's policy does not read, so it cannot tell which devices the request reaches: drop it", [what, object.get(r, "name", "(unnamed)"), f]) if {
	some [what, devs] in judged_claims
	some r in device_requests(devs)
	some f, _ in r
	not f in known_request_fields
}

claim_problem contains sprintf("%v: request %v has field %v, which accelc's policy does not read, so it cannot tell which devices the request reaches: drop it", [what, name, f]) if {
	some [what, name, r] in claim_requests
	some f, _ in r
	not f in known_request_fields
}

claim_problem contains sprintf("%v: request %v names no DeviceClass (no exactly.deviceClassName, firstAvailable or deviceClassName), so accelc's policy cannot tell which devices it reaches: name one of the team's DeviceClasses", [what, object.get(r, "name", "(unnamed)")]) if {
	some [what, devs] in judged_claims
	some r in device_requests(devs)
	not r.exactly
	not r.deviceClassName
	count(object.get(r, "firstAvailable", [])) == 0
}

claim_problem contains sprintf("%v: request %v names no DeviceClass, so accelc's policy cannot tell which devices it reaches: name one of the team's DeviceClasses", [what, name]) if {
	some [what, name, r] in claim_requests
	not r.deviceClassName
}

claim_problem contains sprintf("%v: request %v names DeviceClass %q, which team %v may not use; %v", [what, name, r.deviceClassName, team, may_claim]) if {
	some [what, name, r] in claim_requests
	r.deviceClassName
	not r.deviceClassName in claimable
}

claim_problem contains sprintf("%v: request %v asks for %v devices of DeviceClass %v; team %v's profiles hand out at most %v: ask for fewer", [what, name, n, r.deviceClassName, team, limit]) if {
	some [what, name, r] in claim_requests
	limit := claim_limits[r.deviceClassName]
	n := object.get(r, "count", 1)
	n > limit
}

# A claim with no request reaches no device through DRA, and so says
# nothing of the devices its pod may reach: it is refused, as a request
# that names no class is.
claim_problem contains sprintf("%v: it asks for no device (devices.requests is empty), so accelc's policy cannot tell which devices its pods may reach: ask for one device of one of the team's DeviceClasses (%v)", [what, may_claim]) if {
	some [what, devs] in judged_claims
	count(device_requests(devs)) == 0
}

# One request: several, each within the count, would add up past it.
claim_problem contains sprintf("%v: it makes %v device requests; a claim makes one, within the count a profile hands out: merge them", [what, n]) if {
	some [what, devs] in judged_claims
	n := count(device_requests(devs))
	n > 1
}

claim_problem contains sprintf("%v: request %v asks for every matching device of a node (allocationMode All): ask for a count (allocationMode ExactCount)", [what, name]) if {
	some [what, name, r] in claim_requests
	r.allocationMode == "All"
}

claim_problem contains sprintf("%v: request %v asks for admin access, which reaches devices other pods hold: drop adminAccess", [what, name]) if {
	some [what, name, r] in claim_requests
	r.adminAccess == true
}

claim_problem contains sprintf("%v: request %v tolerates device taints, which keep devices out of use: drop its tolerations", [what, name]) if {
	some [what, name, r] in claim_requests
	count(object.get(r, "tolerations", [])) > 0
}

claim_problem contains sprintf("%v: it configures the driver (devices.config), which can change how devices are shared; the admins' DeviceClass holds configuration: drop it", [what]) if {
	some [what, devs] in judged_claims
	count(object.get(devs, "config", [])) > 0
}

# An UPDATE by Kueue (kueueManagers): its admission writes the flavour's
# node selector into a suspended Job's template, and takes it out again
# when it suspends the Job.
kueue_update if {
	update_with_old
	input.parameters.kueueManagers[username]
}
