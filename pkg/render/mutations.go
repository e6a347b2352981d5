package render

import (
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// ProfileAnnotation is Open Data Hub's reference from a workload to its
// HardwareProfile.
const ProfileAnnotation = "opendatahub.io/hardware-profile-name"

// mutationObjects renders the Gatekeeper mutators that turn a pod naming
// its profile into one the validation admits. Gatekeeper mutators select
// by label, not by annotation, so they key on the <prefix>/profile label,
// which the MutatingAdmissionPolicy (profileLabelPolicy) gives pods that
// name their profile only by ODH's annotation, as ODH's controllers do.
//
// Per profile: the ODH annotation; for a typed profile the types (and,
// single-typed, type) annotations, a required node affinity on the type
// label and, for several types, preferred terms in the profile's order;
// the profile's tolerations and priority class. Per team: the team
// annotation. Every one
// writes only where the pod has not: AssignMetadata never overwrites, the
// affinity Assigns test that the path does not exist, ModifySet merges.
func mutationObjects(m *compile.Model) []Object {
	out := profileLabelPolicy(m)
	prefix := m.Cluster.LabelPrefix
	podKinds := []any{map[string]any{"apiGroups": []string{""}, "kinds": []string{"Pod"}}}
	applyTo := []any{map[string]any{"groups": []string{""}, "kinds": []string{"Pod"}, "versions": []string{"v1"}}}
	match := func(extra map[string]any) map[string]any {
		mt := map[string]any{"scope": "Namespaced", "kinds": podKinds, "excludedNamespaces": nonNil(m.Cluster.ExcludedNamespaces)}
		for k, v := range extra {
			mt[k] = v
		}
		return mt
	}
	add := func(kind, apiVersion, name string, spec map[string]any) {
		out = append(out, Object{
			Dir: "mutations", APIVersion: apiVersion, Kind: kind, Name: name,
			Body: map[string]any{
				"apiVersion": apiVersion,
				"kind":       kind,
				"metadata":   meta{Name: name, Labels: managedLabels(m.Cluster.Name)},
				"spec":       spec,
			},
		})
	}
	// assign sets location to value on the profile's pods; once, only
	// where the pod has nothing there.
	assign := func(name string, sel map[string]any, location string, value any, once bool) {
		params := map[string]any{"assign": map[string]any{"value": value}}
		if once {
			params["pathTests"] = []any{map[string]any{"subPath": location, "condition": "MustNotExist"}}
		}
		add("Assign", "mutations.gatekeeper.sh/v1", name, map[string]any{
			"applyTo":    applyTo,
			"match":      match(sel),
			"location":   location,
			"parameters": params,
		})
	}
	assignOnce := func(name string, sel map[string]any, location string, value any) {
		assign(name, sel, location, value, true)
	}
	annotate := func(name string, sel map[string]any, key, value string) {
		add("AssignMetadata", "mutations.gatekeeper.sh/v1", name, map[string]any{
			"match":      match(sel),
			"location":   fmt.Sprintf("metadata.annotations.%q", key),
			"parameters": map[string]any{"assign": map[string]any{"value": value}},
		})
	}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		sel := map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]string{prefix + "/profile": p.Name}}}
		annotate("accelc-"+p.Name+"-profile", sel, ProfileAnnotation, p.Name)
		if len(p.Tolerations) > 0 {
			tols := make([]any, len(p.Tolerations))
			for j, t := range p.Tolerations {
				tols[j] = t
			}
			add("ModifySet", "mutations.gatekeeper.sh/v1", "accelc-"+p.Name+"-tolerations", map[string]any{
				"applyTo":    applyTo,
				"match":      match(sel),
				"location":   "spec.tolerations",
				"parameters": map[string]any{"operation": "merge", "values": map[string]any{"fromList": tols}},
			})
		}
		if p.PriorityClassName != "" {
			// The tier is the profile's: a pod of it does not pick its own.
			// The Priority admission plugin has already set spec.priority
			// (0, or the global default's value) before the webhooks run,
			// and rejects a class whose value differs when it runs again
			// after them, so the value and preemption policy are set with
			// the class.
			assign("accelc-"+p.Name+"-priority", sel, "spec.priorityClassName", p.PriorityClassName, false)
			if pc, ok := m.Cluster.PriorityClasses[p.PriorityClassName]; ok {
				assign("accelc-"+p.Name+"-priority-value", sel, "spec.priority", pc.Value, false)
				policy := pc.PreemptionPolicy
				if policy == "" {
					policy = "PreemptLowerPriority"
				}
				assign("accelc-"+p.Name+"-preemption", sel, "spec.preemptionPolicy", policy, false)
			}
		}
		if p.Generic() {
			continue
		}
		annotate("accelc-"+p.Name+"-types", sel, prefix+"/types", strings.Join(p.AcceleratorTypes, ","))
		if len(p.AcceleratorTypes) == 1 {
			annotate("accelc-"+p.Name+"-type", sel, prefix+"/type", p.AcceleratorTypes[0])
		}
		required := []any{map[string]any{"key": m.Cluster.TypeLabel(), "operator": "In", "values": p.AcceleratorTypes}}
		if len(p.Pools) > 0 {
			annotate("accelc-"+p.Name+"-pools", sel, prefix+"/"+AnnotationPools, strings.Join(p.Pools, ","))
			required = append(required, map[string]any{"key": m.Cluster.PoolLabel(), "operator": "In", "values": p.Pools})
		}
		assignOnce("accelc-"+p.Name+"-affinity", sel, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
			map[string]any{"nodeSelectorTerms": []any{map[string]any{"matchExpressions": required}}})
		// Preference follows the pools where there are several (a pool
		// profile's fallbacks, the MIG configs with the slice), else the
		// types.
		key, order := m.Cluster.TypeLabel(), p.AcceleratorTypes
		if len(p.Pools) > 1 {
			key, order = m.Cluster.PoolLabel(), p.Pools
		}
		if len(order) > 1 {
			terms := make([]any, len(order))
			for j, v := range order {
				// The first weighs most: 100, 90, 80, … (at least 1).
				terms[j] = map[string]any{"weight": max(100-10*j, 1), "preference": map[string]any{
					"matchExpressions": []any{map[string]any{"key": key, "operator": "In", "values": []string{v}}},
				}}
			}
			assignOnce("accelc-"+p.Name+"-preference", sel, "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution", terms)
		}
	}
	for _, t := range m.Teams {
		if len(t.Namespaces) == 0 {
			continue
		}
		annotate("accelc-team-"+t.Name, map[string]any{"namespaces": t.Namespaces}, prefix+"/team", t.Name)
		// A generic profile names no type: in a team's namespaces its pods
		// are confined to the types the team is entitled to.
		for i := range m.Profiles {
			p := &m.Profiles[i]
			if !p.Generic() || len(t.AcceleratorTypes) == 0 {
				continue
			}
			sel := map[string]any{
				"namespaces":    t.Namespaces,
				"labelSelector": map[string]any{"matchLabels": map[string]string{prefix + "/profile": p.Name}},
			}
			assignOnce("accelc-"+p.Name+"-"+t.Name+"-affinity", sel, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
				map[string]any{"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{
					map[string]any{"key": m.Cluster.TypeLabel(), "operator": "In", "values": t.AcceleratorTypes},
				}}}})
		}
		// Where the team's quota is Kueue's, its profile pods go through
		// the team's LocalQueue: Kueue admits (and counts) a plain pod
		// that carries the queue-name label when it is created. Gatekeeper's
		// webhook configuration sorts before Kueue's, so Kueue sees the
		// label; a queue the pod names itself is kept.
		if m.Cluster.Quotas == "kueue" && len(t.Quota) > 0 {
			add("AssignMetadata", "mutations.gatekeeper.sh/v1", "accelc-queue-"+t.Name, map[string]any{
				"match": match(map[string]any{
					"namespaces":    t.Namespaces,
					"labelSelector": map[string]any{"matchExpressions": []any{map[string]any{"key": prefix + "/profile", "operator": "Exists"}}},
				}),
				"location":   fmt.Sprintf("metadata.labels.%q", QueueNameLabel),
				"parameters": map[string]any{"assign": map[string]any{"value": LocalQueueName}},
			})
		}
	}
	return out
}

// QueueNameLabel is the label a workload names its Kueue LocalQueue with.
const QueueNameLabel = "kueue.x-k8s.io/queue-name"

// profileLabelPolicy is a MutatingAdmissionPolicy (admissionregistration
// v1, GA and on by default from Kubernetes 1.36) that gives a pod naming
// its profile only by Open Data Hub's annotation — as ODH's workbenches
// and model servers do — accelc's profile label, so that every Gatekeeper
// mutator keyed on the label applies to it as to a labelled pod. The
// API server runs admission policies before mutating webhooks, so
// Gatekeeper sees the label. A label the pod already has is kept (the
// policy denies a label and annotation that disagree).
func profileLabelPolicy(m *compile.Model) []Object {
	const name = "accelc-profile-label"
	label := m.Cluster.LabelPrefix + "/profile"
	policy := admissionregistrationv1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: managedLabels(m.Cluster.Name)},
		Spec: admissionregistrationv1.MutatingAdmissionPolicySpec{
			FailurePolicy: ptr(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"},
						},
					},
				}},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name: "names-profile-by-annotation-only",
				Expression: fmt.Sprintf("has(object.metadata.annotations) && %q in object.metadata.annotations && !(has(object.metadata.labels) && %q in object.metadata.labels)",
					ProfileAnnotation, label),
			}},
			Mutations: []admissionregistrationv1.Mutation{{
				PatchType: admissionregistrationv1.PatchTypeApplyConfiguration,
				ApplyConfiguration: &admissionregistrationv1.ApplyConfiguration{
					Expression: fmt.Sprintf("Object{metadata: Object.metadata{labels: {%q: object.metadata.annotations[%q]}}}", label, ProfileAnnotation),
				},
			}},
			ReinvocationPolicy: admissionregistrationv1.NeverReinvocationPolicy,
		},
	}
	binding := admissionregistrationv1.MutatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: managedLabels(m.Cluster.Name)},
		Spec:       admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{PolicyName: name},
	}
	return []Object{
		{Dir: "mutations", APIVersion: policy.APIVersion, Kind: policy.Kind, Name: name, Body: policy},
		{Dir: "mutations", APIVersion: binding.APIVersion, Kind: binding.Kind, Name: name, Body: binding},
	}
}

func ptr[T any](v T) *T { return &v }
