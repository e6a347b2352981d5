package accelcentitlement_test

import data.accelcentitlement.violation
import data.lib.accelc
import data.lib.fixtures as f

pod_in(ns, profile, containers) := f.input_for(f.pod(ns, f.profile(profile), {"containers": containers}))

test_entitled_allowed if {
	count(violation) == 0 with input as pod_in("ml", "premium-gpu", [f.gpu_container(2)]) with data.inventory as f.inventory
}

test_namespace_without_team_denied if {
	some v in violation with input as pod_in("stray", "premium-gpu", [f.gpu_container(1)]) with data.inventory as f.inventory
	contains(v.msg, "belongs to no team")
}

test_team_not_entitled_denied if {
	some v in violation with input as pod_in("serving", "premium-gpu", [f.gpu_container(1)]) with data.inventory as f.inventory
	contains(v.msg, "team model-serving may not use nvidia-h200-141gb")
}

test_multi_type_needs_every_type if {
	count(violation) == 1 with input as pod_in("serving", "large-memory", [f.gpu_container(1)]) with data.inventory as f.inventory
}

# Team membership comes from the parameters, never from namespace labels.
test_relabelled_namespace_still_denied if {
	inp := pod_in("serving", "premium-gpu", [f.gpu_container(1)])
	ns := {"metadata": {"name": "serving", "labels": {"team": "ml-research", "accelerator.opendatahub.io/team": "ml-research"}}}
	count(violation) == 1 with input as object.union(inp, {"review": {"namespaceObject": ns}}) with data.inventory as f.inventory
}

test_wrong_resource_denied if {
	some v in violation with input as pod_in("ml", "mig-slice", [f.gpu_container(1)]) with data.inventory as f.inventory
	contains(v.msg, "is requested through nvidia.com/mig-1g.5gb, not nvidia.com/gpu")
}

test_too_many_denied if {
	some v in violation with input as pod_in("ml", "premium-gpu", [f.gpu_container(5), f.gpu_container(4)]) with data.inventory as f.inventory
	contains(v.msg, "at most 8")
}

test_init_containers_count_once if {
	init := {"name": "warmup", "resources": {"limits": {"nvidia.com/gpu": 8}}}
	inp := f.input_for(f.pod("ml", f.profile("premium-gpu"), {"containers": [f.gpu_container(8)], "initContainers": [init]}))
	count(violation) == 0 with input as inp with data.inventory as f.inventory
}

test_zero_denied if {
	count(violation) == 1 with input as pod_in("ml", "premium-gpu", [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 0}}}]) with data.inventory as f.inventory
}

slice_pod(labels, spec) := f.input_for(object.union(
	f.pod("slices", f.profile("mig-slice"), object.union({"containers": [{"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/mig-1g.5gb": 1}}}]}, spec)),
	{"metadata": {"labels": labels}},
))

queued := {"kueue.x-k8s.io/queue-name": "accelc"}

test_listed_profile_queued_admitted if {
	count(violation) == 0 with input as slice_pod(queued, {}) with data.inventory as f.inventory
}

test_unlisted_profile_of_entitled_type_denied if {
	p := f.input_for(object.union(f.pod("slices", f.profile("gpu"), {"containers": [f.gpu_container(1)]}), {"metadata": {"labels": queued}}))
	some v in violation with input as p with data.inventory as f.inventory
	contains(v.msg, "team mig-team may not use hardware profile \"gpu\": it may use mig-slice")
}

test_missing_queue_label_denied if {
	some v in violation with input as slice_pod({}, {}) with data.inventory as f.inventory
	contains(v.msg, "add label kueue.x-k8s.io/queue-name: accelc")
}

test_other_queue_denied if {
	some v in violation with input as slice_pod({"kueue.x-k8s.io/queue-name": "other-team"}, {}) with data.inventory as f.inventory
	contains(v.msg, "add label kueue.x-k8s.io/queue-name: accelc")
}

test_priority_above_tier_denied if {
	some v in violation with input as slice_pod(queued, {"priorityClassName": "production-inference"}) with data.inventory as f.inventory
	contains(v.msg, "priority class production-inference (1000) outranks team mig-team's tier research (100)")
}

test_priority_resolved_by_api_server_checked if {
	some v in violation with input as slice_pod(queued, {"priorityClassName": "system-cluster-critical", "priority": 2000000000}) with data.inventory as f.inventory
	contains(v.msg, "outranks team mig-team's tier")
}

test_priority_at_tier_admitted if {
	count(violation) == 0 with input as slice_pod(queued, {"priorityClassName": "research"}) with data.inventory as f.inventory
}

test_unsynced_priority_class_denied if {
	some v in violation with input as slice_pod(queued, {"priorityClassName": "made-up"}) with data.inventory as f.inventory
	contains(v.msg, "priority class made-up is not synced")
}

test_profile_priority_class_enforced if {
	hwp := object.union(f.inventory.namespace.opendatahub["infrastructure.opendatahub.io/v1"].HardwareProfile["large-memory"], {"metadata": {"annotations": {"accelerator.opendatahub.io/priority-class": "production-inference"}}})
	inv := object.union(f.inventory, {"namespace": {"opendatahub": {"infrastructure.opendatahub.io/v1": {"HardwareProfile": {"large-memory": hwp}}}}})
	p := f.input_for(f.pod("ml", f.profile("large-memory"), {"containers": [f.gpu_container(1)], "priorityClassName": "research"}))
	some v in violation with input as p with data.inventory as inv
	contains(v.msg, "runs at priority class production-inference, but the pod names \"research\"")
	ok := f.input_for(f.pod("ml", f.profile("large-memory"), {"containers": [f.gpu_container(1)], "priorityClassName": "production-inference"}))
	count(violation) == 0 with input as ok with data.inventory as inv
}

test_cpu_profile_with_gpu_request_denied if {
	cpu_hwp := {"metadata": {"name": "cpu-small", "annotations": {}}, "spec": {"identifiers": [{"identifier": "cpu", "resourceType": "CPU", "minCount": 1, "defaultCount": 1}]}}
	inv := object.union(f.inventory, {"namespace": {"opendatahub": {"infrastructure.opendatahub.io/v1": {"HardwareProfile": {"cpu-small": cpu_hwp}}}}})
	p := f.input_for(f.pod("ml", f.profile("cpu-small"), {"containers": [f.gpu_container(1)]}))
	some v in violation with input as p with data.inventory as inv
	contains(v.msg, "hands out no accelerator")
}

test_global_default_above_tier_named if {
	some v in violation with input as slice_pod(queued, {"priority": 2000}) with data.inventory as f.inventory
	contains(v.msg, "priority class (none named: the cluster's global default) (2000) outranks team mig-team's tier research (100)")
}

# A native sidecar (an init container with restartPolicy Always) holds its
# devices beside the app containers: 8 + 1 is over premium-gpu's 8.
test_sidecar_devices_add_up if {
	sidecar := {"name": "helper", "restartPolicy": "Always", "resources": {"limits": {"nvidia.com/gpu": 1}}}
	inp := f.input_for(f.pod("ml", f.profile("premium-gpu"), {"containers": [f.gpu_container(8)], "initContainers": [sidecar]}))
	some v in violation with input as inp with data.inventory as f.inventory
	contains(v.msg, "allows at most 8 nvidia.com/gpu per pod; the pod asks for 9")
}

# A profile that schedules through Kueue (HardwareProfile scheduling type
# Queue) names its own LocalQueue: the pod must join that one, not the
# team's.
queue_inventory := json.patch(f.inventory, [{
	"op": "add",
	"path": "/namespace/opendatahub/infrastructure.opendatahub.io~1v1/HardwareProfile/mig-slice/spec/scheduling",
	"value": {"type": "Queue", "kueue": {"localQueueName": "mig-slice"}},
}])

test_queue_profile_in_its_queue_admitted if {
	count(violation) == 0 with input as slice_pod({"kueue.x-k8s.io/queue-name": "mig-slice"}, {}) with data.inventory as queue_inventory
}

test_queue_profile_in_team_queue_denied if {
	some v in violation with input as slice_pod(queued, {}) with data.inventory as queue_inventory
	contains(v.msg, "hardware profile \"mig-slice\" schedules through Kueue: add label kueue.x-k8s.io/queue-name: mig-slice")
}

test_dra_profile_with_extended_resource_denied if {
	p := f.pod("dra", f.profile("dra-large"), {"containers": [f.gpu_container(1)]})
	some v in violation with input as f.input_for(p) with data.inventory as f.inventory
	contains(v.msg, `hardware profile "dra-large" hands out devices by resource claim (ResourceClaimTemplate dra-large), not nvidia.com/gpu`)
}

test_dra_profile_pod_allowed if {
	p := f.pod("dra", f.profile("dra-large"), {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "dra-large"}], "containers": [{"name": "main", "image": "trainer", "resources": {"claims": [{"name": "gpu"}]}}]})
	count(violation) == 0 with input as f.input_for(p) with data.inventory as f.inventory
}

# Kueue's WorkloadPriorityClass label is held to the tier like the pod's
# own class.
test_kueue_priority_label_above_tier_denied if {
	p := slice_pod(object.union(queued, {"kueue.x-k8s.io/priority-class": "production-inference"}), {})
	some v in violation with input as p with data.inventory as f.inventory
	contains(v.msg, "label kueue.x-k8s.io/priority-class=production-inference (1000) outranks team mig-team's tier research (100) in Kueue")
}

test_kueue_priority_label_unknown_denied if {
	p := slice_pod(object.union(queued, {"kueue.x-k8s.io/priority-class": "vip"}), {})
	some v in violation with input as p with data.inventory as f.inventory
	contains(v.msg, "names a priority class accelc does not know")
}

test_kueue_priority_label_at_tier_admitted if {
	p := slice_pod(object.union(queued, {"kueue.x-k8s.io/priority-class": "research"}), {})
	count(violation) == 0 with input as p with data.inventory as f.inventory
}

# A generic GPU namespace of no team (scratch) may name the generic profile, as ODH's
# dashboard does: it confines nothing more than no profile.
test_generic_profile_in_generic_namespace_admitted if {
	p := f.input_for(f.pod("scratch", f.profile("gpu"), {"containers": [f.gpu_container(1)]}))
	count(violation) == 0 with input as p with data.inventory as f.inventory
}

test_typed_profile_in_generic_namespace_denied if {
	p := f.input_for(f.pod("scratch", f.profile("premium-gpu"), {"containers": [f.gpu_container(1)]}))
	some v in violation with input as p with data.inventory as f.inventory
	contains(v.msg, "namespace scratch belongs to no team")
}

# A Job's own labels are what Kueue reads.
slice_job(labels) := f.input_for({
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": {"name": "j", "namespace": "slices", "labels": labels},
	"spec": {"template": {
		"metadata": {"annotations": f.profile("mig-slice")},
		"spec": {"containers": [{"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/mig-1g.5gb": 1}}}]},
	}},
})

test_job_priority_label_above_tier_denied if {
	some v in violation with input as slice_job({"kueue.x-k8s.io/priority-class": "production-inference"}) with data.inventory as f.inventory
	contains(v.msg, "Job j: label kueue.x-k8s.io/priority-class=production-inference (1000) outranks team mig-team's tier research (100) in Kueue")
}

test_job_at_tier_admitted if {
	count(violation) == 0 with input as slice_job({"kueue.x-k8s.io/priority-class": "research", "kueue.x-k8s.io/queue-name": "anything"}) with data.inventory as f.inventory
}

queue_profile := object.union(f.inventory, {"namespace": {"opendatahub": {"infrastructure.opendatahub.io/v1": {"HardwareProfile": {"mig-slice": {"spec": {"scheduling": {"type": "Queue", "kueue": {"localQueueName": "mig-slice"}}}}}}}}})

test_job_queue_of_another_profile_denied if {
	some v in violation with input as slice_job({"kueue.x-k8s.io/queue-name": "premium"}) with data.inventory as queue_profile
	contains(v.msg, `Job j: Kueue queues it by its label kueue.x-k8s.io/queue-name=premium, but hardware profile "mig-slice" schedules through LocalQueue mig-slice`)
}

test_job_queue_of_its_profile_admitted if {
	count(violation) == 0 with input as slice_job({"kueue.x-k8s.io/queue-name": "mig-slice"}) with data.inventory as queue_profile
}

# A Job whose template names a queued profile, as the accelc-job-queue
# MutatingAdmissionPolicy leaves it: the profile's LocalQueue and the
# team's tier on the Job itself (Kueue admits it whole).
test_job_labelled_as_a_gang_admitted if {
	count(violation) == 0 with input as slice_job({"kueue.x-k8s.io/queue-name": "mig-slice", "kueue.x-k8s.io/priority-class": "research"}) with data.inventory as queue_profile
}

# A Job of a queued profile that names no queue: Kueue's job integration
# would not manage it, and its pod webhook leaves its pods to it.
unqueued_denials contains v.msg if {
	some v in violation
	contains(v.msg, "Kueue manages it only while it names LocalQueue")
}

test_job_of_a_queued_profile_without_its_queue_denied if {
	some v in violation with input as slice_job({}) with data.inventory as queue_profile
	contains(v.msg, `Job j: Kueue manages it only while it names LocalQueue mig-slice (label kueue.x-k8s.io/queue-name), the queue of hardware profile "mig-slice"`)
	contains(v.msg, "label the Job kueue.x-k8s.io/queue-name=mig-slice")
}

test_job_without_a_queue_where_kueue_queues_nothing_admitted if {
	count(unqueued_denials) == 0 with input as slice_job({}) with data.inventory as f.inventory
}

# On UPDATE only taking the label away is judged: Kueue would let go of
# the suspended Job. A Job made before enforcement without one is left.
job_update(old_labels, new_labels) := object.union(slice_job(new_labels), {"review": {
	"operation": "UPDATE",
	"oldObject": slice_job(old_labels).review.object,
}})

test_job_queue_label_removed_denied if {
	count(unqueued_denials) == 1 with input as job_update({"kueue.x-k8s.io/queue-name": "mig-slice"}, {}) with data.inventory as queue_profile
}

test_job_made_before_enforcement_without_a_queue_updated_admitted if {
	count(unqueued_denials) == 0 with input as job_update({}, {}) with data.inventory as queue_profile
}

job_owner := {"apiVersion": "batch/v1", "kind": "Job", "name": "cpu-job", "uid": "u-1", "controller": true}

owned_pod(_) := f.pod("ml", f.profile("premium-gpu"), {
	"containers": [f.gpu_container(1)],
	"nodeSelector": {"accelerator.opendatahub.io/type": "nvidia-h200-141gb"},
})

as_user(pod_obj, owners, user) := {"review": {
	"object": object.union(pod_obj, {"metadata": {"ownerReferences": owners}}),
	"namespace": "ml", "operation": "CREATE", "userInfo": {"username": user},
}, "parameters": f.params}

kueue_msg := "Kueue does not queue the pods of a Job it manages"

# A pod naming a Job as its controller is Kueue's to skip: only the Job
# controller may make one.
test_pod_owned_by_a_job_from_a_user_denied if {
	some v in violation with input as as_user(owned_pod([]), [job_owner], "alice") with data.inventory as f.inventory
	contains(v.msg, "the pod names Job cpu-job as its controller (ownerReferences), but alice made it")
	contains(v.msg, kueue_msg)
}

owner_denials contains v.msg if {
	some v in violation
	contains(v.msg, "as its controller")
}

gate_denials contains v.msg if {
	some v in violation
	contains(v.msg, "scheduling gate")
}

test_pod_owned_by_a_job_from_its_controller_admitted if {
	count(owner_denials) == 0 with input as as_user(owned_pod([]), [job_owner], "system:serviceaccount:kube-system:job-controller") with data.inventory as f.inventory
}

test_non_controller_owner_and_other_kinds_admitted if {
	rs := {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u-2", "controller": true}
	not_controller := object.union(job_owner, {"controller": false})
	count(owner_denials) == 0 with input as as_user(owned_pod([]), [rs], "alice") with data.inventory as f.inventory
	count(owner_denials) == 0 with input as as_user(owned_pod([]), [not_controller], "alice") with data.inventory as f.inventory
}

test_cpu_pod_owned_by_a_job_admitted if {
	p := object.union(f.pod("ml", {}, {"containers": [{"name": "c", "image": "app"}]}), {"metadata": {"ownerReferences": [job_owner]}})
	count(violation) == 0 with input as {"review": {"object": p, "namespace": "ml", "operation": "CREATE", "userInfo": {"username": "alice"}}, "parameters": f.params} with data.inventory as f.inventory
}

update_by(old, new, user) := {"review": {
	"object": new, "oldObject": old, "namespace": "ml", "operation": "UPDATE", "userInfo": {"username": user},
}, "parameters": f.params}

# On UPDATE a controller the pod already had is not judged again; one
# the update adds is.
test_update_keeping_the_controller_admitted if {
	p := object.union(owned_pod([]), {"metadata": {"ownerReferences": [job_owner]}})
	count(owner_denials) == 0 with input as update_by(p, object.union(p, {"metadata": {"labels": {"x": "y"}}}), "alice") with data.inventory as f.inventory
}

test_update_adding_a_job_controller_denied if {
	p := owned_pod([])
	some v in violation with input as update_by(p, object.union(p, {"metadata": {"ownerReferences": [job_owner]}}), "alice") with data.inventory as f.inventory
	contains(v.msg, kueue_msg)
}

gated(p) := object.union(p, {"spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]}})

# Only Kueue lifts its admission gate.
test_gate_removed_by_a_user_denied if {
	p := owned_pod([])
	some v in violation with input as update_by(gated(p), p, "alice") with data.inventory as f.inventory
	contains(v.msg, "alice removed scheduling gate kueue.x-k8s.io/admission, which only Kueue lifts")
}

test_gate_removed_by_kueue_admitted if {
	p := owned_pod([])
	count(gate_denials) == 0 with input as update_by(gated(p), p, "system:serviceaccount:kueue-system:kueue-controller-manager") with data.inventory as f.inventory
}

# Gatekeeper's audit knows no user: a Job's running pods are not listed.
test_audit_does_not_judge_the_controller if {
	p := object.union(owned_pod([]), {"metadata": {"ownerReferences": [job_owner]}})
	count(owner_denials) == 0 with input as {"review": {"object": p}, "parameters": f.params} with data.inventory as f.inventory
}

# A kind that makes no pod itself (a JobSet's pods are its Jobs') is
# nobody's to name as a pod's controller.
test_pod_owned_by_a_jobset_denied if {
	js := {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "name": "js", "uid": "u-3", "controller": true}
	params := object.union(f.params, {"podControllers": {"jobset.x-k8s.io/JobSet": []}})
	inp := object.union(as_user(owned_pod([]), [js], "system:serviceaccount:kube-system:job-controller"), {"parameters": params})
	some v in violation with input as inp with data.inventory as f.inventory
	contains(v.msg, "not the JobSet controller (none: it makes no pod itself)")
}

# The kinds whose pod templates the admission entry judges as the pods
# they make (accelc.list_template_pods: templates in lists, wrapped
# objects, composed pods): the entry's judgement, where by where.
template_msgs(w) := {[where, v.msg] |
	inp := f.input_for(w)
	pods := accelc.list_template_pods with input as inp
	some where, pod in pods
	some v in violation with input as object.union(inp, {"review": {"object": pod, "fromTemplate": true}}) with data.inventory as f.inventory
}

gpu_template(profile) := {"metadata": {"annotations": f.profile(profile)}, "spec": {"containers": [f.gpu_container(1)]}}

cpu_template := {"spec": {"containers": [{"name": "main", "image": "x"}]}}

rayjob(ns, labels, head, worker) := {
	"apiVersion": "ray.io/v1",
	"kind": "RayJob",
	"metadata": {"name": "rj", "namespace": ns, "labels": labels},
	"spec": {"entrypoint": "python train.py", "rayClusterSpec": {
		"headGroupSpec": {"rayStartParams": {}, "template": head},
		"workerGroupSpecs": [{"groupName": "gpu", "replicas": 1, "rayStartParams": {}, "template": worker}],
	}},
}

test_rayjob_worker_of_unentitled_profile_denied if {
	some [where, msg] in template_msgs(rayjob("serving", {}, cpu_template, gpu_template("premium-gpu")))
	where == "workerGroupSpecs[0] gpu"
	contains(msg, "team model-serving may not use")
}

test_rayjob_worker_of_entitled_profile_admitted if {
	count(template_msgs(rayjob("ml", {}, cpu_template, gpu_template("premium-gpu")))) == 0
}

# Kueue ranks a RayJob by its own label.
test_rayjob_priority_label_above_tier_denied if {
	w := rayjob("slices", {"kueue.x-k8s.io/priority-class": "production-inference"}, cpu_template, {
		"metadata": {"annotations": f.profile("mig-slice")},
		"spec": {"containers": [{"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/mig-1g.5gb": 1}}}]},
	})
	some v in violation with input as f.input_for(w) with data.inventory as f.inventory
	contains(v.msg, "RayJob rj: label kueue.x-k8s.io/priority-class=production-inference (1000) outranks team mig-team's tier research (100) in Kueue")
}

test_rayjob_head_profile_holds_its_label if {
	w := rayjob("slices", {"kueue.x-k8s.io/priority-class": "research"}, {
		"metadata": {"annotations": f.profile("mig-slice")},
		"spec": {"containers": [{"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/mig-1g.5gb": 1}}}]},
	}, cpu_template)
	count(violation) == 0 with input as f.input_for(w) with data.inventory as f.inventory
}

lws(ns, labels, leader, worker) := {
	"apiVersion": "leaderworkerset.x-k8s.io/v1",
	"kind": "LeaderWorkerSet",
	"metadata": {"name": "lws", "namespace": ns, "labels": labels},
	"spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "leaderTemplate": leader, "workerTemplate": worker}},
}

test_lws_queue_label_of_another_profile_denied if {
	w := lws("slices", {"kueue.x-k8s.io/queue-name": "premium"}, cpu_template, {
		"metadata": {"annotations": f.profile("mig-slice")},
		"spec": {"containers": [{"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/mig-1g.5gb": 1}}}]},
	})
	some v in violation with input as f.input_for(w) with data.inventory as queue_profile
	contains(v.msg, `LeaderWorkerSet lws: Kueue queues it by its label kueue.x-k8s.io/queue-name=premium, but hardware profile "mig-slice" schedules through LocalQueue mig-slice`)
}

mpijob(labels, worker) := {
	"apiVersion": "kubeflow.org/v2beta1",
	"kind": "MPIJob",
	"metadata": {"name": "mpi", "namespace": "slices", "labels": labels},
	"spec": {"mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": cpu_template}, "Worker": {"replicas": 2, "template": worker}}},
}

test_mpijob_priority_label_above_tier_denied if {
	w := mpijob({"kueue.x-k8s.io/priority-class": "production-inference"}, {
		"metadata": {"annotations": f.profile("mig-slice")},
		"spec": {"containers": [{"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/mig-1g.5gb": 1}}}]},
	})
	some v in violation with input as f.input_for(w) with data.inventory as f.inventory
	contains(v.msg, "MPIJob mpi: label kueue.x-k8s.io/priority-class=production-inference (1000) outranks")
}

appwrapper(ns, labels, components) := {
	"apiVersion": "workload.codeflare.dev/v1beta2",
	"kind": "AppWrapper",
	"metadata": {"name": "aw", "namespace": ns, "labels": labels},
	"spec": {"components": components},
}

wrapped_job(t) := {"template": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"template": t}}}

# A wrapped Job's template is where a Job holds it.
test_appwrapper_job_of_unentitled_profile_denied if {
	some [where, msg] in template_msgs(appwrapper("serving", {}, [wrapped_job(gpu_template("premium-gpu"))]))
	where == "components[0] Job template.spec.template"
	contains(msg, "team model-serving may not use")
}

test_appwrapper_job_of_entitled_profile_admitted if {
	count(template_msgs(appwrapper("ml", {}, [wrapped_job(gpu_template("premium-gpu"))]))) == 0
}

# A wrapped kind accelc does not know is read where its podSets say,
# through lists too.
test_appwrapper_declared_pod_set_denied if {
	c := {
		"podSets": [{"replicas": 2, "path": "template.spec.groups[1].podTemplate"}],
		"template": {"apiVersion": "example.com/v1", "kind": "Trainer", "metadata": {"name": "t"}, "spec": {"groups": [
			{"podTemplate": cpu_template},
			{"podTemplate": gpu_template("premium-gpu")},
		]}},
	}
	some [where, msg] in template_msgs(appwrapper("serving", {}, [c]))
	where == "components[0] Trainer template.spec.groups[1].podTemplate"
	contains(msg, "team model-serving may not use")
}

test_appwrapper_wrapped_rayjob_workers_judged if {
	some [where, _] in template_msgs(appwrapper("serving", {}, [{"template": rayjob("serving", {}, cpu_template, gpu_template("premium-gpu"))}]))
	where == "components[0] RayJob template.spec.rayClusterSpec.workerGroupSpecs[0].template"
}

test_appwrapper_priority_label_above_tier_denied if {
	w := appwrapper("slices", {"kueue.x-k8s.io/priority-class": "production-inference"}, [wrapped_job({
		"metadata": {"annotations": f.profile("mig-slice")},
		"spec": {"containers": [{"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/mig-1g.5gb": 1}}}]},
	})])
	some v in violation with input as f.input_for(w) with data.inventory as f.inventory
	contains(v.msg, "AppWrapper aw: label kueue.x-k8s.io/priority-class=production-inference (1000) outranks")
}

trainjob(ns, annotations, spec) := {
	"apiVersion": "trainer.kubeflow.org/v1alpha1",
	"kind": "TrainJob",
	"metadata": {"name": "tj", "namespace": ns, "annotations": annotations},
	"spec": object.union({"runtimeRef": {"name": "torch-distributed"}}, spec),
}

# A TrainJob's trainer asks for GPUs per node under the profile it names.
test_trainjob_of_unentitled_profile_denied if {
	w := trainjob("serving", f.profile("premium-gpu"), {"trainer": {"numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 1}}}})
	some [where, msg] in template_msgs(w)
	where == "trainer node"
	contains(msg, "team model-serving may not use")
}

test_trainjob_of_entitled_profile_admitted if {
	w := trainjob("ml", f.profile("premium-gpu"), {"trainer": {"numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 1}}}})
	count(template_msgs(w)) == 0
}

# The profile may be named in an override's metadata (Trainer v2.1), and
# an override of another job is judged as that job's pods.
test_trainjob_override_profile_denied if {
	w := trainjob("serving", {}, {"podTemplateOverrides": [{"targetJobs": [{"name": "node"}], "metadata": {"annotations": f.profile("premium-gpu")}}]})
	some [where, msg] in template_msgs(w)
	where == "trainer node"
	contains(msg, "team model-serving may not use")
}

isvc(ns, labels, predictor) := {
	"apiVersion": "serving.kserve.io/v1beta1",
	"kind": "InferenceService",
	"metadata": {"name": "isvc", "namespace": ns, "labels": labels},
	"spec": {"predictor": predictor},
}

# A predictor's model container is the kserve-container of its pods.
test_inferenceservice_model_of_unentitled_profile_denied if {
	w := isvc("serving", {}, {"annotations": f.profile("premium-gpu"), "model": {"modelFormat": {"name": "vllm"}, "resources": {"limits": {"nvidia.com/gpu": 1}}}})
	some [where, msg] in template_msgs(w)
	where == "predictor"
	contains(msg, "team model-serving may not use")
}

test_inferenceservice_of_entitled_profile_admitted if {
	w := isvc("ml", {}, {"annotations": f.profile("premium-gpu"), "model": {"modelFormat": {"name": "vllm"}, "resources": {"limits": {"nvidia.com/gpu": 1}}}})
	count(template_msgs(w)) == 0
}

# A RayJob's head may be absent (a RayJob that selects a running cluster):
# the constraint judges it where it is there.
test_rayjob_head_of_unentitled_profile_denied if {
	some [where, msg] in template_msgs(rayjob("serving", {}, gpu_template("premium-gpu"), cpu_template))
	where == "spec.rayClusterSpec.headGroupSpec.template"
	contains(msg, "team model-serving may not use")
}

test_rayjob_on_a_running_cluster_has_no_pods if {
	w := {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "rj", "namespace": "serving"}, "spec": {"entrypoint": "python x.py", "clusterSelector": {"ray.io/cluster": "shared"}}}
	count(accelc.list_template_pods) == 0 with input as f.input_for(w)
}

test_lws_leader_of_unentitled_profile_denied if {
	some [where, msg] in template_msgs(lws("serving", {}, gpu_template("premium-gpu"), cpu_template))
	where == "spec.leaderWorkerTemplate.leaderTemplate"
	contains(msg, "team model-serving may not use")
}

# Kueue's webhook gates the pods it queues before Gatekeeper validates
# them: one that arrives ungated was skipped by it.
queued_pod(gates) := object.union(owned_pod([]), {
	"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "premium"}},
	"spec": {"schedulingGates": gates},
})

ungated_denials contains v.msg if {
	some v in violation
	contains(v.msg, "reached admission without Kueue's scheduling gate")
}

request(pod_obj, user) := object.union(as_user(pod_obj, [], user), {"review": {"uid": "r-1"}})

# premium-gpu schedules through Kueue's LocalQueue premium.
premium_queued := object.union(f.inventory, {"namespace": {"opendatahub": {"infrastructure.opendatahub.io/v1": {"HardwareProfile": {"premium-gpu": {"spec": {"scheduling": {"type": "Queue", "kueue": {"localQueueName": "premium"}}}}}}}}})

test_queued_pod_skipped_by_kueue_denied if {
	some v in violation with input as request(queued_pod([]), "alice") with data.inventory as premium_queued
	contains(v.msg, "the pod joins Kueue's LocalQueue premium (label kueue.x-k8s.io/queue-name) but reached admission without Kueue's scheduling gate kueue.x-k8s.io/admission")
	contains(v.msg, "managedJobsNamespaceSelector selects namespace ml")
}

test_queued_pod_gated_by_kueue_admitted if {
	count(ungated_denials) == 0 with input as request(queued_pod([{"name": "kueue.x-k8s.io/admission"}]), "alice") with data.inventory as premium_queued
}

# An expansion's pod (no uid: no webhook has mutated it yet), the
# audit's, and the pods of a Kueue-managed controller are not held to it.
test_ungated_pods_not_judged_where_kueue_gates_none if {
	count(ungated_denials) == 0 with input as as_user(queued_pod([]), [], "alice") with data.inventory as premium_queued
	count(ungated_denials) == 0 with input as {"review": {"object": queued_pod([])}, "parameters": f.params} with data.inventory as premium_queued
	by_job := object.union(as_user(queued_pod([]), [job_owner], "system:serviceaccount:kube-system:job-controller"), {"review": {"uid": "r-2"}})
	count(ungated_denials) == 0 with input as by_job with data.inventory as premium_queued
}

test_cpu_pod_with_a_queue_label_not_held_to_the_gate if {
	p := object.union(f.pod("ml", {}, {"containers": [{"name": "c", "image": "app"}]}), {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "premium"}}})
	count(ungated_denials) == 0 with input as request(p, "alice") with data.inventory as premium_queued
}

# Where Kueue shares out nothing of the pod's (its profile and team are
# not queued), a queue label is the pod's own affair.
test_queue_label_where_kueue_shares_nothing_not_held_to_the_gate if {
	count(ungated_denials) == 0 with input as request(queued_pod([]), "alice") with data.inventory as f.inventory
}

# Kueue's job webhook suspends the Jobs it queues before Gatekeeper
# validates them: one that arrives running was skipped by it.
job_request(suspend) := {"review": {
	"uid": "r-3", "operation": "CREATE", "namespace": "slices", "userInfo": {"username": "alice"},
	"object": object.union(slice_job({"kueue.x-k8s.io/queue-name": "mig-slice"}).review.object, {"spec": {"suspend": suspend}}),
}, "parameters": f.params}

unsuspended_denials contains v.msg if {
	some v in violation
	contains(v.msg, "reached admission not suspended")
}

test_job_skipped_by_kueue_denied if {
	some v in violation with input as job_request(false) with data.inventory as queue_profile
	contains(v.msg, `Job j: it joins Kueue's LocalQueue mig-slice (profile "mig-slice") but reached admission not suspended`)
}

test_job_suspended_by_kueue_admitted if {
	count(unsuspended_denials) == 0 with input as job_request(true) with data.inventory as queue_profile
}

# An unqueued profile's Job, and the audit's view of a Job Kueue admitted
# (and unsuspended), are not held to it.
test_job_not_held_to_suspension_where_kueue_queues_nothing if {
	count(unsuspended_denials) == 0 with input as job_request(false) with data.inventory as f.inventory
	count(unsuspended_denials) == 0 with input as {"review": {"object": job_request(false).review.object}, "parameters": f.params} with data.inventory as queue_profile
}

# A PyTorchJob's pod, made by the training operator, is queued by Kueue's
# pod webhook when the PyTorchJob integration is off (kueueJobKinds names
# only batch/Job): one that arrives ungated was skipped too.
test_pod_of_an_owner_kueue_does_not_manage_held_to_the_gate if {
	ptj := {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "name": "ptj", "uid": "u-4", "controller": true}
	op := "system:serviceaccount:opendatahub:kubeflow-training-operator"
	params := object.union(f.params, {"podControllers": {"kubeflow.org/PyTorchJob": [op]}})
	inp := object.union(as_user(queued_pod([]), [ptj], op), {"review": {"uid": "r-5"}, "parameters": params})
	some v in violation with input as inp with data.inventory as premium_queued
	contains(v.msg, "reached admission without Kueue's scheduling gate")
	count(owner_denials) == 0 with input as inp with data.inventory as premium_queued
}

# A workload whose pods Kueue gates may not pin them to a node: the API
# server refuses every such pod, so none would ever run.
pinned(kind, api) := f.input_for({
	"apiVersion": api,
	"kind": kind,
	"metadata": {"name": "w", "namespace": "slices"},
	"spec": {"template": {
		"metadata": {"annotations": f.profile("mig-slice")},
		"spec": {"nodeName": "node-1", "containers": [{"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/mig-1g.5gb": 1}}}]},
	}},
})

pin_denials contains v.msg if {
	some v in violation
	contains(v.msg, "the API server refuses a gated pod that names a node")
}

test_deployment_pinned_to_a_node_of_a_queued_profile_denied if {
	some v in violation with input as pinned("Deployment", "apps/v1") with data.inventory as queue_profile
	contains(v.msg, `Deployment w: the pod template at spec.template names node node-1, but hardware profile "mig-slice" schedules through Kueue`)
}

# A Job's pods are its Workload's (they are not gated), and a profile that
# does not schedule through Kueue gates nothing.
test_pinned_pods_not_gated_admitted if {
	count(pin_denials) == 0 with input as pinned("Job", "batch/v1") with data.inventory as queue_profile
	count(pin_denials) == 0 with input as pinned("Deployment", "apps/v1") with data.inventory as f.inventory
}

# A template of no queued profile that joins a queue itself, in a
# namespace Kueue manages, is gated all the same: pinned to a node, no pod
# would be made. Outside a namespace Kueue manages nothing gates it.
pinned_in_queue(ns) := f.input_for({
	"apiVersion": "apps/v1",
	"kind": "DaemonSet",
	"metadata": {"name": "w", "namespace": ns},
	"spec": {"template": {
		"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "other"}},
		"spec": {"nodeName": "cpu-01", "containers": [{"name": "main", "image": "x"}]},
	}},
})

test_template_in_a_queue_pinned_to_a_node_denied if {
	some v in violation with input as pinned_in_queue("slices") with data.inventory as queue_profile
	contains(v.msg, "DaemonSet w: the pod template at spec.template names node cpu-01 and joins Kueue's LocalQueue other (label kueue.x-k8s.io/queue-name); Kueue's pod webhook gates every pod that joins a queue in namespace slices")
}

test_template_in_a_queue_pinned_outside_kueue_admitted if {
	count(pin_denials) == 0 with input as pinned_in_queue("ml") with data.inventory as queue_profile
}

# Whether Kueue gates the pods is its Configuration's
# managedJobsNamespaceSelector (kueueNamespaces), not whether the team's
# entitlement names one queue: a team with a queue per profile (no
# spec.queue) is managed all the same (the escape check found such a
# DaemonSet at 100,000 pods, hetero-prod-retired seed 1).
test_template_in_a_queue_pinned_in_a_kueue_namespace_without_team_queue_denied if {
	not data.inventory.cluster["accelc.io/v1alpha1"].NamespaceEntitlement.ml.spec.queue with data.inventory as queue_profile
	some v in violation with input as pinned_in_queue("ml") with input.parameters.kueueNamespaces as {"ml": true} with data.inventory as queue_profile
	contains(v.msg, "DaemonSet w: the pod template at spec.template names node cpu-01 and joins Kueue's LocalQueue other (label kueue.x-k8s.io/queue-name); Kueue's pod webhook gates every pod that joins a queue in namespace ml")
}

# Where the mutators do not run (the forecast: dryrun, warn), a pod the
# forecast would put in its profile's queue carries no queue label, so
# Kueue did not skip it: the gate is not asked of it.
test_forecast_queue_not_held_to_the_gate if {
	p := object.union(owned_pod([]), {"metadata": {"labels": {"accelerator.opendatahub.io/profile": "premium-gpu"}}})
	inp := object.union(request(p, "alice"), {"parameters": {"forecast": true}})
	count(ungated_denials) == 0 with input as inp with data.inventory as premium_queued
}

# A generic namespace of no team has no LocalQueue, and Kueue does not
# manage it: a pod there that names one is refused, as a Notebook's pod
# is, and the audit lists it (no uid needed).
no_team_queue_denials contains v.msg if {
	some v in violation
	contains(v.msg, "is no team's: it has no LocalQueue")
}

scratch_pod(labels) := object.union(f.pod("scratch", f.profile("premium-gpu"), {"containers": [f.gpu_container(1)]}), {"metadata": {"labels": labels}})

test_generic_namespace_pod_in_a_queue_denied if {
	some v in violation with input as {"review": {"object": scratch_pod({"kueue.x-k8s.io/queue-name": "premium"})}, "parameters": f.params} with data.inventory as premium_queued
	contains(v.msg, "the pod joins Kueue's LocalQueue premium (label kueue.x-k8s.io/queue-name), but namespace scratch is no team's")
}

test_generic_namespace_pod_outside_kueue_not_held_to_a_queue if {
	count(no_team_queue_denials) == 0 with input as {"review": {"object": scratch_pod({})}, "parameters": f.params} with data.inventory as premium_queued
}

# Before 1.36 a CronJob's Jobs carry only its jobTemplate's labels: a
# CronJob of a queued profile must name the queue there.
slice_cronjob(labels, params) := {"review": {"object": {
	"apiVersion": "batch/v1",
	"kind": "CronJob",
	"metadata": {"name": "cj", "namespace": "slices"},
	"spec": {"jobTemplate": {"metadata": {"labels": labels}, "spec": {"template": {
		"metadata": {"annotations": f.profile("mig-slice")},
		"spec": {"containers": [{"name": "main", "image": "x", "resources": {"limits": {"nvidia.com/mig-1g.5gb": 1}}}]},
	}}}},
}, "namespace": "slices", "operation": "CREATE"}, "parameters": params}

older_minor_params := object.union(f.params, {"labelledFromQueue": {"batch/Job": true}})

test_older_minor_cronjob_without_its_queue_denied if {
	some v in violation with input as slice_cronjob({}, older_minor_params) with data.inventory as queue_profile
	contains(v.msg, "CronJob cj: before Kubernetes 1.36 its Jobs carry only its jobTemplate's labels")
	contains(v.msg, "set spec.jobTemplate.metadata.labels kueue.x-k8s.io/queue-name=mig-slice")
}

test_older_minor_cronjob_with_its_queue_admitted if {
	count(unqueued_cronjob_denials) == 0 with input as slice_cronjob({"kueue.x-k8s.io/queue-name": "mig-slice"}, older_minor_params) with data.inventory as queue_profile
}

# On 1.36 the job queue policy labels each Job the CronJob makes.
test_cronjob_without_a_queue_admitted_where_the_policy_labels_its_jobs if {
	count(unqueued_cronjob_denials) == 0 with input as slice_cronjob({}, f.params) with data.inventory as queue_profile
}

unqueued_cronjob_denials contains v.msg if {
	some v in violation
	contains(v.msg, "its Jobs carry only its jobTemplate's labels")
}
