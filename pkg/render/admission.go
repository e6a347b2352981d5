package render

// What accelc's admission mutations do to an object, in Go: the one
// implementation that accelc's mutating webhook (before Kubernetes 1.36)
// runs and that the offline admission engine (accelc test) applies.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/accelc/accelc/pkg/compile"
)

// AdmissionMutations is what accelc's MutatingAdmissionPolicies do
// (profileLabelPolicy, workloadLabelPolicies, jobQueuePolicy,
// jobTopologyPolicy, podTopologyPolicy), and, on a cluster whose API
// server serves none (before Kubernetes 1.36), what accelc's mutating
// webhook does in their place (profileWebhook): a pod or a workload's pod
// template that names its profile only by Open Data Hub's annotation gets
// accelc's profile label; a new Job whose template names a queued profile
// gets the profile's LocalQueue and priority labels; a new Job or pod of
// a profile kept in one topology domain gets Kueue's pod-set topology
// annotation (on the Job's template). The policies' CEL and the webhook's
// configuration are rendered from the same model; Mutate is what both do.
// (accelc-pod-profile, which gives a pod what Gatekeeper's pod mutators
// would, is not here: it is translated from those mutators, which model
// it; podProfilePolicy.)
type AdmissionMutations struct {
	// ProfileLabel is <labelPrefix>/profile; "" mutates nothing.
	ProfileLabel string `json:"profileLabel"`
	// NamespaceSelector selects where the mutations apply: the
	// namespaces accelc governs (governedNamespaces), by their name
	// label, and not labelled admission.gatekeeper.sh/ignore; nil for
	// every namespace.
	NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector,omitempty"`
	// ExcludedGlobs are the excluded namespace globs (kube-*) the
	// selector cannot say: the mutations skip a namespace one matches.
	ExcludedGlobs []string `json:"excludedGlobs,omitempty"`
	// JobQueues are the job queue policy's mutations, by the kind they
	// label ("<group>/<Kind>", one of KueueJobFrameworks).
	JobQueues map[string][]GangLabels `json:"jobQueues,omitempty"`
	// Topology are the topology policies' mutations: Kueue's pod-set
	// topology annotation for a new Job's template and a new pod, by
	// profile.
	Topology []TopologyAnnotation `json:"topology,omitempty"`
}

// TopologyAnnotation is Kueue's pod-set topology annotation (Key, one of
// compile.RequiredTopologyAnnotation and PreferredTopologyAnnotation,
// naming the node label of the level, Level) that a new Job's template
// gets where the Job names Profile (by its template's label or Open Data
// Hub's annotation there, or by its own label), and a new pod where it
// names Profile (by its label or the annotation). Where the template or
// pod has any of compile.TopologyAnnotations already, it is left as it
// is: the user's choice, and Kueue refuses a second.
type TopologyAnnotation struct {
	Profile string `json:"profile"`
	Key     string `json:"key"`
	Level   string `json:"level"`
}

// AdmissionMutationsOf is what the model's admission mutations do; the
// zero value where the model mutates nothing.
func AdmissionMutationsOf(m *compile.Model) AdmissionMutations {
	if _, _, none := m.Mutating(); none {
		return AdmissionMutations{}
	}
	sel, globs := governedNamespaces(m)
	out := AdmissionMutations{ProfileLabel: m.Cluster.LabelPrefix + "/profile", NamespaceSelector: sel, ExcludedGlobs: globs}
	for _, f := range KueueJobFrameworks {
		if g := jobQueueLabels(m, f); len(g) > 0 {
			if out.JobQueues == nil {
				out.JobQueues = map[string][]GangLabels{}
			}
			out.JobQueues[f.Group+"/"+f.Kind] = g
		}
	}
	out.Topology = topologyAnnotations(m)
	return out
}

// topologyAnnotations are the topology policies' mutations, one per enabled
// profile with a topology; nil where the cluster has no Kueue queues.
func topologyAnnotations(m *compile.Model) []TopologyAnnotation {
	if !m.UsesKueue() {
		return nil
	}
	var out []TopologyAnnotation
	for i := range m.Profiles {
		p := &m.Profiles[i]
		if key, level := m.TopologyAnnotation(p); key != "" && p.Enabled {
			out = append(out, TopologyAnnotation{Profile: p.Name, Key: key, Level: level})
		}
	}
	return out
}

// jobQueueLabels are the job queue policy's mutations for one of
// KueueJobFrameworks' kinds, one per profile and set of labels (a
// profile without a class of its own runs at each team's tier); nil
// where no profile is queued.
func jobQueueLabels(m *compile.Model, f KueueJobFramework) []GangLabels {
	if !m.UsesKueue() {
		return nil
	}
	w, ok := WorkloadKindOf(f.Group, f.Kind)
	if !ok || len(w.Templates) != 1 {
		// A kind with one pod template is all the expression knows.
		panic(fmt.Sprintf("render: Kueue framework %s: %s/%s is not a workload kind with one pod template", f.Name, f.Group, f.Kind))
	}
	var out []GangLabels
	for i := range m.Profiles {
		p := &m.Profiles[i]
		if !p.Offered() {
			continue
		}
		byLabels := map[string][]string{}
		labelsOf := map[string]map[string]string{}
		for _, t := range m.QueueTeams(p) {
			l := map[string]string{QueueNameLabel: LocalQueueName(p)}
			if c := p.PriorityClassName; c != "" {
				l[WorkloadPriorityLabel] = c
			} else if t.Priority != "" {
				l[WorkloadPriorityLabel] = t.Priority
			}
			key := fmt.Sprint(l)
			byLabels[key] = append(byLabels[key], t.Namespaces...)
			labelsOf[key] = l
		}
		for _, key := range slices.Sorted(maps.Keys(byLabels)) {
			out = append(out, GangLabels{Profile: p.Name, Namespaces: slices.Sorted(slices.Values(byLabels[key])), Labels: labelsOf[key]})
		}
	}
	return out
}

// ParseAdmissionMutations reads AdmissionMutations as accelc renders them
// for its webhook (AdmissionMutationsFile).
func ParseAdmissionMutations(data []byte) (AdmissionMutations, error) {
	var a AdmissionMutations
	if err := json.Unmarshal(data, &a); err != nil {
		return AdmissionMutations{}, fmt.Errorf("admission mutations: %w", err)
	}
	if _, err := a.namespaces(); err != nil {
		return AdmissionMutations{}, err
	}
	return a, nil
}

func (a *AdmissionMutations) namespaces() (labels.Selector, error) {
	if a.NamespaceSelector == nil {
		return labels.Everything(), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(a.NamespaceSelector)
	if err != nil {
		return nil, fmt.Errorf("admission mutations: namespaceSelector: %w", err)
	}
	return sel, nil
}

// AppliesTo reports whether a namespace is one the mutations apply in,
// knowing its name only (a namespace labelled
// admission.gatekeeper.sh/ignore never reaches them: the binding or the
// webhook's namespaceSelector keeps it out).
func (a *AdmissionMutations) AppliesTo(namespace string) bool {
	sel, err := a.namespaces()
	if _, excluded := compile.MatchNamespace(a.ExcludedGlobs, namespace); excluded {
		return false
	}
	return err == nil && sel.Matches(labels.Set{corev1.LabelMetadataName: namespace})
}

// PatchOp is one operation of a JSON patch (RFC 6902): what an admission
// webhook answers with.
type PatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// labelOperations are the operations on which a kind's profile label is
// written, as the MutatingAdmissionPolicies' rules name them: a pod's on
// CREATE, a workload kind's (one with a policy) on CREATE and UPDATE, or
// CREATE only where its template cannot change; nil for any other kind.
func labelOperations(group, kind string) []string {
	if group == "" && kind == "Pod" {
		return []string{"CREATE"}
	}
	w, ok := WorkloadKindOf(group, kind)
	if !ok || w.Policy == "" {
		return nil
	}
	if w.CreateOnly {
		return []string{"CREATE"}
	}
	return []string{"CREATE", "UPDATE"}
}

// Mutate changes obj as accelc's admission mutations do under operation
// op (CREATE, UPDATE) in obj's namespace, and returns the JSON patch of
// the change against obj as it came (nil where nothing changes): the job
// queue labels of a new Job whose one template names a queued profile
// (by label, else by annotation), each it lacks, in the profile's teams'
// namespaces; the topology annotation of a new Job's template or a new
// pod (topology); then accelc's profile label from Open Data Hub's
// annotation on a pod, on each pod template of a workload kind (on the
// object for a kind whose controller copies its own labels to its pods, a
// Notebook), wherever there is no label already.
func (a *AdmissionMutations) Mutate(obj *unstructured.Unstructured, op string) []PatchOp {
	if a.ProfileLabel == "" || !a.AppliesTo(obj.GetNamespace()) {
		return nil
	}
	var patch []PatchOp
	gvk := obj.GroupVersionKind()
	if muts := a.JobQueues[gvk.Group+"/"+gvk.Kind]; len(muts) > 0 && op == "CREATE" {
		if w, ok := WorkloadKindOf(gvk.Group, gvk.Kind); ok && len(w.Templates) == 1 {
			md := append(slices.Clone(w.Templates[0].Path), "metadata")
			profile, ok, _ := unstructured.NestedString(obj.Object, append(slices.Clone(md), "labels", a.ProfileLabel)...)
			if !ok {
				profile, _, _ = unstructured.NestedString(obj.Object, append(slices.Clone(md), "annotations", ProfileAnnotation)...)
			}
			for _, g := range muts {
				if g.Profile != profile || !slices.Contains(g.Namespaces, obj.GetNamespace()) {
					continue
				}
				for _, k := range slices.Sorted(maps.Keys(g.Labels)) {
					patch = addLabelOnce(obj.Object, nil, k, g.Labels[k], patch)
				}
			}
		}
	}
	if len(a.Topology) > 0 && op == "CREATE" {
		switch {
		case gvk.Group == "batch" && gvk.Kind == "Job":
			patch = a.topology(obj.Object, []string{"spec", "template"}, jobProfileNames(a.ProfileLabel), patch)
		case gvk.Group == "" && gvk.Kind == "Pod":
			patch = a.topology(obj.Object, nil, podProfileNames(a.ProfileLabel), patch)
		}
	}
	if !slices.Contains(labelOperations(gvk.Group, gvk.Kind), op) {
		return patch
	}
	if gvk.Group == "" && gvk.Kind == "Pod" {
		return a.labelFromAnnotation(obj.Object, nil, patch)
	}
	w, _ := WorkloadKindOf(gvk.Group, gvk.Kind)
	if w.ObjectLabels {
		return a.labelFromAnnotation(obj.Object, nil, patch)
	}
	for _, t := range w.Templates {
		if _, ok, _ := unstructured.NestedMap(obj.Object, t.Path...); ok {
			patch = a.labelFromAnnotation(obj.Object, t.Path, patch)
		}
	}
	return patch
}

// topology gives the pod or Job's template at path (nil for the object
// itself) the topology annotation of the profile the object names at one
// of names, unless the pod or template has one of Kueue's topology
// annotations already: the user's choice, and Kueue refuses a second.
func (a *AdmissionMutations) topology(obj map[string]any, path []string, names [][]string, patch []PatchOp) []PatchOp {
	have, _, _ := unstructured.NestedStringMap(obj, append(slices.Clone(path), "metadata", "annotations")...)
	if slices.ContainsFunc(compile.TopologyAnnotations, func(k string) bool { _, ok := have[k]; return ok }) {
		return patch
	}
	// The first profile named: a Job whose label and annotation name two
	// gets one annotation, as the policies' mutations give it (each sees
	// the one before it wrote).
	for _, t := range a.Topology {
		if slices.ContainsFunc(names, func(at []string) bool {
			v, ok, _ := unstructured.NestedString(obj, at...)
			return ok && v == t.Profile
		}) {
			return addKeyOnce(obj, path, "annotations", t.Key, t.Level, patch)
		}
	}
	return patch
}

// labelFromAnnotation gives the object or template at path the profile
// label its annotation names, unless it has the label.
func (a *AdmissionMutations) labelFromAnnotation(obj map[string]any, path []string, patch []PatchOp) []PatchOp {
	md := append(slices.Clone(path), "metadata")
	name, ok, _ := unstructured.NestedString(obj, append(slices.Clone(md), "annotations", ProfileAnnotation)...)
	if !ok {
		return patch
	}
	return addLabelOnce(obj, path, a.ProfileLabel, name, patch)
}

// addLabelOnce sets label key to value on the metadata of the object or
// template at path, unless it has the key, and appends the patch of it.
func addLabelOnce(obj map[string]any, path []string, key, value string, patch []PatchOp) []PatchOp {
	return addKeyOnce(obj, path, "labels", key, value, patch)
}

// addKeyOnce sets key to value in the metadata map field (labels,
// annotations) of the object or template at path, unless it has the key,
// and appends the patch of it: the one key where the map exists, else the
// map, else (a template written without metadata) the metadata.
func addKeyOnce(obj map[string]any, path []string, field, key, value string, patch []PatchOp) []PatchOp {
	md := append(slices.Clone(path), "metadata")
	at := append(slices.Clone(md), field)
	if have, ok, _ := unstructured.NestedFieldNoCopy(obj, at...); ok && have != nil {
		if m, isMap := have.(map[string]any); isMap {
			if _, has := m[key]; has {
				return patch
			}
			m[key] = value
			return append(patch, PatchOp{Op: "add", Path: jsonPointer(at) + "/" + escapePointer(key), Value: value})
		}
	}
	if have, ok, _ := unstructured.NestedFieldNoCopy(obj, md...); !ok || have == nil {
		_ = unstructured.SetNestedField(obj, map[string]any{field: map[string]any{key: value}}, md...)
		return append(patch, PatchOp{Op: "add", Path: jsonPointer(md), Value: map[string]any{field: map[string]any{key: value}}})
	}
	_ = unstructured.SetNestedField(obj, map[string]any{key: value}, at...)
	return append(patch, PatchOp{Op: "add", Path: jsonPointer(at), Value: map[string]any{key: value}})
}

// jsonPointer is a field path as a JSON pointer (RFC 6901).
func jsonPointer(path []string) string {
	var b strings.Builder
	for _, p := range path {
		b.WriteString("/" + escapePointer(p))
	}
	return b.String()
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
