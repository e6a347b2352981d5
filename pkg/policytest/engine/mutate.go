package engine

// The mutating admission policies of a rendered tree, applied to objects.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/open-policy-agent/gatekeeper/v3/pkg/gator/expand"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/gator/reader"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/render"
)

// Mutator applies a rendered tree's mutators with Gatekeeper's own
// expander (the code behind `gator expand`), after the effect of accelc's
// MutatingAdmissionPolicy, which the API server applies before any
// webhook: a pod that names its profile only by Open Data Hub's annotation
// gets accelc's profile label. (The end-to-end test runs the policy
// itself on a real API server.)
//
// The job queue policy (accelc-job-queue) is read from its rendered
// expressions (render.ReadGangLabelPatch): a new Job whose template names
// a queued profile gets the profile's LocalQueue and priority labels it
// lacks (TestJobGang runs the policy itself on a real API server). The
// matchConditions of Gatekeeper's installation are not modelled
// (render.GatekeeperInstallValues): every request here is judged,
// Kueue's manager's pod UPDATEs and UPDATEs that change nothing the
// policies read included, which the installed webhook does not receive.
type Mutator struct {
	expander     *expand.Expander
	profileLabel string
	// policyNamespaces selects, by the namespace's name label, where the
	// policies' bindings apply (the namespaces that deny).
	policyNamespaces labels.Selector
	// policyOperations are, by resource, the operations the
	// MutatingAdmissionPolicies' matchConstraints name: a pod's and a
	// Job's template are labelled on CREATE only, as they cannot change.
	policyOperations map[schema.GroupResource][]string
	// MutateUpdates says that Gatekeeper's mutating webhook receives
	// UPDATEs too (its default installation). accelc's installation
	// (docs/scale.md) registers it for CREATE only: its mutators give a
	// new pod what its profile needs, and on the UPDATE of a running pod
	// made before deny they would change what a pod's UPDATE may not (its
	// node affinity), so the API server would refuse its controllers'
	// updates. Expansions are mutated either way: Gatekeeper's validating
	// webhook mutates them itself.
	MutateUpdates bool
	// kueue selects the namespaces whose pods Kueue's pod webhook
	// queues: the managedJobsNamespaceSelector of the tree's Kueue
	// Configuration fragment; nil when the tree queues nothing.
	kueue labels.Selector
	// kueueJobKinds are, by "<group>/<Kind>", the kinds whose job
	// integration the fragment turns on: Kueue's pod webhook leaves the
	// pods they own ungated.
	kueueJobKinds map[string]bool
	// jobQueues are the job queue policies' mutations, by the kind they
	// label ("<group>/<Kind>").
	jobQueues map[string][]render.GangLabels
}

// NewMutator loads the tree's mutators and ExpansionTemplates once.
// Mutators match by namespace, so it takes the namespaces of the objects
// it will mutate.
func NewMutator(tree render.Tree, namespaces []string) (*Mutator, error) {
	var resources []*unstructured.Unstructured
	for _, p := range tree.Paths() {
		if !strings.HasPrefix(p, "mutations/") && !strings.HasPrefix(p, "policies/expansiontemplate-") {
			continue
		}
		if strings.HasSuffix(p, "kustomization.yaml") {
			continue
		}
		u, err := reader.ReadUnstructured(tree[p])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		resources = append(resources, u)
	}
	for _, ns := range namespaces {
		nsObj := &unstructured.Unstructured{}
		nsObj.SetAPIVersion("v1")
		nsObj.SetKind("Namespace")
		nsObj.SetName(ns)
		resources = append(resources, nsObj)
	}
	er, err := expand.NewExpander(resources)
	if err != nil {
		return nil, err
	}
	scope, err := policyNamespaces(tree)
	if err != nil {
		return nil, err
	}
	ops, err := policyOperations(tree)
	if err != nil {
		return nil, err
	}
	kueue, jobKinds, err := kueueConfig(tree)
	if err != nil {
		return nil, err
	}
	jobQueues, err := jobQueuePolicies(tree)
	if err != nil {
		return nil, err
	}
	return &Mutator{expander: er, profileLabel: profileLabel(tree), policyNamespaces: scope, policyOperations: ops, kueue: kueue, kueueJobKinds: jobKinds, jobQueues: jobQueues}, nil
}

// jobQueuePolicies reads the tree's job queue policies (one per
// render.KueueJobFrameworks kind) back into what their mutations do.
func jobQueuePolicies(tree render.Tree) (map[string][]render.GangLabels, error) {
	out := map[string][]render.GangLabels{}
	for _, p := range tree.Paths() {
		if !strings.HasPrefix(p, "mutations/mutatingadmissionpolicy-") {
			continue
		}
		var mp admissionregistrationv1.MutatingAdmissionPolicy
		if err := yaml.Unmarshal(tree[p], &mp); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		i := slices.IndexFunc(render.KueueJobFrameworks, func(f render.KueueJobFramework) bool { return render.JobQueuePolicyName(f) == mp.Name })
		if i < 0 {
			continue
		}
		f := render.KueueJobFrameworks[i]
		for i, mu := range mp.Spec.Mutations {
			if mu.JSONPatch == nil {
				return nil, fmt.Errorf("%s: mutation %d is not a JSON patch", p, i)
			}
			g, ok := render.ReadGangLabelPatch(mu.JSONPatch.Expression)
			if !ok {
				return nil, fmt.Errorf("%s: mutation %d: not an expression of the job queue policy: %s", p, i, mu.JSONPatch.Expression)
			}
			out[f.Group+"/"+f.Kind] = append(out[f.Group+"/"+f.Kind], g)
		}
	}
	return out, nil
}

// labelJobQueue does what the job queue policy does to an object of one
// of its kinds under operation op (CREATE only): the labels of the mutation for the profile its one
// pod template names (label, else annotation) and its namespace, each
// it does not have.
func (m *Mutator) labelJobQueue(obj *unstructured.Unstructured, op string) {
	gvk := obj.GroupVersionKind()
	muts := m.jobQueues[gvk.Group+"/"+gvk.Kind]
	if len(muts) == 0 || op != string(admissionregistrationv1.Create) || !m.policyNamespaces.Matches(labels.Set{corev1.LabelMetadataName: obj.GetNamespace()}) {
		return
	}
	w, ok := render.WorkloadKindOf(gvk.Group, gvk.Kind)
	if !ok || len(w.Templates) != 1 {
		return
	}
	md := append(append([]string{}, w.Templates[0].Path...), "metadata")
	profile, ok, _ := unstructured.NestedString(obj.Object, append(append([]string{}, md...), "labels", m.profileLabel)...)
	if !ok {
		profile, _, _ = unstructured.NestedString(obj.Object, append(append([]string{}, md...), "annotations", render.ProfileAnnotation)...)
	}
	for _, g := range muts {
		if g.Profile != profile || !slices.Contains(g.Namespaces, obj.GetNamespace()) {
			continue
		}
		have := obj.GetLabels()
		if have == nil {
			have = map[string]string{}
		}
		for k, v := range g.Labels {
			if _, ok := have[k]; !ok {
				have[k] = v
			}
		}
		obj.SetLabels(have)
	}
}

// policyOperations are the operations of the tree's
// MutatingAdmissionPolicies' resource rules, by the resources they name.
func policyOperations(tree render.Tree) (map[schema.GroupResource][]string, error) {
	ops := map[schema.GroupResource][]string{}
	for _, p := range tree.Paths() {
		if !strings.HasPrefix(p, "mutations/mutatingadmissionpolicy-") {
			continue
		}
		var mp admissionregistrationv1.MutatingAdmissionPolicy
		if err := yaml.Unmarshal(tree[p], &mp); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if mp.Spec.MatchConstraints == nil {
			continue
		}
		for _, rule := range mp.Spec.MatchConstraints.ResourceRules {
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					gr := schema.GroupResource{Group: g, Resource: res}
					for _, op := range rule.Operations {
						ops[gr] = append(ops[gr], string(op))
					}
				}
			}
		}
	}
	return ops, nil
}

// policyApplies reports whether a MutatingAdmissionPolicy of the tree
// matches obj's resource under operation op.
func (m *Mutator) policyApplies(obj *unstructured.Unstructured, op string) bool {
	gvk := obj.GroupVersionKind()
	ops := m.policyOperations[schema.GroupResource{Group: gvk.Group, Resource: resourceOf(gvk)}]
	return slices.Contains(ops, op) || slices.Contains(ops, string(admissionregistrationv1.OperationAll))
}

// policyNamespaces is the namespaceSelector of the tree's
// MutatingAdmissionPolicyBindings (accelc gives them all the same), as a
// selector over a namespace's labels; everything when they have none.
func policyNamespaces(tree render.Tree) (labels.Selector, error) {
	for _, p := range tree.Paths() {
		if !strings.HasPrefix(p, "mutations/mutatingadmissionpolicybinding-") {
			continue
		}
		var b admissionregistrationv1.MutatingAdmissionPolicyBinding
		if err := yaml.Unmarshal(tree[p], &b); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if b.Spec.MatchResources == nil || b.Spec.MatchResources.NamespaceSelector == nil {
			return labels.Everything(), nil
		}
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.MatchResources.NamespaceSelector)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		return sel, nil
	}
	return labels.Everything(), nil
}

// Mutate returns an object as the API server stores it after accelc's
// MutatingAdmissionPolicies and Gatekeeper's mutators (MutateObject).
func (m *Mutator) Mutate(object []byte) ([]byte, error) {
	obj, err := reader.ReadUnstructured(object)
	if err != nil {
		return nil, err
	}
	out, err := m.MutateObject(obj)
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(out.Object)
}

// MutateObject changes a decoded object as admission does on CREATE: a
// pod labelled by the profile policy and mutated by Gatekeeper; a
// workload's templates labelled by the workload policy and each template
// that an ExpansionTemplate covers changed as the pod it makes will be
// (what Gatekeeper's expansion shows the validation), so that judging
// the workload with its expansions judges the pods its controllers make.
// A Notebook is labelled itself; list templates are left as written.
func (m *Mutator) MutateObject(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	m.labelJobQueue(obj, string(admissionregistrationv1.Create))
	m.labelProfile(obj, string(admissionregistrationv1.Create))
	w, isWorkload := render.WorkloadKindOf(obj.GroupVersionKind().Group, obj.GetKind())
	if isWorkload && w.ObjectLabels {
		return obj, nil
	}
	resultants, err := m.expander.Expand(obj)
	if err != nil {
		return nil, err
	}
	if !isWorkload {
		return obj, nil
	}
	for _, res := range resultants {
		i := slices.IndexFunc(w.Templates, func(t render.PodTemplate) bool { return t.Expansion == res.TemplateName })
		if i < 0 {
			return nil, fmt.Errorf("%s %s: ExpansionTemplate %s is not one of the kind's templates", obj.GetKind(), obj.GetName(), res.TemplateName)
		}
		md, _, _ := unstructured.NestedMap(res.Obj.Object, "metadata")
		delete(md, "name")
		delete(md, "namespace")
		tmpl := map[string]any{"spec": res.Obj.Object["spec"]}
		if len(md) > 0 {
			tmpl["metadata"] = md
		}
		if err := unstructured.SetNestedField(obj.Object, tmpl, w.Templates[i].Path...); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// profileLabel is accelc's profile label (<labelPrefix>/profile, the
// prefix read from the admission constraint), which the tree's
// MutatingAdmissionPolicy copies the profile annotation into; "" when the
// tree has no such policy.
func profileLabel(tree render.Tree) string {
	hasPolicy, prefix := false, ""
	for _, p := range tree.Paths() {
		switch {
		case strings.HasPrefix(p, "mutations/mutatingadmissionpolicy-"):
			hasPolicy = true
		case strings.HasPrefix(p, render.DirConstraints+"/") && !strings.HasSuffix(p, "kustomization.yaml"):
			var c struct {
				Spec struct {
					Parameters struct {
						LabelPrefix string `json:"labelPrefix"`
					} `json:"parameters"`
				} `json:"spec"`
			}
			if yaml.Unmarshal(tree[p], &c) == nil && c.Spec.Parameters.LabelPrefix != "" {
				prefix = c.Spec.Parameters.LabelPrefix
			}
		}
	}
	if !hasPolicy || prefix == "" {
		return ""
	}
	return prefix + "/profile"
}

// labelProfile does what accelc's MutatingAdmissionPolicies do under
// operation op, where one matches it: on a pod, and on each pod template
// of a workload kind at the paths the workload policy patches
// (render.WorkloadKinds), the profile annotation, where there is no
// profile label, becomes the label; a kind whose controller copies its
// own labels to its pods (a Notebook) is labelled from its own
// annotation.
func (m *Mutator) labelProfile(obj *unstructured.Unstructured, op string) {
	if m.profileLabel == "" || !m.policyApplies(obj, op) || !m.policyNamespaces.Matches(labels.Set{corev1.LabelMetadataName: obj.GetNamespace()}) {
		return
	}
	if obj.GetKind() == "Pod" && obj.GroupVersionKind().Group == "" {
		labelFromAnnotation(obj.Object, m.profileLabel)
		return
	}
	w, ok := render.WorkloadKindOf(obj.GroupVersionKind().Group, obj.GetKind())
	if !ok {
		return
	}
	if w.ObjectLabels {
		labelFromAnnotation(obj.Object, m.profileLabel)
		return
	}
	for _, t := range w.Templates {
		if tmpl, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, t.Path...); ok {
			if tmpl, ok := tmpl.(map[string]any); ok {
				labelFromAnnotation(tmpl, m.profileLabel)
			}
		}
	}
}

// labelFromAnnotation gives obj (a pod, a pod template or a workload) the
// profile label its annotation names, unless it has the label.
func labelFromAnnotation(obj map[string]any, label string) {
	name, ok, _ := unstructured.NestedString(obj, "metadata", "annotations", render.ProfileAnnotation)
	if !ok {
		return
	}
	if _, has, _ := unstructured.NestedFieldNoCopy(obj, "metadata", "labels", label); has {
		return
	}
	_ = unstructured.SetNestedField(obj, name, "metadata", "labels", label)
}
