# The pod's namespace belongs to a team (from the CUE, not from namespace
# labels a namespace owner could change), and that team may use the pod's
# hardware profile (when the team lists its profiles) and every type of
# it. The pod asks for the profile's resource and for a device count
# within the profile's limits, joins its team's Kueue queue where the
# team's quota is Kueue's, and runs at its profile's priority class, or
# at most at its team's tier.
package accelcentitlement

import data.lib.accelc

checked if {
	accelc.requests_accelerators
	accelc.hwp
}

checked if accelc.through_profile

# The rules of a checked pod, behind one look at checked (OPA pays for
# every rule it looks up).
violation contains v if {
	checked
	some v in checked_violation
}

checked_violation contains {"msg": msg} if {
	not accelc.accelerator_profile
	accelc.requests_accelerators
	accelc.hwp
	msg := sprintf("hardware profile %q hands out no accelerator, yet the pod asks for %v: pick a profile with an accelerator", [
		accelc.profile_name, concat(", ", sort(accelc.accelerator_resources)),
	])
}

checked_violation contains {"msg": msg} if {
	count(accelc.entitled_profiles) > 0
	not accelc.profile_name in accelc.entitled_profiles
	msg := sprintf("team %v may not use hardware profile %q: it may use %v; pick one of them or add the profile to the team's profiles in the cluster's CUE", [
		accelc.team, accelc.profile_name, concat(", ", sort(accelc.entitled_profiles)),
	])
}

queue_label := "kueue.x-k8s.io/queue-name"

# The queue rules, entered only where Kueue shares out the pod's
# accelerators (kueue_accounts, below): OPA pays for every rule body it
# enters, and most pods' profiles and teams name no queue.
violation contains v if {
	kueue_accounts
	accelc.through_profile
	some v in queue_violation
}

queue_violation contains {"msg": msg} if {
	not accelc.profile_queue
	queue := accelc.entitlement.spec.queue
	queue != ""
	object.get(accelc.labels, queue_label, "") != queue
	msg := sprintf("team %v's accelerators are shared out by Kueue: add label %v: %v (the team's LocalQueue), or name the profile with label %v, which adds it", [
		accelc.team, queue_label, queue, accelc.profile_label,
	])
}

# A profile that schedules through Kueue names its LocalQueue, which
# every namespace of every team that may use it has.
queue_violation contains {"msg": msg} if {
	not accelc.generic_use
	queue := accelc.profile_queue
	object.get(accelc.labels, queue_label, "") != queue
	msg := sprintf("hardware profile %q schedules through Kueue: add label %v: %v (the profile's LocalQueue), or name the profile with label %v, which adds it", [
		accelc.profile_name, queue_label, queue, accelc.profile_label,
	])
}

profile_priority := accelc.hwp.metadata.annotations[accelc.priority_class_key]

# The priority rules, entered only where the profile or the team says
# something of priority or the pod names a class (each rule needs one of
# them).
priority_judged if profile_priority

priority_judged if tier

priority_judged if accelc.spec.priorityClassName

violation contains v if {
	priority_judged
	accelc.through_profile
	some v in priority_violation
}

priority_violation contains {"msg": msg} if {
	want := profile_priority
	got := object.get(accelc.spec, "priorityClassName", "")
	got != want
	msg := sprintf("hardware profile %q runs at priority class %v, but the pod names %q: set priorityClassName: %v, or name the profile with label %v, which sets it", [
		accelc.profile_name, want, got, want, accelc.profile_label,
	])
}

tier := accelc.entitlement.spec.priority

# The class the pod runs at, named for a message: its own, or the
# cluster's global default the Priority admission plugin gave it.
pod_class := accelc.spec.priorityClassName if accelc.spec.priorityClassName
else := "(none named: the cluster's global default)"

priority_violation contains {"msg": msg} if {
	not profile_priority
	tier
	accelc.pod_priority > tier.value
	msg := sprintf("priority class %v (%v) outranks team %v's tier %v (%v): drop priorityClassName or use %v", [
		pod_class, accelc.pod_priority, accelc.team, tier.className, tier.value, tier.className,
	])
}

priority_violation contains {"msg": msg} if {
	cls := accelc.spec.priorityClassName
	not accelc.pod_priority
	msg := sprintf("priority class %v is not synced to Gatekeeper, so its tier cannot be checked: use one of the cluster's priority classes", [cls])
}

# Kueue's WorkloadPriorityClass label sets the priority Kueue queues and
# preempts with, whatever the pod's own class: it is the profile's
# class, or at most the team's tier, like priorityClassName. accelc
# renders each WorkloadPriorityClass beside the PriorityClass of the same
# name and value, so the synced PriorityClass says what it is worth.
workload_priority_label := "kueue.x-k8s.io/priority-class"

priority_violation contains {"msg": msg} if {
	want := profile_priority
	got := accelc.labels[workload_priority_label]
	got != want
	msg := sprintf("hardware profile %q runs at priority class %v, but the pod's label %v is %q: drop the label (naming the profile with label %v sets it) or set it to %v", [
		accelc.profile_name, want, workload_priority_label, got, accelc.profile_label, want,
	])
}

priority_violation contains {"msg": msg} if {
	not profile_priority
	tier
	got := accelc.labels[workload_priority_label]
	not accelc.priority_classes[got]
	msg := sprintf("label %v=%v names a priority class accelc does not know, so its rank against team %v's tier %v cannot be checked: drop the label or use %v", [
		workload_priority_label, got, accelc.team, tier.className, tier.className,
	])
}

priority_violation contains {"msg": msg} if {
	not profile_priority
	tier
	got := accelc.labels[workload_priority_label]
	v := accelc.priority_classes[got].value
	v > tier.value
	msg := sprintf("label %v=%v (%v) outranks team %v's tier %v (%v) in Kueue: drop the label or use %v", [
		workload_priority_label, got, v, accelc.team, tier.className, tier.value, tier.className,
	])
}

checked_violation contains {"msg": msg} if {
	not accelc.team
	not accelc.generic_use
	msg := sprintf("namespace %v belongs to no team, so it may use no accelerator: add it to a team's namespaces in the cluster's CUE", [accelc.namespace])
}

checked_violation contains {"msg": msg} if {
	some t in accelc.profile_types
	# (The list itself, not entitled_types: no set is made for a pod
	# whose types are all the team's.)
	not t in accelc.entitlement.spec.acceleratorTypes
	msg := sprintf("team %v may not use %v (hardware profile %q): it may use %v; pick another profile or ask for the type in the team's CUE", [
		accelc.team, t, accelc.profile_name, concat(", ", sort(accelc.entitled_types)),
	])
}

checked_violation contains {"msg": msg} if {
	some r in accelc.accelerator_resources
	r != accelc.profile_resource
	msg := sprintf("hardware profile %q is requested through %v, not %v: ask for %v", [
		accelc.profile_name, accelc.profile_resource, r, accelc.profile_resource,
	])
}

# A profile that hands out devices by claim hands out no extended
# resource: asking for one would reach devices its claim does not govern.
violation contains {"msg": msg} if {
	accelc.dra_profile
	count(accelc.accelerator_resources) > 0
	msg := sprintf("hardware profile %q hands out devices by resource claim (ResourceClaimTemplate %v), not %v: drop the request, and claim the devices with the template", [
		accelc.profile_name, accelc.dra_template, concat(", ", sort(accelc.accelerator_resources)),
	])
}

count_of := accelc.pod_amount(accelc.profile_resource)

checked_violation contains {"msg": msg} if {
	count_of < accelc.profile_min
	msg := sprintf("hardware profile %q needs at least %v %v per pod; the pod asks for %v", [
		accelc.profile_name, accelc.profile_min, accelc.profile_resource, count_of,
	])
}

checked_violation contains {"msg": msg} if {
	count_of > accelc.profile_max
	msg := sprintf("hardware profile %q allows at most %v %v per pod; the pod asks for %v", [
		accelc.profile_name, accelc.profile_max, accelc.profile_resource, count_of,
	])
}

# Kueue admits a Job (and a JobSet, a PyTorchJob, an MPIJob, a RayCluster,
# a RayJob, a LeaderWorkerSet, an AppWrapper, a TrainJob, the pods of a
# Deployment or StatefulSet) as one workload, and reads its queue and
# WorkloadPriorityClass from the workload's own labels (a CronJob's from
# its Jobs' template), not from its pods'. So the workload's labels are
# held to what its templates' profiles allow, like a pod's.
workload_kinds := {"Job", "CronJob", "JobSet", "PyTorchJob", "MPIJob", "RayCluster", "RayJob", "LeaderWorkerSet", "AppWrapper", "TrainJob", "Deployment", "StatefulSet"}

workload := input.review.object if input.review.object.kind in workload_kinds

workload_labels := object.get(workload, ["spec", "jobTemplate", "metadata", "labels"], {}) if workload.kind == "CronJob"
else := object.get(workload, ["metadata", "labels"], {})

# What is judged of a workload itself (workload_violation, below) is
# asked only of a workload: a pod's review skips it with one check.
violation contains v if {
	workload
	some v in workload_violation
}

workload_templates contains t if {
	workload.kind in {"Job", "Deployment", "StatefulSet"}
	t := workload.spec.template
}

workload_templates contains t if {
	workload.kind == "CronJob"
	t := workload.spec.jobTemplate.spec.template
}

workload_templates contains t if {
	workload.kind == "JobSet"
	some rj in workload.spec.replicatedJobs
	t := rj.template.spec.template
}

workload_templates contains t if {
	workload.kind == "PyTorchJob"
	some _, r in workload.spec.pytorchReplicaSpecs
	t := r.template
}

workload_templates contains t if {
	workload.kind == "RayCluster"
	t := workload.spec.headGroupSpec.template
}

workload_templates contains t if {
	workload.kind == "RayCluster"
	some g in workload.spec.workerGroupSpecs
	t := g.template
}

workload_templates contains t if {
	workload.kind in {"RayJob", "LeaderWorkerSet", "MPIJob"}
	some [_, t] in accelc.object_templates(workload)
}

# An AppWrapper's wrapped templates, a TrainJob's pods as it says them.
workload_templates contains t if {
	workload.kind in {"AppWrapper", "TrainJob"}
	some t in accelc.list_template_pods
}

template_profile(t) := n if {
	n := t.metadata.annotations[accelc.profile_annotation]
} else := t.metadata.labels[accelc.profile_label]

# The profiles the workload's templates name, as HardwareProfiles.
workload_profiles contains [name, p] if {
	some t in workload_templates
	name := template_profile(t)
	p := accelc.profiles[name]
}

workload_violation contains {"msg": msg} if {
	q := workload_labels[queue_label]
	some [name, p] in workload_profiles
	want := p.spec.scheduling.kueue.localQueueName
	q != want
	msg := sprintf("%v %v: Kueue queues it by its label %v=%v, but hardware profile %q schedules through LocalQueue %v: set the label to %v (a workload goes to one queue: its templates' profiles must share it)", [
		workload.kind, workload.metadata.name, queue_label, q, name, want, want,
	])
}

workload_violation contains {"msg": msg} if {
	c := workload_labels[workload_priority_label]
	some [name, p] in workload_profiles
	want := p.metadata.annotations[accelc.priority_class_key]
	c != want
	msg := sprintf("%v %v: Kueue ranks it by its label %v=%v, but hardware profile %q runs at %v: drop the label or set it to %v", [
		workload.kind, workload.metadata.name, workload_priority_label, c, name, want, want,
	])
}

# Kueue's job webhook suspends a Job that joins a LocalQueue until Kueue
# admits the Job's Workload, and its pods are that Workload's (Kueue's pod
# webhook skips them). A Job of a profile Kueue shares out that reaches
# admission not suspended was skipped by Kueue's job webhook (its
# namespace outside Kueue's managedJobsNamespaceSelector, the batch/job
# integration off, the webhook failing open): its pods would run at once,
# counted by no Workload. Judged on an API server's CREATE only: a Job
# Kueue admitted is unsuspended by Kueue on UPDATE.
workload_violation contains {"msg": msg} if {
	input.review.operation == "CREATE"
	object.get(input.review, "uid", "") != ""
	workload.kind == "Job"
	accelc.group_of(object.get(workload, "apiVersion", "")) == "batch"
	q := workload_labels[queue_label]
	some [name, p] in workload_profiles
	p.spec.scheduling.kueue.localQueueName
	object.get(workload, ["spec", "suspend"], false) != true
	msg := sprintf("Job %v: it joins Kueue's LocalQueue %v (profile %q) but reached admission not suspended, so Kueue's job webhook skipped it and its pods would run without Kueue counting them: check that Kueue's batch/job integration is on, that its managedJobsNamespaceSelector selects namespace %v (accelc renders it in ConfigMap accelc-kueue-configuration), and that its webhook is reachable; then create the Job again", [
		workload.metadata.name, q, name, accelc.namespace,
	])
}

# Kueue's job integration manages a Job only while the Job names a
# LocalQueue (accelc's Kueue Configuration leaves
# manageJobsWithoutQueueName off), and its pod webhook leaves a Job's pods
# to the Job (kueueJobKinds): the pods of a Job of a profile Kueue shares
# out that joins no queue would run counted in no quota. On 1.36 accelc's
# job queue policy gives a new Job its profile's queue before this
# policy sees it; before 1.36 nothing does, and its owner writes it (as
# Kueue's documentation says to). On UPDATE only taking the label away
# is judged: Kueue lets go of a suspended Job whose label goes, and its
# owner could then resume it. (A Job made before enforcement without
# the label is left as it was.)
workload_violation contains {"msg": msg} if {
	workload.kind == "Job"
	input.parameters.kueueJobKinds[accelc.review_kind]
	not workload_labels[queue_label]
	job_queue_judged
	some [name, p] in workload_profiles
	want := p.spec.scheduling.kueue.localQueueName
	team_may_use(name)
	msg := sprintf("Job %v: Kueue manages it only while it names LocalQueue %v (label %v), the queue of hardware profile %q that its pods use; without it Kueue's pod webhook leaves its pods to the Job, and no quota would count them: label the Job %v=%v", [
		workload.metadata.name, want, queue_label, name, queue_label, want,
	])
}

# A CronJob's controller makes its Jobs with its jobTemplate's labels.
# Before 1.36 (labelledFromQueue set: no job queue policy labels them) a
# CronJob of a queued profile whose jobTemplate names no LocalQueue would
# have every Job it makes refused by the rule above: refused at the
# CronJob instead, saying where the label goes.
workload_violation contains {"msg": msg} if {
	workload.kind == "CronJob"
	input.parameters.labelledFromQueue
	input.parameters.kueueJobKinds["batch/Job"]
	not workload_labels[queue_label]
	job_queue_judged
	some [name, p] in workload_profiles
	want := p.spec.scheduling.kueue.localQueueName
	team_may_use(name)
	msg := sprintf("CronJob %v: before Kubernetes 1.36 its Jobs carry only its jobTemplate's labels, and Kueue manages a Job only while it names LocalQueue %v (label %v), the queue of hardware profile %q: without it each Job would be refused when made; set spec.jobTemplate.metadata.labels %v=%v", [
		workload.metadata.name, want, queue_label, name, queue_label, want,
	])
}

job_queue_judged if accelc.operation == "CREATE"

job_queue_judged if {
	accelc.operation == "UPDATE"
	old_workload_labels[queue_label] != ""
}

old_workload_labels := object.get(input.review, ["oldObject", "spec", "jobTemplate", "metadata", "labels"], {}) if workload.kind == "CronJob"
else := object.get(input.review, ["oldObject", "metadata", "labels"], {})

# The profile's LocalQueue is in the namespace: its team may use the
# profile (a team that lists none may use every profile of its types).
team_may_use(_) if {
	accelc.team
	count(accelc.entitled_profiles) == 0
}

team_may_use(name) if name in accelc.entitled_profiles

# The kinds whose pods a Job makes: Kueue admits them through the Job's
# Workload where the Job joins a queue (accelc's job queue policy labels
# it). The pods of every other workload that names a profile scheduling
# through Kueue are gated by Kueue's pod webhook, one by one.
job_pod_owners := {"batch/Job", "batch/CronJob", "jobset.x-k8s.io/JobSet", "trainer.kubeflow.org/TrainJob"}

# A gated pod may not name a node (the API server refuses it), so a
# workload whose pods Kueue gates and whose template pins them to a node
# would never get a pod made: its controller's creates fail for ever.
violation contains {"msg": msg} if {
	w := input.review.object
	w.kind != "Pod"
	not accelc.review_kind in job_pod_owners
	some [path, t] in accelc.object_templates(w)
	count(path) > 0
	node := object.get(t, ["spec", "nodeName"], "")
	node != ""
	name := queued_template_profile(t)
	msg := sprintf("%v %v: the pod template at %v names node %v, but hardware profile %q schedules through Kueue, whose pod webhook gates each of its pods, and the API server refuses a gated pod that names a node, so no pod would ever be made: drop spec.nodeName and let the scheduler place them", [
		w.kind, object.get(w.metadata, "name", ""), concat(".", [sprintf("%v", [x]) | some x in path]), node, name,
	])
}

# The same for a template that joins a LocalQueue itself, of no queued
# profile (a CPU pod in a team's queue, a queue of its own): Kueue's pod
# webhook gates every pod that names a queue in a namespace it manages
# (kueueNamespaces: its Configuration's managedJobsNamespaceSelector, every
# team's namespace where the quotas are Kueue's).
violation contains {"msg": msg} if {
	w := input.review.object
	w.kind != "Pod"
	not accelc.review_kind in job_pod_owners
	input.parameters.kueueNamespaces[accelc.namespace]
	some [path, t] in accelc.object_templates(w)
	count(path) > 0
	node := object.get(t, ["spec", "nodeName"], "")
	node != ""
	not queued_template_profile(t)
	queue := object.get(t, ["metadata", "labels", queue_label], "")
	queue != ""
	msg := sprintf("%v %v: the pod template at %v names node %v and joins Kueue's LocalQueue %v (label %v); Kueue's pod webhook gates every pod that joins a queue in namespace %v, and the API server refuses a gated pod that names a node, so no pod would ever be made: drop spec.nodeName and let the scheduler place them, or drop the label", [
		w.kind, object.get(w.metadata, "name", ""), concat(".", [sprintf("%v", [x]) | some x in path]), node, queue, queue_label, accelc.namespace,
	])
}

# The profile a template names, where it schedules through Kueue.
queued_template_profile(t) := name if {
	name := template_profile(t)
	accelc.profiles[name].spec.scheduling.kueue.localQueueName
}

# A Notebook is judged as its pod; its controller's StatefulSet makes it.
violation contains {"msg": msg} if {
	input.review.object.kind == "Notebook"
	node := object.get(accelc.written_spec, "nodeName", "")
	node != ""
	accelc.profile_queue
	msg := sprintf("Notebook %v: its pod template names node %v, but hardware profile %q schedules through Kueue, whose pod webhook gates the pod, and the API server refuses a gated pod that names a node, so its pod would never be made: drop spec.template.spec.nodeName", [
		object.get(input.review.object.metadata, "name", ""), node, accelc.profile_name,
	])
}

# Profiles of the workload without a priority class of their own: its
# label is held to the team's tier.
tier_bound_workload if {
	some [_, p] in workload_profiles
	not p.metadata.annotations[accelc.priority_class_key]
}

workload_violation contains {"msg": msg} if {
	c := workload_labels[workload_priority_label]
	tier_bound_workload
	t := tier
	not accelc.priority_classes[c]
	msg := sprintf("%v %v: label %v=%v names a priority class accelc does not know, so its rank against team %v's tier %v cannot be checked: drop the label or use %v", [
		workload.kind, workload.metadata.name, workload_priority_label, c, accelc.team, t.className, t.className,
	])
}

workload_violation contains {"msg": msg} if {
	c := workload_labels[workload_priority_label]
	tier_bound_workload
	t := tier
	v := accelc.priority_classes[c].value
	v > t.value
	msg := sprintf("%v %v: label %v=%v (%v) outranks team %v's tier %v (%v) in Kueue: drop the label or use %v", [
		workload.kind, workload.metadata.name, workload_priority_label, c, v, accelc.team, t.className, t.value, t.className,
	])
}

# Kueue sees every pod that holds accelerators: it queues a pod itself
# (gated until admitted) unless the pod's controller is a kind Kueue's job
# integrations manage (a Job, a PyTorchJob, a RayCluster, …), whose
# Workload it admitted whole. A pod that names such a controller is
# therefore admitted only from that controller's identity
# (podControllers): anyone else could name a CPU-only Job of their own and
# hold accelerators Kueue never counts. On UPDATE, only a controller that
# is new to the pod is judged (the controllers adopt and orphan pods);
# Gatekeeper's audit, which knows no user, judges none (accelc status and
# accelc audit --live list the pods no admitted Workload accounts for).
violation contains {"msg": msg} if {
	accelc.holds_accelerators
	o := accelc.controller_owner_of(accelc.written)
	makers := input.parameters.podControllers[accelc.owner_key(o)]
	controller_judged(o)
	not accelc.username in makers
	msg := sprintf("the pod names %v %v as its controller (ownerReferences), but %v made it, not the %v controller (%v): Kueue does not queue the pods of a %v it manages, so these accelerators would be outside team %v's quota; create the %v and let its controller make the pods", [
		o.kind, object.get(o, "name", ""), user_named, o.kind, makers_named(makers), o.kind, team_named, o.kind,
	])
}

controller_judged(_) if accelc.operation == "CREATE"

controller_judged(o) if {
	accelc.operation == "UPDATE"
	not new_controller_kept(o)
}

new_controller_kept(o) if {
	old := accelc.controller_owner_of(input.review.oldObject)
	object.get(old, "uid", "") == object.get(o, "uid", "")
	old.kind == o.kind
	old.name == o.name
}

makers_named(makers) := concat(", ", sort(makers)) if count(makers) > 0
else := "none: it makes no pod itself"

user_named := accelc.username if accelc.username != ""
else := "(no user)"

team_named := accelc.team if accelc.team
else := "(none)"

# Kueue's scheduling gate holds a pod it queues until Kueue admits it; only
# Kueue may lift it (kueueManagers). A user who removes it would run the
# pod without a Workload's admission.
kueue_gate := "kueue.x-k8s.io/admission"

# Kueue's pod webhook gates every pod it queues, and mutating webhooks run
# before any validating one, so a pod that joins a queue reaches this
# policy gated. The label is the one the pod carries (Kueue saw it), not
# the forecast's: where the mutators do not run (dryrun, warn) a pod the
# forecast puts in a queue was never queued, and nothing skipped it. One that arrives ungated was skipped by Kueue's webhook:
# its namespace is outside Kueue's managedJobsNamespaceSelector, the pod
# integration is off, or the webhook failed open. Kueue would never
# account for its accelerators, so it is refused, naming what to check.
# The pods of a Kueue-managed controller are its owner's Workload's (the
# controller rule above says who may make them). Only an API server's
# request's own pod is judged (it has a uid): a workload's expansion or
# template is a pod no webhook has mutated yet, and Gatekeeper's audit sees
# pods Kueue has since admitted and ungated.
violation contains {"msg": msg} if {
	input.review.operation == "CREATE"
	object.get(input.review, "uid", "") != ""
	not input.review.fromTemplate
	object.get(input.review.object, "kind", "") == "Pod"
	accelc.holds_accelerators
	queue := accelc.written_labels[queue_label]
	kueue_accounts
	not managed_controller
	not kueue_gate in {g.name | some g in object.get(accelc.written_spec, "schedulingGates", [])}
	msg := sprintf("the pod joins Kueue's LocalQueue %v (label %v) but reached admission without Kueue's scheduling gate %v, so Kueue's pod webhook skipped it and would never count its accelerators in team %v's quota: check that Kueue's pod integration is on, that its managedJobsNamespaceSelector selects namespace %v (accelc renders it in ConfigMap accelc-kueue-configuration), that its webhook is reachable, and that it sees the label (it must run after Gatekeeper's mutating webhook, which adds it: the API server calls webhook configurations in the order of their names; or set its reinvocationPolicy: IfNeeded); then create the pod again", [
		queue, queue_label, kueue_gate, team_named, accelc.namespace,
	])
}

# A generic namespace of no team has no LocalQueue, and accelc's Kueue
# configuration does not manage it: a pod there that names a queued
# profile's LocalQueue would never be gated or admitted by Kueue (the rule
# above refuses the pod when it is made). Refused for whatever makes it,
# a Notebook included, and listed by the audit. The label judged is the
# one written: generic use is not forecast into a queue.
violation contains {"msg": msg} if {
	accelc.generic_namespace
	not accelc.entitlement
	accelc.holds_accelerators
	queue := accelc.written_labels[queue_label]
	kueue_accounts
	msg := sprintf("the pod joins Kueue's LocalQueue %v (label %v), but namespace %v is no team's: it has no LocalQueue and Kueue does not manage it, so Kueue would never admit the pod or count its accelerators: drop the label (generic use runs outside Kueue)", [
		queue, queue_label, accelc.namespace,
	])
}

# Kueue shares out the pod's accelerators: its profile schedules through
# Kueue, or its team's quota is Kueue's. (Elsewhere a queue label is the
# pod's own affair: accelc expects no Workload for it.)
kueue_accounts if accelc.profile_queue

kueue_accounts if accelc.entitlement.spec.queue != ""

# The pod's controller is of a kind whose Kueue job integration is on
# (kueueJobKinds): Kueue's pod webhook leaves its pods to the owner's
# Workload. The pods of every other owner, a PyTorchJob or a RayCluster
# whose integration accelc's Kueue Configuration leaves off included,
# Kueue's pod webhook gates like any pod that joins a queue. (Who may make
# a pod with such an owner is the controller rule's.)
managed_controller if {
	o := accelc.controller_owner_of(accelc.written)
	input.parameters.kueueJobKinds[accelc.owner_key(o)]
}

violation contains {"msg": msg} if {
	input.review.operation == "UPDATE"
	some g in object.get(input.review.oldObject, ["spec", "schedulingGates"], [])
	g.name == kueue_gate
	not kueue_gate in {x.name | some x in object.get(accelc.written_spec, "schedulingGates", [])}
	not input.parameters.kueueManagers[accelc.username]
	msg := sprintf("%v removed scheduling gate %v, which only Kueue lifts when it admits the pod's Workload: leave it; the pod starts when Kueue admits it", [user_named, kueue_gate])
}
