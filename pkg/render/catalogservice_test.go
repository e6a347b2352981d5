package render_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// TestCatalogService: hetero-prod's catalog service passes Pod Security
// restricted as the API server's admission evaluates it (the upstream
// checks), may only read nodes, pods, ResourceSlices and (as the cluster
// uses Kueue) Kueue's Workloads, lets in only the
// namespaces named, and runs on the evaluated configuration, which
// compiles to hetero-prod's model.
func TestCatalogService(t *testing.T) {
	tree := renderExample(t, "hetero-prod")
	read := func(file string, v any) {
		t.Helper()
		b, ok := tree["catalog-service/"+file]
		require.True(t, ok, "catalog-service/%s is rendered", file)
		require.NoError(t, yaml.UnmarshalStrict(b, v))
	}
	var deploy appsv1.Deployment
	read("deployment-accelc-catalog.yaml", &deploy)
	eval, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	require.NoError(t, err)
	results := eval.EvaluatePod(api.LevelVersion{Level: api.LevelRestricted, Version: api.LatestVersion()}, &deploy.Spec.Template.ObjectMeta, &deploy.Spec.Template.Spec)
	for _, r := range results {
		assert.True(t, r.Allowed, "Pod Security restricted refuses the pod: %s: %s", r.ForbiddenReason, r.ForbiddenDetail)
	}
	c := deploy.Spec.Template.Spec.Containers[0]
	assert.Equal(t, "registry.example.com/accelc:v0.4.0", c.Image)
	assert.Equal(t, []string{"serve", "/etc/accelc/cluster", "--live", "--listen", "0.0.0.0:8080", "--reload", "10s"}, c.Args)
	assert.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
	assert.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)

	var ns corev1.Namespace
	read("namespace-accelc-system.yaml", &ns)
	assert.Equal(t, "restricted", ns.Labels["pod-security.kubernetes.io/enforce"])

	var role rbacv1.ClusterRole
	read("clusterrole-accelc-catalog.yaml", &role)
	var resources []string
	for _, r := range role.Rules {
		assert.ElementsMatch(t, []string{"get", "list", "watch"}, r.Verbs, "read-only")
		resources = append(resources, r.Resources...)
	}
	// hetero-prod uses Kueue: the service reads its Workloads, to say
	// what waits for each profile.
	assert.Equal(t, []string{"nodes", "pods", "resourceslices", "workloads"}, resources)
	// Without Kueue, no Workloads to read.
	res, err := accelc.Cluster(context.Background(), filepath.Join(examplesDir, "hetero-prod"), accelc.Options{Stages: accelc.Checked})
	require.NoError(t, err)
	res.Model.Cluster.Quotas = "resourcequota"
	objs, err := render.Render(res.Model, res.Inventory)
	require.NoError(t, err)
	found := false
	for _, o := range objs {
		if r, ok := o.Body.(*rbacv1.ClusterRole); ok && r.Name == "accelc-catalog" {
			found = true
			for _, rule := range r.Rules {
				assert.NotContains(t, rule.APIGroups, "kueue.x-k8s.io", "a cluster without Kueue")
			}
		}
	}
	assert.True(t, found, "hetero-prod without Kueue still renders the catalog service's ClusterRole")
	var np networkingv1.NetworkPolicy
	read("networkpolicy-accelc-catalog.yaml", &np)
	require.Len(t, np.Spec.Ingress, 1)
	assert.Equal(t, []string{"ml-research", "opendatahub"}, np.Spec.Ingress[0].From[0].NamespaceSelector.MatchExpressions[0].Values)

	var cm corev1.ConfigMap
	read("configmap-accelc-catalog-config.yaml", &cm)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cluster.cue"), []byte(cm.Data["cluster.cue"]), 0o644))
	m, err := compile.Load(dir)
	require.NoError(t, err, "the configuration the service compiles, alone")
	assert.Equal(t, "hetero-prod", m.Cluster.Name)
	assert.Len(t, m.Profiles, 5)

	// Two replicas, one kept up through drains.
	assert.Equal(t, int32(2), *deploy.Spec.Replicas)
	var pdb policyv1.PodDisruptionBudget
	read("poddisruptionbudget-accelc-catalog.yaml", &pdb)
	assert.Equal(t, 1, pdb.Spec.MinAvailable.IntValue())
	assert.Equal(t, deploy.Spec.Selector.MatchLabels, pdb.Spec.Selector.MatchLabels)
	// It asks the cluster who each request is and what it may read, as
	// aggregated API servers do: the built-in role that lets them.
	var delegator rbacv1.ClusterRoleBinding
	read("clusterrolebinding-accelc-catalog-auth-delegator.yaml", &delegator)
	assert.Equal(t, rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:auth-delegator"}, delegator.RoleRef)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "accelc-catalog", Namespace: "accelc-system"}}, delegator.Subjects)

	// No catalog service, no folder.
	for path := range renderExample(t, "tpu-trainium") {
		assert.NotContains(t, path, "catalog-service/")
	}
}

// TestCatalogServiceTLS: with tls, the service serves HTTPS from the
// Secret's certificate (mounted, read again when renewed) on the
// Service's port 443, probed over HTTPS; with openshiftServiceCA the
// Service asks OpenShift's service CA to write the Secret. One replica
// gets no PodDisruptionBudget, which would block every drain.
func TestCatalogServiceTLS(t *testing.T) {
	const src = `package c

cluster: {
	name: "lab"
	catalogService: {image: "registry.example/accelc:v1", replicas: 1, tls: openshiftServiceCA: %v}
}
`
	for _, openshift := range []bool{false, true} {
		m := loadCUE(t, fmt.Sprintf(src, openshift))
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
		c := deploy.Spec.Template.Spec.Containers[0]
		assert.Equal(t, []string{"serve", "/etc/accelc/cluster", "--live", "--listen", "0.0.0.0:8443", "--reload", "10s",
			"--tls-cert-file", "/etc/accelc/tls/tls.crt", "--tls-key-file", "/etc/accelc/tls/tls.key"}, c.Args)
		assert.Equal(t, []corev1.ContainerPort{{Name: "https", ContainerPort: 8443, Protocol: corev1.ProtocolTCP}}, c.Ports)
		assert.Equal(t, corev1.URISchemeHTTPS, c.ReadinessProbe.HTTPGet.Scheme)
		assert.Contains(t, c.VolumeMounts, corev1.VolumeMount{Name: "tls", MountPath: "/etc/accelc/tls", ReadOnly: true})
		assert.Contains(t, deploy.Spec.Template.Spec.Volumes, corev1.Volume{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "accelc-catalog-tls"}}})
		var svc corev1.Service
		read("service-accelc-catalog.yaml", &svc)
		assert.Equal(t, int32(443), svc.Spec.Ports[0].Port)
		if openshift {
			assert.Equal(t, map[string]string{"service.beta.openshift.io/serving-cert-secret-name": "accelc-catalog-tls"}, svc.Annotations)
		} else {
			assert.Empty(t, svc.Annotations, "the Secret is the admins' (cert-manager or their own)")
		}
		var np networkingv1.NetworkPolicy
		read("networkpolicy-accelc-catalog.yaml", &np)
		assert.Equal(t, 8443, np.Spec.Ingress[0].Ports[0].Port.IntValue())
		assert.NotContains(t, tree, "catalog-service/poddisruptionbudget-accelc-catalog.yaml", "one replica")
	}
}

// TestCatalogServiceMemory: the catalog service's memory limit (and
// request) grows with the inventory's nodes as docs/serve.md's formula says;
// cluster.catalogService.memory overrides it.
func TestCatalogServiceMemory(t *testing.T) {
	for nodes, want := range map[int]string{0: "64Mi", 50: "128Mi", 1000: "128Mi", 5000: "320Mi", 20000: "1088Mi", 100000: "5184Mi"} {
		q := render.CatalogServiceMemory(nodes)
		assert.Equal(t, want, q.String(), "%d nodes", nodes)
	}
	res, err := accelc.Cluster(context.Background(), filepath.Join(examplesDir, "hetero-prod"), accelc.Options{Stages: accelc.Checked})
	require.NoError(t, err)
	limit := func(memory string) string {
		t.Helper()
		m := *res.Model
		cs := *m.Cluster.CatalogService
		cs.Memory = memory
		m.Cluster.CatalogService = &cs
		objs, err := render.Render(&m, res.Inventory)
		require.NoError(t, err)
		for _, o := range objs {
			if d, ok := o.Body.(*appsv1.Deployment); ok && d.Name == "accelc-catalog" {
				r := d.Spec.Template.Spec.Containers[0].Resources
				assert.Equal(t, r.Limits.Memory().String(), r.Requests.Memory().String(), "the request is the limit")
				return r.Limits.Memory().String()
			}
		}
		t.Fatal("no Deployment accelc-catalog")
		return ""
	}
	sized := render.CatalogServiceMemory(len(res.Inventory.Nodes))
	assert.Equal(t, sized.String(), limit(""))
	assert.Equal(t, "2Gi", limit("2Gi"))
}
