package render

// Live descriptions: the annotation the dashboard shows, and the objects
// that let the catalog service (accelc serve --live-descriptions) write
// it on each HardwareProfile and nothing else.

import (
	"fmt"
	"slices"
	"strconv"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// DescriptionAnnotation is the HardwareProfile annotation Open Data Hub's
// dashboard shows under a profile's name where users pick one. With
// cluster.catalogService.liveDescriptions the catalog service writes it
// (server-side apply, field manager DescriptionFieldManager) and render
// leaves it out.
const DescriptionAnnotation = "opendatahub.io/description"

// DescriptionFieldManager is the field manager the catalog service
// applies the descriptions under: it owns that one annotation of each
// HardwareProfile, Flux's kustomize-controller the rest.
const DescriptionFieldManager = "accelc-serve"

// liveDescriptionsName names the objects that let the catalog service
// write the profiles' descriptions.
const liveDescriptionsName = CatalogServiceName + "-descriptions"

// liveDescriptionsObjects let the catalog service (accelc serve
// --live-descriptions) keep each HardwareProfile's description current,
// and nothing else: a Role in the profile namespace that may read the
// HardwareProfiles and patch only the ones accelc renders (by name), and
// a ValidatingAdmissionPolicy, matched on the service account's requests
// alone, that lets such an UPDATE change that one annotation and nothing
// else (spec, labels, finalizers, owners, every other annotation), and
// refuses it any CREATE: a server-side apply to a profile Flux has
// pruned would otherwise make a HardwareProfile of one annotation.
func liveDescriptionsObjects(m *compile.Model, labels map[string]string) []Body {
	cs := m.Cluster.CatalogService
	user := "system:serviceaccount:" + cs.Namespace + ":" + CatalogServiceName
	var names []string
	for i := range m.Profiles {
		names = append(names, m.Profiles[i].Name)
	}
	slices.Sort(names)
	group := []string{"infrastructure.opendatahub.io"}
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: metav1.ObjectMeta{Name: liveDescriptionsName, Namespace: m.Cluster.ProfileNamespace, Labels: labels},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: group, Resources: []string{"hardwareprofiles"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: group, Resources: []string{"hardwareprofiles"}, Verbs: []string{"patch"}, ResourceNames: names},
		},
	}
	binding := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: liveDescriptionsName, Namespace: m.Cluster.ProfileNamespace, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: liveDescriptionsName},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: CatalogServiceName, Namespace: cs.Namespace}},
	}
	key := strconv.Quote(DescriptionAnnotation)
	fail := admissionv1.Fail
	policy := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: liveDescriptionsName, Labels: labels},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: group, APIVersions: []string{"*"}, Resources: []string{"hardwareprofiles"}},
				},
			}}},
			MatchConditions: []admissionv1.MatchCondition{{
				Name:       "catalog-service",
				Expression: fmt.Sprintf("request.userInfo.username == %s", strconv.Quote(user)),
			}},
			Validations: []admissionv1.Validation{
				{
					Expression: "request.operation == 'UPDATE'",
					Message:    "accelc serve --live-descriptions may not create a HardwareProfile, only describe one Flux applied",
				},
				{
					Expression: fmt.Sprintf("variables.annotations.all(k, k == %[1]s || (k in variables.oldAnnotations && variables.oldAnnotations[k] == variables.annotations[k])) && variables.oldAnnotations.all(k, k == %[1]s || k in variables.annotations)", key),
					Message:    fmt.Sprintf("accelc serve --live-descriptions may change no annotation of a HardwareProfile but %s", DescriptionAnnotation),
				},
				{
					Expression: "oldObject == null || object.spec == oldObject.spec",
					Message:    "accelc serve --live-descriptions may not change a HardwareProfile's spec",
				},
				{
					Expression: "oldObject == null || (has(object.metadata.labels) ? object.metadata.labels : {}) == (has(oldObject.metadata.labels) ? oldObject.metadata.labels : {})",
					Message:    "accelc serve --live-descriptions may not change a HardwareProfile's labels",
				},
				{
					Expression: "oldObject == null || (has(object.metadata.finalizers) ? object.metadata.finalizers : []) == (has(oldObject.metadata.finalizers) ? oldObject.metadata.finalizers : []) && " +
						"(has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []) == (has(oldObject.metadata.ownerReferences) ? oldObject.metadata.ownerReferences : [])",
					Message: "accelc serve --live-descriptions may not change a HardwareProfile's finalizers or owners",
				},
			},
			// A CREATE has no oldObject: the first validation refuses it,
			// and the others hold for it.
			Variables: []admissionv1.Variable{
				{Name: "annotations", Expression: "has(object.metadata.annotations) ? object.metadata.annotations : {}"},
				{Name: "oldAnnotations", Expression: "oldObject != null && has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}"},
			},
		},
	}
	policyBinding := &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: liveDescriptionsName, Labels: labels},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        liveDescriptionsName,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	return []Body{role, binding, policy, policyBinding}
}
