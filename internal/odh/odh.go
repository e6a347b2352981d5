// Package odh says what Open Data Hub's own admission puts on a workload
// that names its hardware profile only by annotation, for the tests that
// play such workloads on a cluster without accelc's
// MutatingAdmissionPolicies (Kubernetes before 1.36), where accelc's
// profile label comes from it.
//
// ODH's hardware-profile webhook (the operator's
// internal/webhook/hardwareprofile) mutates Notebooks and
// InferenceServices on CREATE and UPDATE: for a HardwareProfile of
// scheduling type Queue it sets the workload's kueue.x-k8s.io/queue-name
// label to spec.scheduling.kueue.localQueueName; the notebook controller
// and KServe copy the workload's labels to the pods (and a raw
// Deployment) they make. ODH's Kueue webhook refuses a Notebook,
// InferenceService, PyTorchJob, RayJob or RayCluster without that label in
// a namespace Kueue manages, so a user's job there carries it too. The
// tests cannot run ODH's operator (its webhook is an internal package of
// its module), so they write the label where it would be.
package odh

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/render"
)

// QueueLabelled gives obj, when it names its profile only by ODH's
// annotation (on itself or on one of its pod templates) and joins no
// queue, the queue label ODH's stack gives it: queueOf(profile), the
// HardwareProfile's spec.scheduling.kueue.localQueueName, "" for a
// profile that does not schedule through Kueue (whose workloads ODH gives
// a node selector and tolerations instead, and no label). It reports
// whether it changed obj.
func QueueLabelled(obj *unstructured.Unstructured, profileLabel string, queueOf func(profile string) string) bool {
	if obj.GetLabels()[render.QueueNameLabel] != "" {
		return false
	}
	profile, ok := annotationOnly(obj, profileLabel)
	if !ok {
		return false
	}
	queue := queueOf(profile)
	if queue == "" {
		return false
	}
	labels := obj.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[render.QueueNameLabel] = queue
	obj.SetLabels(labels)
	return true
}

// annotationOnly is the profile obj names by ODH's annotation, on itself
// or on its first pod template that has it, when neither it nor any of
// its templates carries the profile label.
func annotationOnly(obj *unstructured.Unstructured, profileLabel string) (string, bool) {
	if obj.GetLabels()[profileLabel] != "" {
		return "", false
	}
	profile := obj.GetAnnotations()[render.ProfileAnnotation]
	for _, md := range templateMetadata(obj) {
		if l, _, _ := unstructured.NestedString(md, "labels", profileLabel); l != "" {
			return "", false
		}
		if a, _, _ := unstructured.NestedString(md, "annotations", render.ProfileAnnotation); a != "" && profile == "" {
			profile = a
		}
	}
	return profile, profile != ""
}

// templateMetadata are the metadata of obj's pod templates, where its
// kind (render.WorkloadKinds) holds them, in templates and in lists.
func templateMetadata(obj *unstructured.Unstructured) []map[string]any {
	w, ok := render.WorkloadKindOf(obj.GroupVersionKind().Group, obj.GetKind())
	if !ok {
		return nil
	}
	var out []map[string]any
	for _, t := range w.Templates {
		if md, ok, _ := unstructured.NestedMap(obj.Object, append(append([]string{}, t.Path...), "metadata")...); ok {
			out = append(out, md)
		}
	}
	for _, l := range w.Lists {
		items, _, _ := unstructured.NestedSlice(obj.Object, l.Path...)
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				continue
			}
			if md, ok, _ := unstructured.NestedMap(m, append(append([]string{}, l.Template...), "metadata")...); ok {
				out = append(out, md)
			}
		}
	}
	return out
}

// OlderMinorDiffers are the example admission cases
// (<example>/<case>) whose verdict before Kubernetes 1.36 is not 1.36's,
// and why: what the queue label cannot cover (docs/policies.md, "Before
// Kubernetes 1.36"). Every other case is admitted on both or refused on
// both, a refusal before 1.36 naming every policy 1.36's names; the
// offline comparison (pkg/policytest/engine TestOlderMinorVerdicts) and
// the end-to-end suite on the older minor hold the examples to it.
var OlderMinorDiffers = map[string]string{
	// A LeaderWorkerSet holds two templates (leader, workers): it is not
	// labelled from its queue (a CPU template beside a GPU one would take
	// the profile's placement).
	"hetero-prod/lws-odh": "a LeaderWorkerSet naming its profile by annotation only is refused before 1.36: label its templates",
	// small-lab's quotas are ResourceQuotas: its profiles schedule by
	// node (type Node), so ODH writes no queue label, only the
	// HardwareProfile's tolerations (and node selector, which a profile
	// that claims devices, confined to two type values, has none of).
	"small-lab/l40s-claim": "a pod of a profile that does not schedule through Kueue, naming it by annotation only, is refused before 1.36: label it",
	// ODH's webhook writes the generic profile's queue label on a pod in
	// a generic GPU namespace of no team, where the profile has no
	// LocalQueue: the pod joins a queue that is not there, and is
	// refused. The 1.36 case is played without ODH's webhook; on an ODH
	// cluster the webhook writes the label on 1.36 too.
	"hetero-prod/generic-namespace-generic-profile": "a generic namespace's pod of a Kueue profile, given the profile's queue label by ODH's webhook, joins a LocalQueue its namespace does not have: refused",
	// What joins a profile's queue is the profile's (TestOlderMinorVerdicts
	// plays both): a CPU-only Job there is a pod of the profile asking
	// for none of its devices, and a GPU pod that names no profile is
	// taken as the profile's, with its placement and quota.
	"hetero-prod/older-cpu-job-in-gpu-queue": "a CPU-only Job in a GPU profile's LocalQueue is that profile's before 1.36, and asks for too few devices: give it a queue of its own",
	"hetero-prod/older-queue-label-only":     "a GPU pod that joins a profile's LocalQueue and names no profile is that profile's pod before 1.36: admitted, confined to the profile's types",
	// 1.36's job queue policy gives a Job of a queued profile its queue
	// label; before 1.36 nothing can (a Gatekeeper mutator selects by the
	// Job's own labels, not its template's), and a Job outside Kueue
	// would run its pods counted in no quota.
	// KubeRay makes its pods from the templates, not from the
	// RayCluster's or RayJob's own labels, so the queue label ODH's stack
	// puts on the workload reaches no pod; no mutator labels them, and
	// they would be refused when made: refused at the workload instead.
	"hetero-prod/raycluster-odh":     "a RayCluster naming its profile by annotation only is refused at the workload before 1.36 (its pods would be refused when made): label its templates",
	"hetero-prod/rayjob-odh":         "a RayJob naming its profile by annotation only is refused at the workload before 1.36 (its pods would be refused when made): label its templates",
	"hetero-prod/job-no-queue-label": "a Job of a queued profile that names no LocalQueue is refused before 1.36, saying to add the profile's queue label; 1.36 labels it",
}

// OlderMinorDiffersMutated are the cases that accelc test judges as
// written (no mutate) whose verdict once the API server has run the
// mutations, as it does, is not 1.36's before 1.36, and why.
var OlderMinorDiffersMutated = map[string]string{
	// 1.36's admission policy labels the pod from its annotation and the
	// queue mutator then puts it in the profile's LocalQueue; before 1.36
	// nothing labels a pod that joins no queue.
	"hetero-prod/annotation-only-no-queue": "a pod naming a Kueue profile by annotation only and joining no queue (not as ODH's webhook leaves it) is refused before 1.36, saying to add the queue label; 1.36 puts it in the queue",
}
