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
// and why: none. Every case is admitted on both or refused on both, a
// refusal before 1.36 naming every policy 1.36's names: where a profile
// does not schedule through Kueue, vet refuses an older cluster without
// the catalog service, whose webhook stands in for 1.36's
// MutatingAdmissionPolicies (docs/policies.md, "Before Kubernetes
// 1.36"). The offline comparison (pkg/policytest/engine
// TestOlderMinorVerdicts) and the end-to-end suite on the older minor
// hold the examples to it; a case that must differ is named here with
// why.
var OlderMinorDiffers = map[string]string{}

// OlderMinorDiffersMutated are the cases that accelc test judges as
// written (no mutate) whose verdict once the API server has run the
// mutations, as it does, is not 1.36's before 1.36, and why: none, now
// that accelc's webhook does before 1.36 what its policies do on it.
var OlderMinorDiffersMutated = map[string]string{}
