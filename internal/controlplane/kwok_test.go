package controlplane

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// TestKWOKWithControllerManager runs the whole node side of a cluster:
// kube-controller-manager makes a Deployment's and a Job's pods,
// kube-scheduler binds them to a KWOK node, KWOK runs them, the Job's pod
// succeeds and the Job completes.
// make e2e-tools builds kwok, after make test has run: without it, the
// test is skipped here, and make e2e runs the whole story on KWOK.
func TestKWOKWithControllerManager(t *testing.T) {
	if _, err := findKWOK(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	cp := Start(t, WithScheduler(), WithControllerManager())
	cp.StartKWOK(t)
	ctx := t.Context()
	client, err := kubernetes.NewForConfig(cp.RESTConfig())
	require.NoError(t, err)

	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        "gpu-kwok",
		Labels:      map[string]string{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"},
		Annotations: map[string]string{KWOKNodeAnnotation: "fake"},
	}}
	_, err = client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	require.NoError(t, err)
	// KWOK and the node controllers write the new node too: set its
	// capacity on the latest version, again on a conflict.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		latest, err := client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		latest.Status.Capacity = corev1.ResourceList{
			"nvidia.com/gpu":      resource.MustParse("8"),
			corev1.ResourceCPU:    resource.MustParse("64"),
			corev1.ResourceMemory: resource.MustParse("512Gi"),
			corev1.ResourcePods:   resource.MustParse("110"),
		}
		latest.Status.Allocatable = latest.Status.Capacity
		_, err = client.CoreV1().Nodes().UpdateStatus(ctx, latest, metav1.UpdateOptions{})
		return err
	})
	require.NoError(t, err)

	gpu := corev1.PodSpec{Containers: []corev1.Container{{
		Name:      "main",
		Image:     "registry.example/train:v1",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
	}}}
	labels := map[string]string{"app": "serve"}
	replicas := int32(2)
	_, err = client.AppsV1().Deployments("default").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "serve"},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: gpu},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	jobSpec := gpu.DeepCopy()
	jobSpec.RestartPolicy = corev1.RestartPolicyNever
	_, err = client.BatchV1().Jobs("default").Create(ctx, &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "train"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: PodCompleteAfter(time.Second)},
			Spec:       *jobSpec,
		}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)

	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := client.AppsV1().Deployments("default").Get(ctx, "serve", metav1.GetOptions{})
		if err != nil || d.Status.ReadyReplicas != replicas {
			return false, err
		}
		j, err := client.BatchV1().Jobs("default").Get(ctx, "train", metav1.GetOptions{})
		return err == nil && j.Status.Succeeded == 1, err
	})
	require.NoError(t, err, "the Deployment's pods did not become Ready or the Job did not complete on the KWOK node")
	pods, err := client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=serve"})
	require.NoError(t, err)
	for _, p := range pods.Items {
		assert.Equal(t, "gpu-kwok", p.Spec.NodeName)
		assert.Equal(t, corev1.PodRunning, p.Status.Phase, "pod %s", p.Name)
	}
}
