package render_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// TestRecordTypes: catalogService.recordTypes runs the service with
// --record-types and gives it a ClusterRole of its own that may only patch
// pods, and a ValidatingAdmissionPolicy bound to deny that matches its
// service account's pod UPDATEs alone; the read-only ClusterRole is as it
// was. Without it, none of them.
func TestRecordTypes(t *testing.T) {
	const src = `package c

cluster: {
	name: "lab"
	catalogService: {image: "registry.example/accelc:v1", recordTypes: true}
}
profiles: big: {displayName: "Big", acceleratorTypes: ["nvidia-h100-80gb", "nvidia-a100-80gb"]}
teams: ml: {namespaces: ["ml"], acceleratorTypes: ["nvidia-h100-80gb", "nvidia-a100-80gb"]}
`
	m := loadCUE(t, src)
	objs, err := render.Render(m, &inventory.Inventory{})
	require.NoError(t, err)
	require.NoError(t, render.Validate(m, objs))
	tree, err := render.BuildTree("lab", objs, render.Provenance{})
	require.NoError(t, err)
	read := func(file string, v any) {
		t.Helper()
		b, ok := tree["catalog-service/"+file]
		require.True(t, ok, "catalog-service/%s is rendered", file)
		require.NoError(t, yaml.UnmarshalStrict(b, v))
	}
	var deploy appsv1.Deployment
	read("deployment-accelc-catalog.yaml", &deploy)
	assert.Contains(t, deploy.Spec.Template.Spec.Containers[0].Args, "--record-types")
	// Two replicas elect the one that writes on a Lease of their
	// namespace, which a Role of their own lets them hold.
	assert.Contains(t, deploy.Spec.Template.Spec.Containers[0].Args, "--leader-elect")
	var leases rbacv1.Role
	read("role-accelc-catalog-writer.yaml", &leases)
	assert.Equal(t, "accelc-system", leases.Namespace)
	assert.Equal(t, []rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"accelc-catalog-writer"}, Verbs: []string{"get", "update"}},
	}, leases.Rules)
	var leaseBinding rbacv1.RoleBinding
	read("rolebinding-accelc-catalog-writer.yaml", &leaseBinding)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "accelc-catalog", Namespace: "accelc-system"}}, leaseBinding.Subjects)

	var reader rbacv1.ClusterRole
	read("clusterrole-accelc-catalog.yaml", &reader)
	for _, r := range reader.Rules {
		assert.NotContains(t, r.Verbs, "patch", "the reading role stays read-only")
	}
	var role rbacv1.ClusterRole
	read("clusterrole-accelc-catalog-record-types.yaml", &role)
	assert.Equal(t, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"patch"}}}, role.Rules)
	var binding rbacv1.ClusterRoleBinding
	read("clusterrolebinding-accelc-catalog-record-types.yaml", &binding)
	assert.Equal(t, "accelc-catalog-record-types", binding.RoleRef.Name)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "accelc-catalog", Namespace: "accelc-system"}}, binding.Subjects)

	var vap admissionv1.ValidatingAdmissionPolicy
	read("validatingadmissionpolicy-accelc-catalog-record-types.yaml", &vap)
	require.Len(t, vap.Spec.MatchConditions, 1)
	assert.Equal(t, `request.userInfo.username == "system:serviceaccount:accelc-system:accelc-catalog"`, vap.Spec.MatchConditions[0].Expression)
	assert.Equal(t, admissionv1.Fail, *vap.Spec.FailurePolicy)
	rule := vap.Spec.MatchConstraints.ResourceRules[0]
	assert.Equal(t, []admissionv1.OperationType{admissionv1.Update}, rule.Operations)
	assert.Equal(t, []string{"pods"}, rule.Resources)
	assert.Len(t, vap.Spec.Validations, 5)
	var vb admissionv1.ValidatingAdmissionPolicyBinding
	read("validatingadmissionpolicybinding-accelc-catalog-record-types.yaml", &vb)
	assert.Equal(t, vap.Name, vb.Spec.PolicyName)
	assert.Equal(t, []admissionv1.ValidationAction{admissionv1.Deny}, vb.Spec.ValidationActions)

	// Off by default.
	m = loadCUE(t, `package c

cluster: {
	name: "lab"
	catalogService: image: "registry.example/accelc:v1"
}
profiles: big: {displayName: "Big", acceleratorTypes: ["nvidia-h100-80gb"]}
`)
	objs, err = render.Render(m, &inventory.Inventory{})
	require.NoError(t, err)
	for _, o := range objs {
		assert.NotContains(t, o.Name(), "record-types", "%s %s", o.Kind(), o.Name())
		if d, ok := o.Body.(*appsv1.Deployment); ok {
			assert.NotContains(t, d.Spec.Template.Spec.Containers[0].Args, "--record-types")
		}
	}
}
