package render

// Gatekeeper's admission constraint and template, and the parameters they
// take from the model and inventory.

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/policies"
)

// ConstraintName is the name of accelc's admission constraint.
const ConstraintName = "accelc"

// policyObjects renders the admission ConstraintTemplate (every policy in
// one template: policies.AdmissionTemplate) and its Constraint,
// the SyncSet that gives policies live Nodes and HardwareProfiles, and
// ExpansionTemplates so workload templates are checked as the pods they
// create.
//
// Parameters stay small whatever the cluster's size. Gatekeeper converts a
// constraint's whole parameters on every evaluation, and decodes the
// object under review again for every constraint it matches against, so
// accelc keeps one template and one constraint with fixed-size parameters,
// and everything that grows — HardwareProfiles, Nodes, the namespace →
// team map — is synced into data.inventory and looked up by path.
func policyObjects(m *compile.Model, inv *inventory.Inventory) ([]Object, error) {
	template, err := admissionTemplate(m)
	if err != nil {
		return nil, err
	}
	out := []Object{{Dir: "policies", Body: template}}
	for _, c := range admissionConstraints(m, inv) {
		out = append(out, Object{Dir: DirConstraints, Body: c})
	}
	synced := []gvk{
		{Group: "", Version: "v1", Kind: "Node"},
		{Group: "infrastructure.opendatahub.io", Version: "v1", Kind: "HardwareProfile"},
		{Group: EntitlementGroup, Version: EntitlementVersion, Kind: "NamespaceEntitlement"},
		{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"},
	}
	if m.Cluster.DRA != nil {
		// A pod that names a ResourceClaim is judged by the claim as it
		// is now, whichever version it was written in (the API server
		// serves every claim as v1).
		synced = append(synced, gvk{Group: "resource.k8s.io", Version: "v1", Kind: "ResourceClaim"})
	}
	out = append(out, Object{
		Dir: "policies",
		Body: &syncSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "syncset.gatekeeper.sh/v1alpha1", Kind: "SyncSet"},
			ObjectMeta: objectMeta(m.Cluster.Name, "", "accelc"),
			Spec:       syncSetSpec{GVKs: synced},
		},
	})
	// Workload templates are checked as the pods they make.
	out = append(out, expansionTemplates(m)...)
	return out, nil
}

// admissionConstraints are the admission constraints, one per stage in
// use: ConstraintName at the cluster's enforcement action, over every
// namespace but those of the teams at another stage, and
// ConstraintName-<action> over the namespaces of the teams at that
// action. Their namespaces are disjoint, so each pod is judged once, at
// its team's stage. The constraints of stages that do not deny forecast
// the mutations their namespaces do not get.
func admissionConstraints(m *compile.Model, inv *inventory.Inventory) []*admissionConstraint {
	params := admissionParams(m, inv)
	constraint := func(name, action string, namespaces, excluded []string) *admissionConstraint {
		p := params
		p.Forecast = action != compile.Deny
		return &admissionConstraint{
			TypeMeta:   metav1.TypeMeta{APIVersion: "constraints.gatekeeper.sh/v1beta1", Kind: policies.Admission.Kind},
			ObjectMeta: objectMeta(m.Cluster.Name, "", name),
			Spec: admissionConstraintSpec{
				EnforcementAction: action,
				Match: match{
					Kinds:              admissionKinds(),
					Scope:              "Namespaced",
					ExcludedNamespaces: nonNil(excluded),
					Namespaces:         namespaces,
				},
				Parameters: p,
			},
		}
	}
	staged := m.Staged()
	excluded := slices.Clone(m.Cluster.ExcludedNamespaces)
	for _, a := range slices.Sorted(maps.Keys(staged)) {
		excluded = append(excluded, staged[a]...)
	}
	out := []*admissionConstraint{constraint(ConstraintName, m.Cluster.Enforcement, nil, excluded)}
	for _, a := range slices.Sorted(maps.Keys(staged)) {
		out = append(out, constraint(ConstraintName+"-"+a, a, staged[a], m.Cluster.ExcludedNamespaces))
	}
	return out
}

// admissionTemplate is policies.AdmissionTemplate with accelc's labels.
// The policies package builds the template as a map; it is converted into
// the typed template field by field, so a field render does not know of
// is an error here rather than left out of the tree.
func admissionTemplate(m *compile.Model) (*constraintTemplate, error) {
	var t constraintTemplate
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(policies.AdmissionTemplate(), &t, true); err != nil {
		return nil, fmt.Errorf("the admission ConstraintTemplate: %w", err)
	}
	t.Labels = managedLabels(m.Cluster.Name)
	return &t, nil
}

// admissionKinds are policies.AdmissionKinds as the constraint holds them.
func admissionKinds() []matchKinds {
	var out []matchKinds
	for _, k := range policies.AdmissionKinds {
		out = append(out, matchKinds{APIGroups: k.APIGroups, Kinds: k.Kinds})
	}
	return out
}

// VendorTaintKeys are the taints accelerator vendors' operators and cloud
// node pools put on accelerator nodes: GKE taints TPU node pools
// google.com/tpu, and EKS Neuron node groups are tainted
// aws.amazon.com/neuron.
var VendorTaintKeys = []string{"nvidia.com/gpu", "amd.com/gpu", "habana.ai/gaudi", "gpu.intel.com/i915", "gpu.intel.com/xe", "google.com/tpu", "aws.amazon.com/neuron"}

// admissionParameters are the admission constraint's parameters, one
// field per name in policies.AdmissionParams. A set is a map to true, as
// the policies look its members up.
type admissionParameters struct {
	TypeLabel             string          `json:"typeLabel"`
	LabelPrefix           string          `json:"labelPrefix"`
	ProfileNamespace      string          `json:"profileNamespace"`
	GenericNamespaces     map[string]bool `json:"genericNamespaces"`
	TaintKeys             map[string]bool `json:"taintKeys"`
	ExtraResourcePrefixes []string        `json:"extraResourcePrefixes"`
	DeviceRuntimeClasses  map[string]bool `json:"deviceRuntimeClasses"`
	// PodControllers are, by "<group>/<Kind>", the users that make the
	// pods of the kinds Kueue admits whole; KueueManagers Kueue's own.
	PodControllers map[string][]string `json:"podControllers"`
	KueueManagers  map[string]bool     `json:"kueueManagers"`
	// KueueJobKinds are, by "<group>/<Kind>", the kinds whose Kueue job
	// integration accelc's Kueue Configuration turns on
	// (KueueJobFrameworks): Kueue's pod webhook leaves their pods ungated
	// (the owner's Workload accounts for them). It gates the pods of every
	// other owner that joins a queue.
	KueueJobKinds map[string]bool `json:"kueueJobKinds"`
	// KueueNamespaces are the namespaces Kueue's webhooks manage
	// (KueueNamespaces: its Configuration's managedJobsNamespaceSelector):
	// its pod webhook gates every pod made there that joins a LocalQueue.
	KueueNamespaces map[string]bool `json:"kueueNamespaces"`
	// LabelledFromQueue, set only before Kubernetes 1.36 (no
	// MutatingAdmissionPolicies), are by "<group>/<Kind>" the kinds whose
	// one pod template Gatekeeper's mutators label from the profile's
	// LocalQueue (queueLabelledKinds): a template of any other kind must
	// carry the profile label itself.
	LabelledFromQueue map[string]bool `json:"labelledFromQueue,omitempty"`
	Forecast          bool            `json:"forecast"`
}

// admissionParams are the admission constraint's parameters.
func admissionParams(m *compile.Model, inv *inventory.Inventory) admissionParameters {
	// Taints that keep pods off accelerator nodes: the vendors', the
	// profiles' and pools', and those the inventory's accelerator nodes
	// carry. Only a profile's pods may tolerate them.
	taintKeys := map[string]bool{}
	for _, k := range VendorTaintKeys {
		taintKeys[k] = true
	}
	if inv != nil {
		for _, n := range inv.Nodes {
			for _, t := range n.Taints {
				taintKeys[t.Key] = true
			}
		}
	}
	for i := range m.Profiles {
		for _, t := range m.Profiles[i].Tolerations {
			if t.Key != "" {
				taintKeys[t.Key] = true
			}
		}
	}
	for _, pool := range m.NodePools {
		if pool.Taint != nil {
			taintKeys[pool.Taint.Key] = true
		}
	}
	runtimeClasses := map[string]bool{}
	for _, rc := range m.Cluster.DeviceRuntimeClasses {
		runtimeClasses[rc] = true
	}
	podControllers := map[string][]string{}
	for kind, users := range m.Cluster.KueueIdentities.PodControllers {
		// [] (never null) for a kind whose pods nobody makes directly.
		podControllers[kind] = append([]string{}, slices.Sorted(slices.Values(users))...)
	}
	managers := map[string]bool{}
	for _, u := range m.Cluster.KueueIdentities.Manager {
		managers[u] = true
	}
	generic := map[string]bool{}
	for _, ns := range m.Cluster.GenericGPUNamespaces {
		generic[ns] = true
	}
	// Accelerator resources beyond the policies' base prefixes: the
	// catalog classes', the GPU vendors' whole domains, and every extended
	// resource a node advertises that the CUE does not declare harmless
	// (cluster.nonAcceleratorResources; vet asks about those it does not
	// know), each unless a prefix already covers it.
	var prefixes []string
	covered := func(r string) bool {
		return slices.ContainsFunc(policies.BaseResourcePrefixes, func(p string) bool { return strings.HasPrefix(r, p) }) ||
			slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(r, p) })
	}
	var candidates []string
	for _, c := range m.Catalog.Classes() {
		candidates = append(candidates, c.ResourceName)
	}
	candidates = append(candidates, inventory.VendorPrefixes...)
	if inv != nil {
		for _, r := range slices.Sorted(maps.Keys(inv.Resources)) {
			if !m.Cluster.NonAccelerator(r) {
				candidates = append(candidates, r)
			}
		}
	}
	// Shortest first, so that a domain covers the names under it.
	slices.SortStableFunc(candidates, func(a, b string) int { return len(a) - len(b) })
	for _, r := range candidates {
		if r != "" && !covered(r) {
			prefixes = append(prefixes, r)
		}
	}
	extraList := nonNil(prefixes)
	sort.Strings(extraList)
	kueueNamespaces := map[string]bool{}
	for _, ns := range KueueNamespaces(m) {
		kueueNamespaces[ns] = true
	}
	var fromQueue map[string]bool
	if m.Cluster.LabelsFromQueue() {
		fromQueue = map[string]bool{}
		for _, w := range queueLabelledKinds() {
			fromQueue[w.Group+"/"+w.Kind] = true
		}
	}
	return admissionParameters{
		LabelledFromQueue:     fromQueue,
		TypeLabel:             m.Cluster.TypeLabel(),
		LabelPrefix:           m.Cluster.LabelPrefix,
		ProfileNamespace:      m.Cluster.ProfileNamespace,
		GenericNamespaces:     generic,
		TaintKeys:             taintKeys,
		ExtraResourcePrefixes: extraList,
		DeviceRuntimeClasses:  runtimeClasses,
		PodControllers:        podControllers,
		KueueManagers:         managers,
		KueueJobKinds:         kueueJobKinds(),
		KueueNamespaces:       kueueNamespaces,
	}
}
