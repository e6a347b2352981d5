package render

// Recording pods' types: the objects that let the catalog service
// (accelc serve --record-types) add the type annotation to a bound pod
// and change nothing else.

import (
	"fmt"
	"strconv"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// recordTypesName names the objects that let the catalog service record
// pods' types.
const recordTypesName = CatalogServiceName + "-record-types"

// recordTypesObjects let the catalog service (accelc serve --record-types)
// write the type a bound pod got in its <labelPrefix>/type annotation,
// and nothing else: a ClusterRole of its own that may only patch pods
// (RBAC can name neither a field nor an annotation), and a
// ValidatingAdmissionPolicy, matched on the service account's requests
// alone, that lets such an UPDATE add that one annotation to a pod that
// has none and change nothing else: spec, labels, finalizers, owners and
// every other annotation as they were. Which value it may add is
// Gatekeeper's to judge (the annotations policy: the node's type).
func recordTypesObjects(m *compile.Model, labels map[string]string) []Body {
	cs := m.Cluster.CatalogService
	user := "system:serviceaccount:" + cs.Namespace + ":" + CatalogServiceName
	role := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: recordTypesName, Labels: labels},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"patch"}}},
	}
	binding := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: recordTypesName, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: recordTypesName},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: CatalogServiceName, Namespace: cs.Namespace}},
	}
	key := strconv.Quote(m.Cluster.TypeLabel())
	fail := admissionv1.Fail
	policy := &admissionv1.ValidatingAdmissionPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicy"},
		ObjectMeta: metav1.ObjectMeta{Name: recordTypesName, Labels: labels},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionv1.MatchResources{ResourceRules: []admissionv1.NamedRuleWithOperations{{
				RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				},
			}}},
			MatchConditions: []admissionv1.MatchCondition{{
				Name:       "catalog-service",
				Expression: fmt.Sprintf("request.userInfo.username == %s", strconv.Quote(user)),
			}},
			Variables: []admissionv1.Variable{
				{Name: "annotations", Expression: "has(object.metadata.annotations) ? object.metadata.annotations : {}"},
				{Name: "oldAnnotations", Expression: "has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}"},
			},
			Validations: []admissionv1.Validation{
				{
					Expression: fmt.Sprintf("!(%[1]s in variables.oldAnnotations) && %[1]s in variables.annotations", key),
					Message:    fmt.Sprintf("accelc serve --record-types may only add the %s annotation to a pod that has none", m.Cluster.TypeLabel()),
				},
				{
					Expression: fmt.Sprintf("variables.annotations.all(k, k == %[1]s || (k in variables.oldAnnotations && variables.oldAnnotations[k] == variables.annotations[k])) && variables.oldAnnotations.all(k, k in variables.annotations)", key),
					Message:    fmt.Sprintf("accelc serve --record-types may change no annotation but %s", m.Cluster.TypeLabel()),
				},
				{
					Expression: "object.spec == oldObject.spec",
					Message:    "accelc serve --record-types may not change a pod's spec",
				},
				{
					Expression: "(has(object.metadata.labels) ? object.metadata.labels : {}) == (has(oldObject.metadata.labels) ? oldObject.metadata.labels : {})",
					Message:    "accelc serve --record-types may not change a pod's labels",
				},
				{
					Expression: "(has(object.metadata.finalizers) ? object.metadata.finalizers : []) == (has(oldObject.metadata.finalizers) ? oldObject.metadata.finalizers : []) && " +
						"(has(object.metadata.ownerReferences) ? object.metadata.ownerReferences : []) == (has(oldObject.metadata.ownerReferences) ? oldObject.metadata.ownerReferences : [])",
					Message: "accelc serve --record-types may not change a pod's finalizers or owners",
				},
			},
		},
	}
	policyBinding := &admissionv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingAdmissionPolicyBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: recordTypesName, Labels: labels},
		Spec: admissionv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        recordTypesName,
			ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny},
		},
	}
	return []Body{role, binding, policy, policyBinding}
}
