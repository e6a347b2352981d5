package render

// The mutating admission policies that put a pod in its profile: node
// selector, tolerations, queue and priority.

import (
	"fmt"
	"slices"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
)

// ProfileAnnotation is Open Data Hub's reference from a workload to its
// HardwareProfile.
const ProfileAnnotation = "opendatahub.io/hardware-profile-name"

// mutationObjects renders the Gatekeeper mutators that turn a pod naming
// its profile into one the validation admits. Gatekeeper mutators select
// by label, not by annotation, so they key on the <prefix>/profile label,
// which a MutatingAdmissionPolicy gives pods that name their profile only
// by ODH's annotation, as ODH's controllers do: accelc-pod-profile, or
// profileLabelPolicy where no mutator matches pods.
//
// Per profile: the ODH annotation; for a typed profile the types (and,
// single-typed, type) annotations, a required node affinity on the type
// label and, for several types, preferred terms in the profile's order;
// the profile's tolerations and priority class. Per team: the team
// annotation. Every one
// writes only where the pod has not: AssignMetadata never overwrites, the
// affinity Assigns test that the path does not exist, ModifySet merges.
//
// Mutations apply only where the namespace's stage denies
// (compile.Model.Mutating): under dryrun and warn a pod is created as it
// would be without accelc, and the constraint of its stage forecasts
// what the mutations would have done.
//
// Before Kubernetes 1.36 (cluster.kubernetesVersion) no API server
// serves MutatingAdmissionPolicies by default, so none is rendered: the
// profile label comes instead from the queue label Open Data Hub's
// webhook writes (profileFromQueue, below).
func mutationObjects(m *compile.Model) []Object {
	only, except, none := m.Mutating()
	if none {
		return nil
	}
	var out []Object
	if m.Cluster.AdmissionPolicies() {
		// The pods' profile label comes with accelc-pod-profile, below.
		out = workloadLabelPolicies(m)
		out = append(out, jobTopologyPolicy(m)...)
		out = append(out, podTopologyPolicy(m)...)
		out = append(out, jobQueuePolicy(m)...)
	}
	prefix := m.Cluster.LabelPrefix
	pods := []applyTo{{Groups: []string{""}, Kinds: []string{"Pod"}, Versions: []string{"v1"}}}
	// matchPods matches the pods that sel selects (by namespace, by
	// label), outside the excluded namespaces.
	matchPods := func(sel match) match {
		sel.Scope = "Namespaced"
		sel.Kinds = []matchKinds{{APIGroups: []string{""}, Kinds: []string{"Pod"}}}
		sel.ExcludedNamespaces = nonNil(m.Cluster.ExcludedNamespaces)
		return sel
	}
	profileLabel := func(p *compile.Profile) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{prefix + "/profile": p.Name}}
	}
	add := func(kind, name string, spec mutatorSpec) {
		var ok bool
		if spec.Match, ok = scopeMatch(spec.Match, only, except); !ok {
			return
		}
		out = append(out, Object{
			Dir: "mutations",
			Body: &mutator{
				TypeMeta:   metav1.TypeMeta{APIVersion: "mutations.gatekeeper.sh/v1", Kind: kind},
				ObjectMeta: objectMeta(m.Cluster.Name, "", name),
				Spec:       spec,
			},
		})
	}
	// assign sets location to value on the selected pods; once, only
	// where the pod has nothing there.
	assign := func(name string, sel match, location string, value any, once bool) {
		params := mutatorParameters{Assign: &assignField{Value: value}}
		if once {
			params.PathTests = []pathTest{{SubPath: location, Condition: "MustNotExist"}}
		}
		add("Assign", name, mutatorSpec{ApplyTo: pods, Match: matchPods(sel), Location: location, Parameters: params})
	}
	assignOnce := func(name string, sel match, location string, value any) {
		assign(name, sel, location, value, true)
	}
	// confine gives the selected pods the required node affinity on the
	// expressions: the whole affinity where the pod has none, and each
	// expression ANDed into every term of one the pod brings (on
	// kubernetes.io/arch, say), unless the term already has one on that
	// key (a narrower choice of types the validation then judges).
	//
	// One type alone is a node selector instead, as a person writes it by
	// hand: the same nodes (a node selector is ANDed with every term of
	// the pod's own affinity), in a smaller pod that Kueue's flavor
	// assignment and the scheduler's filter test by a label lookup
	// (docs/scale.md). A pod that brings its own selector on the type
	// keeps it, and the validation judges it.
	const requiredAffinity = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
	// name is the mutators' stem: <name>-node-selector, or
	// <name>-affinity and <name>-affinity-<type|pool>.
	confine := func(name string, sel match, exprs ...corev1.NodeSelectorRequirement) {
		if len(exprs) == 1 && exprs[0].Operator == corev1.NodeSelectorOpIn && len(exprs[0].Values) == 1 {
			assignOnce(name+"-node-selector", sel, fmt.Sprintf("spec.nodeSelector.%q", exprs[0].Key), exprs[0].Values[0])
			return
		}
		name += "-affinity"
		assignOnce(name, sel, requiredAffinity, &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: exprs}}})
		for _, e := range exprs {
			suffix := "type"
			if e.Key == m.Cluster.PoolLabel() {
				suffix = "pool"
			}
			assignOnce(name+"-"+suffix, sel, fmt.Sprintf("%s.nodeSelectorTerms[matchExpressions: *].matchExpressions[key: %q]", requiredAffinity, e.Key), e)
		}
	}
	annotate := func(name string, sel match, key, value string) {
		add("AssignMetadata", name, mutatorSpec{
			Match:      matchPods(sel),
			Location:   fmt.Sprintf("metadata.annotations.%q", key),
			Parameters: mutatorParameters{Assign: &assignField{Value: value}},
		})
	}
	in := func(key string, values []string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: values}
	}
	for i := range m.Profiles {
		p := &m.Profiles[i]
		if !p.Offered() {
			// A disabled or retired profile hands out nothing new: its
			// pods get nothing from the mutators (no affinity or
			// tolerations aiming them at accelerator nodes), and the
			// validation denies any that ask for an accelerator. A retired
			// profile's running pods were mutated when they were made.
			continue
		}
		sel := match{LabelSelector: profileLabel(p)}
		annotate("accelc-"+p.Name+"-profile", sel, ProfileAnnotation, p.Name)
		// A profile kept in one domain of a topology level: Kueue reads
		// the pod-set annotation from a plain pod, and from a Job's pod
		// template when it makes the Job's Workload, before any pod
		// exists. accelc's policies (jobTopologyPolicy,
		// podTopologyPolicy), or its webhook before 1.36, write it where
		// the user has written none of Kueue's; only a cluster with
		// neither gets it from this mutator, which cannot hold back for
		// another key (vet says so).
		if key, label := m.TopologyAnnotation(p); key != "" && m.UsesKueue() && !m.Cluster.AdmissionPolicies() && !m.Cluster.ProfileWebhook() {
			annotate("accelc-"+p.Name+"-topology", sel, key, label)
		}
		if len(p.Tolerations) > 0 {
			add("ModifySet", "accelc-"+p.Name+"-tolerations", mutatorSpec{
				ApplyTo:    pods,
				Match:      matchPods(sel),
				Location:   "spec.tolerations",
				Parameters: mutatorParameters{Operation: "merge", Values: &modifySetValues{FromList: p.Tolerations}},
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
		// A profile that hands out devices by claim is confined to its
		// types as well, and to the nodes of two models (type mixed),
		// where the scheduler allocates its claim a device of its class.
		required := []corev1.NodeSelectorRequirement{in(m.Cluster.TypeLabel(), confiningTypes(p, p.AcceleratorTypes))}
		if len(p.Pools) > 0 {
			annotate("accelc-"+p.Name+"-pools", sel, prefix+"/"+AnnotationPools, strings.Join(p.Pools, ","))
			required = append(required, in(m.Cluster.PoolLabel(), p.Pools))
		}
		if len(required) > 0 {
			confine("accelc-"+p.Name, sel, required...)
		}
		if p.DRA != nil {
			continue
		}
		// Preference follows the pools where there are several (a pool
		// profile's fallbacks, the MIG configs with the slice), else the
		// types.
		key, order := m.Cluster.TypeLabel(), p.AcceleratorTypes
		if len(p.Pools) > 1 {
			key, order = m.Cluster.PoolLabel(), p.Pools
		}
		if len(order) > 1 {
			terms := make([]corev1.PreferredSchedulingTerm, len(order))
			for j, v := range order {
				// The first weighs most: 100, 90, 80, … (at least 1).
				terms[j] = corev1.PreferredSchedulingTerm{
					Weight:     int32(max(100-10*j, 1)),
					Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{in(key, []string{v})}},
				}
			}
			assignOnce("accelc-"+p.Name+"-preference", sel, "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution", terms)
		}
	}
	for _, t := range m.Teams {
		if len(t.Namespaces) == 0 {
			continue
		}
		annotate("accelc-team-"+t.Name, match{Namespaces: t.Namespaces}, prefix+"/team", t.Name)
		// A generic profile names no type: in a team's namespaces its pods
		// are confined to the types the team is entitled to.
		for i := range m.Profiles {
			p := &m.Profiles[i]
			if !p.Offered() || !p.Generic() || len(t.AcceleratorTypes) == 0 {
				continue
			}
			confine("accelc-"+p.Name+"-"+t.Name, match{Namespaces: t.Namespaces, LabelSelector: profileLabel(p)},
				in(m.Cluster.TypeLabel(), confiningTypes(p, t.AcceleratorTypes)))
		}
		// A profile without a priority class of its own runs the team's
		// pods at the team's tier in Kueue too.
		if m.UsesKueue() && t.Priority != "" {
			var own []string
			for i := range m.Profiles {
				if m.Profiles[i].PriorityClassName != "" {
					own = append(own, m.Profiles[i].Name)
				}
			}
			exprs := []metav1.LabelSelectorRequirement{{Key: prefix + "/profile", Operator: metav1.LabelSelectorOpExists}}
			if len(own) > 0 {
				exprs = append(exprs, metav1.LabelSelectorRequirement{Key: prefix + "/profile", Operator: metav1.LabelSelectorOpNotIn, Values: own})
			}
			add("AssignMetadata", "accelc-team-"+t.Name+"-workload-priority", mutatorSpec{
				Match:      matchPods(match{Namespaces: t.Namespaces, LabelSelector: &metav1.LabelSelector{MatchExpressions: exprs}}),
				Location:   fmt.Sprintf("metadata.labels.%q", WorkloadPriorityLabel),
				Parameters: mutatorParameters{Assign: &assignField{Value: t.Priority}},
			})
		}
	}
	// Where profiles schedule through Kueue, a profile's pods join its
	// LocalQueue in the namespaces of the teams that may use it: Open
	// Data Hub sets the queue-name label on the workloads it creates from
	// the HardwareProfile; this does it for plain pods that name the
	// profile. Kueue admits (and counts) a plain pod that carries the
	// label when it is created; Gatekeeper's webhook configuration sorts
	// before Kueue's, so Kueue sees the label. A queue the pod names
	// itself is kept, and checked by the entitlement policy.
	for i := range m.Profiles {
		p := &m.Profiles[i]
		teams := m.QueueTeams(p)
		if len(teams) == 0 || !p.Offered() {
			continue
		}
		var namespaces []string
		for _, t := range teams {
			namespaces = append(namespaces, t.Namespaces...)
		}
		slices.Sort(namespaces)
		if m.Cluster.LabelsFromQueue() {
			profileFromQueue(m, p, namespaces, matchPods, add)
		}
		sel := matchPods(match{Namespaces: namespaces, LabelSelector: profileLabel(p)})
		add("AssignMetadata", "accelc-"+p.Name+"-queue", mutatorSpec{
			Match:      sel,
			Location:   fmt.Sprintf("metadata.labels.%q", QueueNameLabel),
			Parameters: mutatorParameters{Assign: &assignField{Value: LocalQueueName(p)}},
		})
		if p.PriorityClassName != "" {
			add("AssignMetadata", "accelc-"+p.Name+"-workload-priority", mutatorSpec{
				Match:      sel,
				Location:   fmt.Sprintf("metadata.labels.%q", WorkloadPriorityLabel),
				Parameters: mutatorParameters{Assign: &assignField{Value: p.PriorityClassName}},
			})
		}
	}
	if m.Cluster.AdmissionPolicies() {
		// The API server gives pods what the mutators above would, so
		// that Gatekeeper's mutating webhook is sent none
		// (GatekeeperInstallValues); the mutators stay for the pods
		// Gatekeeper expands from workloads. It writes the profile label
		// from ODH's annotation too, in place of accelc-profile-label:
		// the API server converts a pod for CEL twice per policy that
		// matches it (its match conditions are evaluated again when a
		// later webhook changes the pod) and encodes and decodes it once
		// per patch, so one policy costs a pod about half of what two do.
		pod := podProfilePolicy(m, out)
		if len(pod) == 0 {
			pod = profileLabelPolicy(m)
		}
		out = append(out, pod...)
	}
	return out
}

// profileFromQueue gives, on a cluster without MutatingAdmissionPolicy
// (before 1.36), what joins a profile's LocalQueue by Kueue's queue label
// in the namespaces of the profile's teams the profile's label, where it
// has none: a pod, and the pod template of a workload kind with one
// template (a Deployment, a Job), whose every pod the queue admits and
// charges as the profile's. Open Data Hub's webhook writes that queue
// label on the Notebooks and InferenceServices that name the profile by
// annotation, from the HardwareProfile's scheduling.kueue.localQueueName,
// and their controllers copy it to the pods and Deployments they make;
// ODH's Kueue webhook refuses such a workload, or a Kubeflow or Ray job,
// without it in a namespace Kueue manages. Gatekeeper runs its mutators
// again until the object stops changing, so a pod labelled here then
// gets every mutator keyed on the label, as a pod labelled by hand does,
// and a workload's expansion is the labelled pod its controller will
// make. The LocalQueue is the profile's alone (LocalQueueName), and only
// in its teams' namespaces, so the label names the profile the queue
// already charges the pod to. A label the object has is kept, and judged
// (one that disagrees with the annotation is refused). A kind of several
// templates (a RayCluster's CPU head beside its GPU workers) is not
// labelled from its queue: its templates name their profiles themselves.
func profileFromQueue(m *compile.Model, p *compile.Profile, namespaces []string, matchPods func(match) match, add func(kind, name string, spec mutatorSpec)) {
	label := m.Cluster.LabelPrefix + "/profile"
	joins := &metav1.LabelSelector{MatchLabels: map[string]string{QueueNameLabel: LocalQueueName(p)}}
	add("AssignMetadata", "accelc-"+p.Name+"-profile-from-queue", mutatorSpec{
		Match:      matchPods(match{Namespaces: namespaces, LabelSelector: joins}),
		Location:   fmt.Sprintf("metadata.labels.%q", label),
		Parameters: mutatorParameters{Assign: &assignField{Value: p.Name}},
	})
	var apply []applyTo
	var kinds []matchKinds
	for _, w := range queueLabelledKinds() {
		apply = append(apply, applyTo{Groups: []string{w.Group}, Kinds: []string{w.Kind}, Versions: w.Versions})
		kinds = append(kinds, matchKinds{APIGroups: []string{w.Group}, Kinds: []string{w.Kind}})
	}
	location := fmt.Sprintf("spec.template.metadata.labels.%q", label)
	add("Assign", "accelc-"+p.Name+"-template-profile-from-queue", mutatorSpec{
		ApplyTo: apply,
		Match: match{
			Scope:              "Namespaced",
			Kinds:              kinds,
			ExcludedNamespaces: nonNil(m.Cluster.ExcludedNamespaces),
			Namespaces:         namespaces,
			LabelSelector:      joins,
		},
		Location: location,
		Parameters: mutatorParameters{
			Assign:    &assignField{Value: p.Name},
			PathTests: []pathTest{{SubPath: location, Condition: "MustNotExist"}},
		},
	})
}

// queueLabelledKinds are the workload kinds whose one pod template, at
// spec.template, profileFromQueue labels from the profile's LocalQueue.
func queueLabelledKinds() []WorkloadKind {
	var out []WorkloadKind
	for _, w := range WorkloadKinds {
		if w.ObjectLabels || w.Composed || len(w.Lists) > 0 || len(w.Templates) != 1 || !slices.Equal(w.Templates[0].Path, podTemplate[0].Path) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// scopeMatch narrows a mutator's match to the namespaces that deny: to
// only where it is set, and never the namespaces in except. False when
// no namespace is left.
func scopeMatch(sel match, only, except []string) (match, bool) {
	if only != nil {
		if sel.Namespaces == nil {
			sel.Namespaces = slices.Clone(only)
		} else {
			sel.Namespaces = slices.DeleteFunc(slices.Clone(sel.Namespaces), func(ns string) bool { return !slices.Contains(only, ns) })
			if len(sel.Namespaces) == 0 {
				return sel, false
			}
		}
	}
	if len(except) > 0 {
		if sel.Namespaces != nil {
			sel.Namespaces = slices.DeleteFunc(slices.Clone(sel.Namespaces), func(ns string) bool { return slices.Contains(except, ns) })
			if len(sel.Namespaces) == 0 {
				return sel, false
			}
		} else {
			sel.ExcludedNamespaces = append(slices.Clone(sel.ExcludedNamespaces), except...)
		}
	}
	return sel, true
}

// governedNamespaces are the namespaces accelc's admission policies
// (the MutatingAdmissionPolicies' bindings, accelc-pod-admission's)
// apply in: those that deny, less the excluded ones and those labelled
// admission.gatekeeper.sh/ignore, which Gatekeeper's webhooks skip too.
// The selector names them by the name label the API server gives every
// namespace; an excluded glob (kube-*) no selector can say is returned
// apart (globs), for a match condition (notExcluded).
func governedNamespaces(m *compile.Model) (*metav1.LabelSelector, []string) {
	only, except, _ := m.Mutating()
	sel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: GatekeeperIgnoreLabel, Operator: metav1.LabelSelectorOpDoesNotExist}}}
	excluded, globs := SplitExcluded(m.Cluster.ExcludedNamespaces)
	if only != nil {
		// A team namespace is never excluded (Load refuses one).
		sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: only})
	} else if out := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(except), excluded...)))); len(out) > 0 {
		sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: out})
	}
	return sel, globs
}

// SplitExcluded parts cluster.excludedNamespaces patterns into the exact
// names (which a namespace selector says by the name label) and the
// globs (kube-*, *-system: compile.MatchNamespace), each in order.
func SplitExcluded(patterns []string) (names, globs []string) {
	for _, ns := range patterns {
		if strings.Contains(ns, "*") {
			globs = append(globs, ns)
		} else {
			names = append(names, ns)
		}
	}
	return names, globs
}

// notExcluded is the match condition that keeps a policy from the
// namespaces an excluded glob matches (governedNamespaces); none where
// there is no glob.
func notExcluded(globs []string) []admissionregistrationv1.MatchCondition {
	if len(globs) == 0 {
		return nil
	}
	return []admissionregistrationv1.MatchCondition{{Name: "not-excluded", Expression: "!" + namespaceIn(globs)}}
}

// QueueNameLabel is the label a workload names its Kueue LocalQueue with.
const QueueNameLabel = "kueue.x-k8s.io/queue-name"

// WorkloadPriorityLabel names a workload's Kueue WorkloadPriorityClass.
const WorkloadPriorityLabel = "kueue.x-k8s.io/priority-class"

// mutatingPolicy is a MutatingAdmissionPolicy of accelc's, and its
// binding to the namespaces accelc governs (governedNamespaces): it
// fails closed and runs once, before the mutating webhooks.
func mutatingPolicy(m *compile.Model, name string, spec admissionregistrationv1.MutatingAdmissionPolicySpec) []Object {
	spec.FailurePolicy = ptr(admissionregistrationv1.Fail)
	spec.ReinvocationPolicy = admissionregistrationv1.NeverReinvocationPolicy
	sel, globs := governedNamespaces(m)
	spec.MatchConditions = append(notExcluded(globs), spec.MatchConditions...)
	policy := admissionregistrationv1.MutatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: managedLabels(m.Cluster.Name)},
		Spec:       spec,
	}
	binding := admissionregistrationv1.MutatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: managedLabels(m.Cluster.Name)},
		Spec: admissionregistrationv1.MutatingAdmissionPolicyBindingSpec{
			PolicyName:     name,
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: sel},
		},
	}
	return []Object{{Dir: "mutations", Body: &policy}, {Dir: "mutations", Body: &binding}}
}

// ProfileLabelPolicyName names profileLabelPolicy and its binding.
const ProfileLabelPolicyName = "accelc-profile-label"

// profileLabelPolicy is a MutatingAdmissionPolicy (admissionregistration
// v1, GA and on by default from Kubernetes 1.36) that gives a pod naming
// its profile only by Open Data Hub's annotation — as ODH's workbenches
// and model servers do — accelc's profile label, so that every Gatekeeper
// mutator keyed on the label applies to it as to a labelled pod. The
// API server runs admission policies before mutating webhooks, so
// Gatekeeper sees the label. A label the pod already has is kept (the
// policy denies a label and annotation that disagree).
func profileLabelPolicy(m *compile.Model) []Object {
	const name = ProfileLabelPolicyName
	label := m.Cluster.LabelPrefix + "/profile"
	objs := mutatingPolicy(m, name, admissionregistrationv1.MutatingAdmissionPolicySpec{
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
		// A JSON patch, not an apply configuration: an apply
		// configuration is merged as server-side apply merges, with the
		// pod's OpenAPI type converter, on every pod made; measured under
		// the cluster benchmark's storm, that was most of what the API
		// server spent on admission policies.
		Mutations: []admissionregistrationv1.Mutation{{
			PatchType: admissionregistrationv1.PatchTypeJSONPatch,
			JSONPatch: &admissionregistrationv1.JSONPatch{
				Expression: fmt.Sprintf(`has(object.metadata.labels) ? [JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey(%q), value: object.metadata.annotations[%q]}] : [JSONPatch{op: "add", path: "/metadata/labels", value: {%q: object.metadata.annotations[%q]}}]`,
					label, ProfileAnnotation, label, ProfileAnnotation),
			},
		}},
	})
	return objs
}

func ptr[T any](v T) *T { return &v }

// confiningTypes are the type label values a profile's pods are confined
// to, given its types (or its team's): a profile that hands out devices by
// claim also reaches nodes of two models (type mixed), as the admission
// policy's confining_types allows.
func confiningTypes(p *compile.Profile, types []string) []string {
	if p.DRA == nil || slices.Contains(types, inventory.TypeMixed) {
		return types
	}
	return append(slices.Clone(types), inventory.TypeMixed)
}
