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
// On Kubernetes 1.36 no pod reaches Gatekeeper's mutating webhook: the
// API server applies accelc-pod-profile, a MutatingAdmissionPolicy
// translated from the same mutators (render.PodProfilePolicyName). The
// mutators stay the model of it here; TestPodProfilePolicy makes 616 pods
// of the four examples through a real API server with the policy and
// finds each as this Mutator leaves it.
//
// The job queue policy (accelc-job-queue) is read from its rendered
// expressions (render.ReadGangLabelPatches): a new Job whose template names
// a queued profile gets the profile's LocalQueue and priority labels it
// lacks (TestJobGang runs the policy itself on a real API server). The
// topology policies (accelc-job-topology, accelc-pod-topology) are not
// read on 1.36: they write only Kueue's pod-set topology annotations,
// which no validation reads (TestTopologyPolicies runs them). The
// matchConditions of Gatekeeper's installation are not modelled
// (render.GatekeeperInstallValues): every request here is judged,
// Kueue's manager's pod UPDATEs and UPDATEs that change nothing the
// policies read included, which the installed webhook does not receive.
type Mutator struct {
	expander *expand.Expander
	// admission is what accelc's admission mutations do (its
	// MutatingAdmissionPolicies on 1.36, its webhook before), read from
	// the tree: render.AdmissionMutations.Mutate is the webhook's own code.
	admission render.AdmissionMutations
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
	admission, err := admissionMutations(tree)
	if err != nil {
		return nil, err
	}
	kueue, jobKinds, err := kueueConfig(tree)
	if err != nil {
		return nil, err
	}
	return &Mutator{expander: er, admission: admission, kueue: kueue, kueueJobKinds: jobKinds}, nil
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
	m.admission.Mutate(obj, string(admissionregistrationv1.Create))
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

// admissionMutations reads what the tree's admission mutations do: from
// its MutatingAdmissionPolicies (Kubernetes 1.36) — the profile label
// (<labelPrefix>/profile, the prefix read from the admission
// constraint), their bindings' namespaceSelector (accelc gives them all
// the same) and the excluded globs of the constraint's match (their
// not-excluded match condition), the job queue policies' labels read
// back from their expressions (render.ReadGangLabelPatches) — or,
// before 1.36, from what accelc's webhook is given
// (render.AdmissionMutationsFile). Nothing where the tree has neither.
func admissionMutations(tree render.Tree) (render.AdmissionMutations, error) {
	if data, ok := tree[render.AdmissionMutationsFile]; ok {
		var cm corev1.ConfigMap
		if err := yaml.Unmarshal(data, &cm); err != nil {
			return render.AdmissionMutations{}, fmt.Errorf("%s: %w", render.AdmissionMutationsFile, err)
		}
		a, err := render.ParseAdmissionMutations([]byte(cm.Data[render.AdmissionMutationsKey]))
		if err != nil {
			return render.AdmissionMutations{}, fmt.Errorf("%s: %w", render.AdmissionMutationsFile, err)
		}
		return a, nil
	}
	var out render.AdmissionMutations
	hasPolicy, prefix := false, ""
	for _, p := range tree.Paths() {
		switch {
		case strings.HasPrefix(p, "mutations/mutatingadmissionpolicy-"):
			hasPolicy = true
			var mp admissionregistrationv1.MutatingAdmissionPolicy
			if err := yaml.Unmarshal(tree[p], &mp); err != nil {
				return out, fmt.Errorf("%s: %w", p, err)
			}
			i := slices.IndexFunc(render.KueueJobFrameworks, func(f render.KueueJobFramework) bool { return render.JobQueuePolicyName(f) == mp.Name })
			if i < 0 {
				continue
			}
			f := render.KueueJobFrameworks[i]
			for i, mu := range mp.Spec.Mutations {
				if mu.JSONPatch == nil {
					return out, fmt.Errorf("%s: mutation %d is not a JSON patch", p, i)
				}
				gs, ok := render.ReadGangLabelPatches(mu.JSONPatch.Expression)
				if !ok {
					return out, fmt.Errorf("%s: mutation %d: not an expression of the job queue policy: %s", p, i, mu.JSONPatch.Expression)
				}
				if out.JobQueues == nil {
					out.JobQueues = map[string][]render.GangLabels{}
				}
				out.JobQueues[f.Group+"/"+f.Kind] = append(out.JobQueues[f.Group+"/"+f.Kind], gs...)
			}
		case strings.HasPrefix(p, "mutations/mutatingadmissionpolicybinding-"):
			var b admissionregistrationv1.MutatingAdmissionPolicyBinding
			if err := yaml.Unmarshal(tree[p], &b); err != nil {
				return out, fmt.Errorf("%s: %w", p, err)
			}
			if b.Spec.MatchResources != nil && b.Spec.MatchResources.NamespaceSelector != nil {
				if _, err := metav1.LabelSelectorAsSelector(b.Spec.MatchResources.NamespaceSelector); err != nil {
					return out, fmt.Errorf("%s: %w", p, err)
				}
				out.NamespaceSelector = b.Spec.MatchResources.NamespaceSelector
			}
		case strings.HasPrefix(p, render.DirConstraints+"/") && !strings.HasSuffix(p, "kustomization.yaml"):
			var c struct {
				Spec struct {
					Match struct {
						ExcludedNamespaces []string `json:"excludedNamespaces"`
					} `json:"match"`
					Parameters struct {
						LabelPrefix string `json:"labelPrefix"`
					} `json:"parameters"`
				} `json:"spec"`
			}
			if yaml.Unmarshal(tree[p], &c) == nil && c.Spec.Parameters.LabelPrefix != "" {
				prefix = c.Spec.Parameters.LabelPrefix
				// The policies' not-excluded match condition, from the
				// same excludedNamespaces: the globs no selector says.
				_, out.ExcludedGlobs = render.SplitExcluded(c.Spec.Match.ExcludedNamespaces)
			}
		}
	}
	if !hasPolicy || prefix == "" {
		return render.AdmissionMutations{}, nil
	}
	out.ProfileLabel = prefix + "/profile"
	return out, nil
}
