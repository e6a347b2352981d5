package workloads_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
	_ "github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/inventory/live"
	"github.com/accelc/accelc/pkg/workloads"
)

// secretValue is what the workloads' environment and arguments hold that
// no snapshot may.
const secretValue = "s3cret-t0ken"

// TestReadLive reads a real API server holding what controllers would
// have made (no controller manager runs: the test makes each object, with
// its owner references, itself): a Deployment, its ReplicaSet and three
// pods; a CronJob, its Job and pod; a Kubeflow Notebook (its CRD
// applied), its StatefulSet and pod; a ResourceClaimTemplate; and a bare
// pod. Then a user who may list only some kinds, one who may list none,
// and a server that is down.
func TestReadLive(t *testing.T) {
	cp := controlplane.Start(t)
	ctx := t.Context()
	admin, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)
	_, err = controlplane.ApplyCRDs(ctx, dyn, "../../tools/e2e/crds/kubeflow.org_notebooks.yaml")
	require.NoError(t, err)
	makeWorkloads(ctx, t, admin, dyn)

	set, err := workloads.ReadLive(ctx, live.Options{Kubeconfig: cp.Kubeconfig(), PageSize: 2})
	require.NoError(t, err)
	assert.Empty(t, set.Warnings)
	var got []string
	for _, u := range set.Objects {
		got = append(got, workloads.RefOf(u).String()+" → "+set.Workload(u).String())
	}
	assert.Equal(t, []string{
		"Pod team-a/bare → Pod team-a/bare",
		"Pod team-a/nightly-29000000-x7k2p → CronJob team-a/nightly",
		"Pod team-a/train-5d8f9-a → Deployment team-a/train",
		"Pod team-a/train-5d8f9-b → Deployment team-a/train",
		"Pod team-a/train-5d8f9-c → Deployment team-a/train",
		"Pod team-b/lab-0 → Notebook team-b/lab",
		"Deployment team-a/train → Deployment team-a/train",
		"StatefulSet team-b/lab → Notebook team-b/lab",
		"ReplicaSet team-a/train-5d8f9 → Deployment team-a/train",
		"Job team-a/nightly-29000000 → CronJob team-a/nightly",
		"CronJob team-a/nightly → CronJob team-a/nightly",
		"Notebook team-b/lab → Notebook team-b/lab",
		"ResourceClaimTemplate team-a/one-gpu → ResourceClaimTemplate team-a/one-gpu",
	}, got)
	assert.Len(t, set.Pods(), 6)
	for _, u := range set.Objects {
		data, err := json.Marshal(u.Object)
		require.NoError(t, err)
		for _, gone := range []string{secretValue, "managedFields", "resourceVersion", "imagePullSecrets", "podIP", "10.1.2.3", "conditions"} {
			assert.NotContains(t, string(data), gone, workloads.RefOf(u))
		}
		assert.NotEmpty(t, u.GetAPIVersion())
	}
	pod := set.Objects[2]
	phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
	assert.Equal(t, "Pending", phase, "the API server's own status.phase")
	containers, _, _ := unstructured.NestedSlice(pod.Object, "spec", "containers")
	require.Len(t, containers, 1)
	c := containers[0].(map[string]any)
	assert.Equal(t, "registry.example/train:1", c["image"])
	assert.Equal(t, map[string]any{"limits": map[string]any{"nvidia.com/gpu": "2"}, "requests": map[string]any{"nvidia.com/gpu": "2"}}, c["resources"])
	assert.Equal(t, []any{map[string]any{"name": "TOKEN"}, map[string]any{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}}, c["env"])
	sa, _, _ := unstructured.NestedString(pod.Object, "spec", "serviceAccountName")
	assert.Equal(t, "trainer", sa)

	t.Run("same as kubectl's list, decoded", func(t *testing.T) {
		kubectl := kubectlPath(t)
		out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", cp.Kubeconfig(), "get", "-A", "-o", "json",
			"pods,deployments.apps,statefulsets.apps,replicasets.apps,jobs.batch,cronjobs.batch,notebooks.kubeflow.org,resourceclaimtemplates.resource.k8s.io").Output()
		require.NoError(t, err)
		decoded, err := workloads.Decode(out)
		require.NoError(t, err)
		require.Len(t, decoded.Objects, len(set.Objects))
		for i := range set.Objects {
			assert.Equal(t, set.Objects[i].Object, decoded.Objects[i].Object)
		}
	})

	// Every way of asking reads the same: without gzip, the first page
	// from the watch cache (whole), each page only once the last is read.
	for _, m := range workloads.Methods {
		t.Run(m.Name, func(t *testing.T) {
			got, err := workloads.ReadLiveWith(ctx, live.Options{Kubeconfig: cp.Kubeconfig(), PageSize: 2}, m.M)
			require.NoError(t, err)
			require.Len(t, got.Objects, len(set.Objects))
			for i := range set.Objects {
				assert.Equal(t, set.Objects[i].Object, got.Objects[i].Object)
			}
		})
	}

	t.Run("may list pods and apps, not batch or the rest", func(t *testing.T) {
		bind(ctx, t, admin, "apps-reader", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
			rbacv1.PolicyRule{APIGroups: []string{"apps"}, Resources: []string{"*"}, Verbs: []string{"list"}})
		set, err := workloads.ReadLive(ctx, live.Options{Kubeconfig: cp.UserKubeconfig(t, "apps-reader")})
		require.NoError(t, err)
		assert.Equal(t, []string{
			`may not list jobs.batch in all namespaces (RBAC: verb list on jobs in API group "batch", cluster-wide): no Jobs are read`,
			`may not list cronjobs.batch in all namespaces (RBAC: verb list on cronjobs in API group "batch", cluster-wide): no CronJobs are read`,
			`may not list notebooks.kubeflow.org in all namespaces (RBAC: verb list on notebooks in API group "kubeflow.org", cluster-wide): no Notebooks are read`,
			`may not list resourceclaims.resource.k8s.io in all namespaces (RBAC: verb list on resourceclaims in API group "resource.k8s.io", cluster-wide): no ResourceClaims are read`,
			`may not list resourceclaimtemplates.resource.k8s.io in all namespaces (RBAC: verb list on resourceclaimtemplates in API group "resource.k8s.io", cluster-wide): no ResourceClaimTemplates are read`,
		}, set.Warnings)
		assert.Len(t, set.Pods(), 6)
		// The Job is not read: the CronJob's pod ends at it.
		for _, u := range set.Pods() {
			if u.GetName() == "nightly-29000000-x7k2p" {
				assert.Equal(t, workloads.Ref{APIVersion: "batch/v1", Kind: "Job", Namespace: "team-a", Name: "nightly-29000000"}, set.Workload(u))
			}
		}
	})

	t.Run("may list nothing", func(t *testing.T) {
		set, err := workloads.ReadLive(ctx, live.Options{Kubeconfig: cp.UserKubeconfig(t, "nobody")})
		require.NoError(t, err)
		assert.Empty(t, set.Objects)
		require.Len(t, set.Warnings, 10, "every kind served: pods, four of apps, two of batch, Notebooks, two of DRA")
		assert.Equal(t, `may not list pods in all namespaces (RBAC: verb list on pods in the core API group, cluster-wide): no Pods are read`, set.Warnings[0])
	})

	t.Run("server down", func(t *testing.T) {
		addr := closedPort(t)
		cfg, err := os.ReadFile(cp.Kubeconfig())
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "kubeconfig")
		require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(string(cfg), strings.TrimPrefix(cp.URL(), "https://"), addr)), 0o600))
		_, err = workloads.ReadLive(ctx, live.Options{Kubeconfig: path})
		var le *live.Error
		require.ErrorAs(t, err, &le)
		assert.Contains(t, err.Error(), "cannot reach it")
		assert.Contains(t, err.Error(), addr)
	})
}

// makeWorkloads makes what controllers would have: each object with the
// owner references its controller gives it.
func makeWorkloads(ctx context.Context, t *testing.T, cs kubernetes.Interface, dyn dynamic.Interface) {
	t.Helper()
	for _, ns := range []string{"team-a", "team-b"} {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	gpus := func(n int64) corev1.ResourceRequirements {
		q := *resource.NewQuantity(n, resource.DecimalSI)
		return corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": q}, Requests: corev1.ResourceList{"nvidia.com/gpu": q}}
	}
	podSpec := func(image string, n int64) corev1.PodSpec {
		return corev1.PodSpec{
			ServiceAccountName: "trainer",
			ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "registry-creds"}},
			HostAliases:        []corev1.HostAlias{{IP: "10.1.2.3", Hostnames: []string{"registry.internal"}}},
			Containers: []corev1.Container{{
				Name: "app", Image: image, Resources: gpus(n),
				Args: []string{"--token=" + secretValue},
				Env: []corev1.EnvVar{
					{Name: "TOKEN", Value: secretValue},
					{Name: "NVIDIA_VISIBLE_DEVICES", Value: "all"},
				},
			}},
		}
	}
	template := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "train"}}, Spec: podSpec("registry.example/train:1", 2)}
	controlledBy := func(apiVersion, kind string, owner metav1.Object) []metav1.OwnerReference {
		yes := true
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: owner.GetName(), UID: owner.GetUID(), Controller: &yes, BlockOwnerDeletion: &yes}}
	}
	pod := func(ns, name string, owners []metav1.OwnerReference, spec corev1.PodSpec) {
		_, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, OwnerReferences: owners, Labels: map[string]string{"app": "train"},
				Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"spec":{"args":["--token=` + secretValue + `"]}}`}},
			Spec: spec,
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		// What a kubelet would report, addresses and all.
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		p.Status.PodIP = "10.1.2.3"
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse}}
		_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		require.NoError(t, err)
	}

	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "train"}}
	d, err := cs.AppsV1().Deployments("team-a").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "train"},
		Spec:       appsv1.DeploymentSpec{Selector: selector, Template: template},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	rs, err := cs.AppsV1().ReplicaSets("team-a").Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "train-5d8f9", OwnerReferences: controlledBy("apps/v1", "Deployment", d)},
		Spec:       appsv1.ReplicaSetSpec{Selector: selector, Template: template},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	for _, s := range []string{"a", "b", "c"} {
		pod("team-a", "train-5d8f9-"+s, controlledBy("apps/v1", "ReplicaSet", rs), template.Spec)
	}

	jobTemplate := corev1.PodTemplateSpec{Spec: podSpec("registry.example/report:1", 1)}
	jobTemplate.Spec.RestartPolicy = corev1.RestartPolicyNever
	cj, err := cs.BatchV1().CronJobs("team-a").Create(ctx, &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly"},
		Spec: batchv1.CronJobSpec{Schedule: "0 2 * * *", JobTemplate: batchv1.JobTemplateSpec{
			Spec: batchv1.JobSpec{Template: jobTemplate}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	job, err := cs.BatchV1().Jobs("team-a").Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "nightly-29000000", OwnerReferences: controlledBy("batch/v1", "CronJob", cj)},
		Spec:       batchv1.JobSpec{Template: jobTemplate},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	pod("team-a", "nightly-29000000-x7k2p", controlledBy("batch/v1", "Job", job), job.Spec.Template.Spec)

	notebooks := dyn.Resource(schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "notebooks"}).Namespace("team-b")
	spec, err := json.Marshal(podSpec("registry.example/jupyter:1", 1))
	require.NoError(t, err)
	var specMap map[string]any
	require.NoError(t, json.Unmarshal(spec, &specMap))
	nb, err := notebooks.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubeflow.org/v1", "kind": "Notebook",
		"metadata": map[string]any{"name": "lab", "labels": map[string]any{"accelc.io/profile": "lab-l40s"}},
		"spec":     map[string]any{"template": map[string]any{"spec": specMap}},
	}}, metav1.CreateOptions{})
	require.NoError(t, err)
	sts, err := cs.AppsV1().StatefulSets("team-b").Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "lab", OwnerReferences: controlledBy("kubeflow.org/v1", "Notebook", nb)},
		Spec: appsv1.StatefulSetSpec{Selector: selector,
			Template: corev1.PodTemplateSpec{ObjectMeta: template.ObjectMeta, Spec: podSpec("registry.example/jupyter:1", 1)}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	pod("team-b", "lab-0", controlledBy("apps/v1", "StatefulSet", sts), sts.Spec.Template.Spec)

	pod("team-a", "bare", nil, podSpec("registry.example/bare:1", 0))

	_, err = cs.ResourceV1().ResourceClaimTemplates("team-a").Create(ctx, &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "one-gpu"},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com"}}}}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// bind lets user do what the rules say, cluster-wide.
func bind(ctx context.Context, t *testing.T, cs kubernetes.Interface, user string, rules ...rbacv1.PolicyRule) {
	t.Helper()
	_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}, metav1.CreateOptions{})
	require.NoError(t, err)
}
