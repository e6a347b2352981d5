package render

// Workload kinds: where each kind keeps its pod template, and the
// policies that label a workload's pods with its profile.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// WorkloadKind is a kind whose controller makes pods from pod templates
// it holds: where the templates are, and how the pods get their labels.
type WorkloadKind struct {
	// Policy names the kind's MutatingAdmissionPolicy:
	// accelc-profile-label-<Policy>.
	Policy   string
	Group    string
	Versions []string
	Kind     string
	Resource string
	// Templates are the kind's pod templates.
	Templates []PodTemplate
	// ObjectLabels: the controller copies the object's own labels to its
	// pods and ignores the template's metadata (Kubeflow's Notebook
	// controller builds its StatefulSet's pod template from
	// spec.template.spec and the Notebook's labels; its CRD prunes
	// template metadata), so the label goes on the object, from its own
	// annotation, and the admission constraint judges the object itself
	// as its pod.
	ObjectLabels bool
	// CreateOnly: the template cannot change once the object exists
	// (a Job's), so it is labelled on CREATE only.
	CreateOnly bool
	// Lists are where the kind holds pod templates in lists, which
	// neither an ExpansionTemplate's source nor a fixed patch path can
	// index: the admission constraint judges each as the pod it makes
	// (list_template_pods in the Rego library), and the pods are
	// labelled when they are made.
	Lists []TemplateList
	// Composed: the kind's pods are not made from pod templates of one
	// shape but composed by its controller (an AppWrapper's wrapped
	// objects, a TrainJob's trainer and overrides, an InferenceService's
	// PodSpec-like components): the admission constraint builds each pod
	// the object says, as far as it says it (list_template_pods in the
	// Rego library), and the pods are labelled when they are made.
	Composed bool
}

// TemplateList is a list of a workload's pod templates.
type TemplateList struct {
	// Path is the list's field path; Template the template's path within
	// an element, and Name the element's field that names it.
	Path, Template []string
	Name           string
}

// PodTemplate is where a workload kind holds a pod template.
type PodTemplate struct {
	// Path is the template's field path.
	Path []string
	// Expansion names the Gatekeeper ExpansionTemplate that checks the
	// template as the pod it makes; "" for a kind the constraint judges
	// itself (ObjectLabels), and for a template the object may leave out
	// (a RayJob's cluster, a LeaderWorkerSet's leader): Gatekeeper's
	// webhook fails a request whose object lacks an ExpansionTemplate's
	// source, so the admission constraint judges such a template as the
	// pod it makes where it is there (constraint_paths in the Rego
	// library).
	Expansion string
}

// WorkloadKinds are the kinds accelc checks as the pods they make: the
// built-in controllers' and the ML kinds users run on accelerators. Each
// Policy names the MutatingAdmissionPolicy that labels its templates
// (one per template shape, so that an expression only ever selects
// fields of the kinds it matches; a kind with list templates only, a
// JobSet, has none).
var WorkloadKinds = []WorkloadKind{
	{Policy: "workloads", Group: "apps", Versions: v1, Kind: "Deployment", Resource: "deployments", Templates: podTemplate},
	{Policy: "workloads", Group: "apps", Versions: v1, Kind: "StatefulSet", Resource: "statefulsets", Templates: podTemplate},
	{Policy: "workloads", Group: "apps", Versions: v1, Kind: "ReplicaSet", Resource: "replicasets", Templates: podTemplate},
	{Policy: "workloads", Group: "apps", Versions: v1, Kind: "DaemonSet", Resource: "daemonsets", Templates: podTemplate},
	{Policy: "workloads", Group: "batch", Versions: v1, Kind: "Job", Resource: "jobs", Templates: podTemplate, CreateOnly: true},
	{Policy: "cronjobs", Group: "batch", Versions: v1, Kind: "CronJob", Resource: "cronjobs", Templates: []PodTemplate{
		{Path: []string{"spec", "jobTemplate", "spec", "template"}, Expansion: "accelc-cronjobs"},
	}},
	{Policy: "notebooks", Group: "kubeflow.org", Versions: []string{"v1", "v1beta1"}, Kind: "Notebook", Resource: "notebooks", Templates: []PodTemplate{
		{Path: []string{"spec", "template"}},
	}, ObjectLabels: true},
	{Policy: "pytorchjobs", Group: "kubeflow.org", Versions: v1, Kind: "PyTorchJob", Resource: "pytorchjobs", Templates: []PodTemplate{
		{Path: []string{"spec", "pytorchReplicaSpecs", "Master", "template"}, Expansion: "accelc-pytorchjob-master"},
		{Path: []string{"spec", "pytorchReplicaSpecs", "Worker", "template"}, Expansion: "accelc-pytorchjob-worker"},
	}},
	{Policy: "rayclusters", Group: "ray.io", Versions: v1, Kind: "RayCluster", Resource: "rayclusters", Templates: []PodTemplate{
		{Path: []string{"spec", "headGroupSpec", "template"}, Expansion: "accelc-raycluster-head"},
	}, Lists: []TemplateList{{Path: []string{"spec", "workerGroupSpecs"}, Template: []string{"template"}, Name: "groupName"}}},
	{Group: "jobset.x-k8s.io", Versions: []string{"v1alpha2"}, Kind: "JobSet", Resource: "jobsets",
		Lists: []TemplateList{{Path: []string{"spec", "replicatedJobs"}, Template: []string{"template", "spec", "template"}, Name: "name"}}},
	// KubeRay's RayJob holds a whole RayCluster spec (none where it
	// selects a running cluster), and the pod template of the Job that
	// submits its entrypoint, if it sets one: every template may be
	// absent, so the constraint judges each itself.
	{Policy: "rayjobs", Group: "ray.io", Versions: v1, Kind: "RayJob", Resource: "rayjobs", Templates: []PodTemplate{
		{Path: []string{"spec", "rayClusterSpec", "headGroupSpec", "template"}},
		{Path: []string{"spec", "submitterPodTemplate"}},
	}, Lists: []TemplateList{{Path: []string{"spec", "rayClusterSpec", "workerGroupSpecs"}, Template: []string{"template"}, Name: "groupName"}}},
	// A LeaderWorkerSet's leader template is optional: without it the
	// leader is made from the worker template.
	{Policy: "leaderworkersets", Group: "leaderworkerset.x-k8s.io", Versions: v1, Kind: "LeaderWorkerSet", Resource: "leaderworkersets", Templates: []PodTemplate{
		{Path: []string{"spec", "leaderWorkerTemplate", "leaderTemplate"}},
		{Path: []string{"spec", "leaderWorkerTemplate", "workerTemplate"}, Expansion: "accelc-leaderworkerset-worker"},
	}},
	// The MPI operator's v2beta1 MPIJob (Kueue's MPIJob integration):
	// the operator requires the launcher; a job may have no workers.
	{Policy: "mpijobs", Group: "kubeflow.org", Versions: []string{"v2beta1"}, Kind: "MPIJob", Resource: "mpijobs", Templates: []PodTemplate{
		{Path: []string{"spec", "mpiReplicaSpecs", "Launcher", "template"}, Expansion: "accelc-mpijob-launcher"},
		{Path: []string{"spec", "mpiReplicaSpecs", "Worker", "template"}},
	}},
	// An AppWrapper wraps whole objects (spec.components[].template),
	// whose pod templates are where their own kinds hold them or where
	// the component's podSets paths say.
	{Group: "workload.codeflare.dev", Versions: []string{"v1beta2"}, Kind: "AppWrapper", Resource: "appwrappers", Composed: true},
	// Kubeflow Trainer's TrainJob: its pods come from the runtime it
	// references; what the TrainJob itself says of them is judged.
	{Group: "trainer.kubeflow.org", Versions: []string{"v1alpha1"}, Kind: "TrainJob", Resource: "trainjobs", Composed: true},
	// KServe's InferenceService: its predictor, transformer and explainer
	// are PodSpecs with the component's fields inline.
	{Group: "serving.kserve.io", Versions: []string{"v1beta1"}, Kind: "InferenceService", Resource: "inferenceservices", Composed: true},
}

var (
	v1          = []string{"v1"}
	podTemplate = []PodTemplate{{Path: []string{"spec", "template"}, Expansion: "accelc-workloads"}}
)

// WorkloadKindOf returns the workload kind of a group and kind.
func WorkloadKindOf(group, kind string) (WorkloadKind, bool) {
	for _, w := range WorkloadKinds {
		if w.Group == group && w.Kind == kind {
			return w, true
		}
	}
	return WorkloadKind{}, false
}

// workloadLabelPolicies are the MutatingAdmissionPolicies that do for
// the workloads that make pods what profileLabelPolicy does for pods:
// where a pod template names its profile only by Open Data Hub's
// annotation, the template gets accelc's profile label too. Gatekeeper's
// expansion of the workload then yields a labelled pod, which every
// label-keyed mutator changes as it changes the pod the controller will
// make, and the validation judges the workload as that pod; the
// controller's pods carry the label from the template. A kind whose
// controller copies the object's labels to its pods (ObjectLabels) is
// labelled on the object, from its own annotation.
func workloadLabelPolicies(m *compile.Model) []Object {
	label := m.Cluster.LabelPrefix + "/profile"
	var names []string
	kinds := map[string][]WorkloadKind{}
	for _, w := range WorkloadKinds {
		if w.Policy == "" {
			continue
		}
		if _, ok := kinds[w.Policy]; !ok {
			names = append(names, w.Policy)
		}
		kinds[w.Policy] = append(kinds[w.Policy], w)
	}
	var out []Object
	for _, policyName := range names {
		name := "accelc-profile-label-" + policyName
		var rules []admissionregistrationv1.NamedRuleWithOperations
		var guards, patches []string
		seen := map[string]bool{}
		for _, w := range kinds[policyName] {
			ops := []admissionregistrationv1.OperationType{admissionregistrationv1.Create}
			if !w.CreateOnly {
				ops = append(ops, admissionregistrationv1.Update)
			}
			rules = append(rules, admissionregistrationv1.NamedRuleWithOperations{
				RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: ops,
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{w.Group}, APIVersions: w.Versions, Resources: []string{w.Resource}},
				},
			})
			var mds [][]string // the metadata each part labels
			if w.ObjectLabels {
				mds = [][]string{{"metadata"}}
			} else {
				for _, t := range w.Templates {
					mds = append(mds, append(slices.Clone(t.Path), "metadata"))
				}
			}
			for _, md := range mds {
				guard, patch := labelFromAnnotation(md, label)
				if seen[guard] {
					continue
				}
				seen[guard] = true
				guards = append(guards, guard)
				patches = append(patches, guard+" ? "+patch+" : []")
			}
		}
		objs := mutatingPolicy(m, name, admissionregistrationv1.MutatingAdmissionPolicySpec{
			FailurePolicy:    ptr(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: rules},
			// Most objects of these kinds name no profile, and an
			// object's UPDATE after its CREATE has the label: they pay
			// for this condition, not for a patch.
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name:       "names-its-profile-by-annotation-only",
				Expression: anyHolds(guards),
			}},
			// The templates are apart: one expression patches each as
			// mutations one after another would.
			Mutations: foldPatches(patches),
		})
		out = append(out, objs...)
	}
	return out
}

// celPath is a field path as CEL selects it from object.
func celPath(path []string) string {
	return "object." + strings.Join(path, ".")
}

// patchPath is a field path as a JSON pointer.
func patchPath(path []string) string {
	return "/" + strings.Join(path, "/")
}

// has is CEL's test that every field of path is set.
func has(path []string) string {
	var out []string
	for i := range path {
		out = append(out, "has("+celPath(path[:i+1])+")")
	}
	return strings.Join(out, " && ")
}

// addLabel is the JSON patch that sets the label on the metadata at md
// (a path) to value: one key where it has labels, else the labels.
func addLabel(md []string, label, value string) string {
	return addKey(md, "labels", label, value)
}

// addKey is the JSON patch that sets key in the metadata map field
// (labels, annotations) at md to value: one key where the map exists,
// else the map.
func addKey(md []string, field, key, value string) string {
	m := append(append([]string{}, md...), field)
	return fmt.Sprintf("(%s ? [JSONPatch{op: \"add\", path: %q + jsonpatch.escapeKey(%q), value: %s}] : [JSONPatch{op: \"add\", path: %q, value: {%q: %s}}])",
		has(m), patchPath(m)+"/", key, value, patchPath(m), key, value)
}

// jobTopologyPolicy is the MutatingAdmissionPolicy that gives the pod
// template of a Job of a profile with a topology Kueue's pod-set topology
// annotation: Kueue reads it from the Job's template when it makes the
// Workload, before any pod exists. The Job names its profile as Open Data
// Hub writes it (the template's annotation), by accelc's label on its
// template, or on the Job itself; a Gatekeeper mutator could select only
// the last. A template that has one of Kueue's topology annotations
// already is left as it is: the user's choice, and Kueue's Job webhook
// refuses a template with two. Nil without such a profile.
func jobTopologyPolicy(m *compile.Model) []Object {
	return topologyPolicy(m, "accelc-job-topology", "batch", "jobs", []string{"spec", "template", "metadata"}, jobProfileNames(m.Cluster.LabelPrefix+"/profile"))
}

// podTopologyPolicy is the MutatingAdmissionPolicy that gives a new pod
// of a profile with a topology Kueue's pod-set topology annotation, which
// Kueue reads from a plain pod or a pod group's. The pod names its
// profile by accelc's label or Open Data Hub's annotation. As for a Job,
// a pod with one of Kueue's topology annotations already is left as it is
// (a Job's pods have their template's): Kueue's pod webhook refuses a pod
// with two. A Gatekeeper AssignMetadata cannot hold back for another key,
// so before 1.36 accelc's webhook does this (podTopologyUnset), and only
// a cluster with neither has the AssignMetadata (mutationObjects). Nil
// without such a profile.
func podTopologyPolicy(m *compile.Model) []Object {
	return topologyPolicy(m, "accelc-pod-topology", "", "pods", []string{"metadata"}, podProfileNames(m.Cluster.LabelPrefix+"/profile"))
}

// topologyPolicy is the MutatingAdmissionPolicy name that gives the new
// objects of resource (in group) the topology annotation of the profile
// they name at one of names, on the metadata at md, where it has none of
// Kueue's.
func topologyPolicy(m *compile.Model, name, group, resource string, md []string, names [][]string) []Object {
	var parts []guardedPatch
	var guards []string
	for _, t := range topologyAnnotations(m) {
		// A template with no metadata (a Job labelled on itself) gets
		// its metadata, with the annotation.
		patch := addKey(md, "annotations", t.Key, strconv.Quote(t.Level))
		if len(md) > 1 {
			patch = fmt.Sprintf("(%s ? %s : [JSONPatch{op: \"add\", path: %q, value: {\"annotations\": {%q: %q}}}])",
				has(md), patch, patchPath(md), t.Key, t.Level)
		}
		guard := topologyUnset(md, names, t)
		parts = append(parts, guardedPatch{Guard: guard, Patch: patch})
		guards = append(guards, guard)
	}
	if len(parts) == 0 {
		return nil
	}
	return mutatingPolicy(m, name, admissionregistrationv1.MutatingAdmissionPolicySpec{
		MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: v1, Resources: []string{resource}},
			},
		}}},
		// Most objects name no profile with a topology: they pay for
		// this condition, not for a patch.
		MatchConditions: []admissionregistrationv1.MatchCondition{{
			Name:       "lacks-its-profiles-topology",
			Expression: anyHolds(guards),
		}},
		// An object that names two such profiles (a label and an
		// annotation that disagree, which the validation denies) gets
		// the first one's annotation, as mutations one after another
		// would give it: once one is written, no guard holds.
		Mutations: chainPatches(parts),
	})
}

// jobProfileNames are where a Job names its profile: its template's
// label, Open Data Hub's annotation there, its own label.
func jobProfileNames(label string) [][]string {
	return [][]string{
		{"spec", "template", "metadata", "labels", label},
		{"spec", "template", "metadata", "annotations", ProfileAnnotation},
		{"metadata", "labels", label},
	}
}

// podProfileNames are where a pod names its profile: its label, Open
// Data Hub's annotation.
func podProfileNames(label string) [][]string {
	return [][]string{
		{"metadata", "labels", label},
		{"metadata", "annotations", ProfileAnnotation},
	}
}

// topologyUnset is the CEL condition that the object names t's profile
// at one of names (each a path to a label or annotation) and the
// metadata at md has none of Kueue's topology annotations: where the
// topology policies, and accelc's webhook in their place, write t.Key.
func topologyUnset(md []string, names [][]string, t TopologyAnnotation) string {
	var named []string
	for _, at := range names {
		m, key := at[:len(at)-1], at[len(at)-1]
		named = append(named, fmt.Sprintf("(%s && %q in %s && %s[%q] == %q)", has(m), key, celPath(m), celPath(m), key, t.Profile))
	}
	ann := append(slices.Clone(md), "annotations")
	var keys []string
	for _, k := range compile.TopologyAnnotations {
		keys = append(keys, fmt.Sprintf("%q in %s", k, celPath(ann)))
	}
	return fmt.Sprintf("(%s) && !(%s && (%s))", strings.Join(named, " || "), has(ann), strings.Join(keys, " || "))
}

// labelFromAnnotation is the CEL condition that the metadata at md (an
// object's, a pod template's) names its profile by Open Data Hub's
// annotation and has no profile label, and the JSON patch that gives it
// the label, from the annotation. (An ObjectLabels kind's template
// metadata is not read: a CRD that prunes it has no such field for the
// expression to select.)
func labelFromAnnotation(md []string, label string) (guard, patch string) {
	ann := append(slices.Clone(md), "annotations")
	lbl := append(slices.Clone(md), "labels")
	guard = fmt.Sprintf("%s && %q in %s && !(%s && %q in %s)", has(ann), ProfileAnnotation, celPath(ann), has(lbl), label, celPath(lbl))
	return guard, addLabel(md, label, fmt.Sprintf("%s[%q]", celPath(ann), ProfileAnnotation))
}

// expansionTemplates are the ExpansionTemplates of WorkloadKinds: one per
// name, applying to every kind whose template it names, so Gatekeeper
// checks each template as the pod it makes.
func expansionTemplates(m *compile.Model) []Object {
	type source struct {
		path    string
		applyTo []applyTo
	}
	var names []string
	sources := map[string]*source{}
	for _, w := range WorkloadKinds {
		for _, t := range w.Templates {
			if t.Expansion == "" {
				continue
			}
			src, ok := sources[t.Expansion]
			if !ok {
				src = &source{path: strings.Join(t.Path, ".")}
				sources[t.Expansion] = src
				names = append(names, t.Expansion)
			}
			i := slices.IndexFunc(src.applyTo, func(a applyTo) bool {
				return a.Groups[0] == w.Group && slices.Equal(a.Versions, w.Versions)
			})
			if i < 0 {
				src.applyTo = append(src.applyTo, applyTo{Groups: []string{w.Group}, Versions: w.Versions})
				i = len(src.applyTo) - 1
			}
			src.applyTo[i].Kinds = append(src.applyTo[i].Kinds, w.Kind)
		}
	}
	var out []Object
	for _, name := range names {
		src := sources[name]
		for _, a := range src.applyTo {
			slices.Sort(a.Kinds)
		}
		out = append(out, Object{
			Dir: "policies",
			Body: &expansionTemplate{
				TypeMeta:   metav1.TypeMeta{APIVersion: "expansion.gatekeeper.sh/v1alpha1", Kind: "ExpansionTemplate"},
				ObjectMeta: objectMeta(m.Cluster.Name, "", name),
				Spec: expansionTemplateSpec{
					ApplyTo:        src.applyTo,
					TemplateSource: src.path,
					GeneratedGVK:   gvk{Group: "", Version: "v1", Kind: "Pod"},
				},
			},
		})
	}
	return out
}
