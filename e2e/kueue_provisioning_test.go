//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/accelc/accelc/pkg/render"
)

// onDemand is issue 35's capacity-on-demand cluster: profile a100 waits
// on its one flavor for a check-capacity ProvisioningRequest, any-gpu on
// its A100 flavor only (the L40S before it has no NodePool).
const onDemand = "e2e/testdata/on-demand"

var provisioningRequestGVR = schema.GroupVersionResource{Group: "autoscaling.x-k8s.io", Version: "v1", Resource: "provisioningrequests"}

// TestKueueProvisioning applies what accelc renders for on-demand (its
// ProvisioningRequestConfig and AdmissionCheck first, then the queues) to
// a control plane that serves cluster-autoscaler's ProvisioningRequest
// API, with Kueue's manager, whose provisioning controller runs. A Job of
// profile a100 gets its quota reserved, and Kueue asks for capacity with
// a ProvisioningRequest of the rendered class whose pod template carries
// the profile's resources and the flavor's node selector; the Job is not
// admitted until the test, acting as the autoscaler, sets the request's
// Provisioned condition. A Job of any-gpu admitted on the L40S flavor
// makes no request.
func TestKueueProvisioning(t *testing.T) {
	root := repoRoot(t)
	accelc := program(t, root, filepath.Join("bin", "accelc"), "build")
	s := &suite{root: root, work: t.TempDir(), accelc: accelc}
	begin := time.Now()
	c := startRenderedQueues(t, s, onDemand, append([]string{"ProvisioningRequestConfig", "AdmissionCheck"}, kueueQueueKinds...))
	t.Logf("on-demand: queues Active %s after the start", time.Since(begin).Round(time.Millisecond))
	ctx := t.Context()

	a100 := c.queueOf(t, c.objs["ClusterQueue"]["ml-research.a100"])
	created := time.Now()
	c.provisioningJob(t, a100, "train", 2, 4)
	var pr *unstructured.Unstructured
	err := poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		list, err := s.dyn.Resource(provisioningRequestGVR).Namespace(a100.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if len(list.Items) == 0 {
			return false, "no ProvisioningRequest", nil
		}
		pr = &list.Items[0]
		return true, "", nil
	})
	if err != nil {
		t.Fatalf("Kueue made no ProvisioningRequest for Job train: %v\n%s", err, c.kueue(a100).dump(ctx))
	}
	t.Logf("ProvisioningRequest %s created %s after Job train", pr.GetName(), time.Since(created).Round(time.Millisecond))
	class, _, _ := unstructured.NestedString(pr.Object, "spec", "provisioningClassName")
	if class != "check-capacity.autoscaling.x-k8s.io" {
		t.Errorf("ProvisioningRequest %s has class %q, want the rendered check-capacity.autoscaling.x-k8s.io", pr.GetName(), class)
	}
	podSets, _, _ := unstructured.NestedSlice(pr.Object, "spec", "podSets")
	if len(podSets) != 1 {
		t.Fatalf("ProvisioningRequest %s has pod sets %v, want the Job's one", pr.GetName(), podSets)
	}
	count, _, _ := unstructured.NestedInt64(podSets[0].(map[string]any), "count")
	ptName, _, _ := unstructured.NestedString(podSets[0].(map[string]any), "podTemplateRef", "name")
	pt, err := s.client.CoreV1().PodTemplates(a100.namespace).Get(ctx, ptName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ProvisioningRequest %s's pod template %s: %v", pr.GetName(), ptName, err)
	}
	got := pt.Template.Spec.Containers[0].Resources.Requests
	want := a100.pod(t, "x", 4).Spec.Containers[0].Resources.Requests
	typeLabel := "accelerator.opendatahub.io/type"
	if count != 2 || quantities(got) != quantities(want) || pt.Template.Spec.NodeSelector[typeLabel] != "nvidia-a100-80gb" {
		t.Errorf("ProvisioningRequest %s asks for %d pods of template %s requesting %s with node selector %v: want 2 pods requesting the profile's %s on %s=nvidia-a100-80gb",
			pr.GetName(), count, ptName, quantities(got), pt.Template.Spec.NodeSelector, quantities(want), typeLabel)
	}
	t.Logf("ProvisioningRequest %s: class %s, %d pods of PodTemplate %s: requests %v, node selector %v, tolerations %v",
		pr.GetName(), class, count, ptName, quantities(pt.Template.Spec.Containers[0].Resources.Requests), pt.Template.Spec.NodeSelector, pt.Template.Spec.Tolerations)

	// Quota reserved, the check pending: not admitted while the
	// autoscaler has not answered.
	time.Sleep(2 * time.Second)
	wl := c.workloadOf(t, a100.namespace, "train")
	if cond := condition(wl, "QuotaReserved"); cond == nil || cond["status"] != "True" {
		t.Errorf("Workload %s: QuotaReserved %v, want True before the request is made", wl.GetName(), cond)
	}
	if cond := condition(wl, "Admitted"); cond != nil && cond["status"] == "True" {
		t.Fatalf("Workload %s is admitted before the ProvisioningRequest is answered", wl.GetName())
	}
	if state := checkState(wl, render.ProvisioningCheckName); state != "Pending" {
		t.Errorf("Workload %s: admission check %s is %q, want Pending", wl.GetName(), render.ProvisioningCheckName, state)
	}

	// The autoscaler's answer.
	answered := time.Now()
	cond := map[string]any{
		"type": "Provisioned", "status": "True", "reason": "Provisioned", "message": "capacity found by the e2e test",
		"lastTransitionTime": answered.UTC().Format(time.RFC3339), "observedGeneration": pr.GetGeneration(),
	}
	if err := unstructured.SetNestedSlice(pr.Object, []any{cond}, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.dyn.Resource(provisioningRequestGVR).Namespace(a100.namespace).UpdateStatus(ctx, pr, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("setting ProvisioningRequest %s Provisioned: %v", pr.GetName(), err)
	}
	err = poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		wl = c.workloadOf(t, a100.namespace, "train")
		cond := condition(wl, "Admitted")
		state := checkState(wl, render.ProvisioningCheckName)
		return cond != nil && cond["status"] == "True" && state == "Ready", fmt.Sprintf("Admitted %v, check %s", cond, state), nil
	})
	if err != nil {
		t.Fatalf("Workload %s was not admitted once its ProvisioningRequest was Provisioned: %v\n%s", wl.GetName(), err, c.kueue(a100).dump(ctx))
	}
	flavors, _, _ := unstructured.NestedSlice(wl.Object, "status", "admission", "podSetAssignments")
	t.Logf("Workload %s admitted %s after the answer, check %s Ready; assignments %v", wl.GetName(), time.Since(answered).Round(time.Millisecond), render.ProvisioningCheckName, flavors)

	// any-gpu on its L40S flavor: no check, no request.
	anyGPU := c.queueOf(t, c.objs["ClusterQueue"]["ml-research.any-gpu"])
	c.provisioningJob(t, anyGPU, "infer", 1, 4)
	err = poll(ctx, admitTimeout, func(ctx context.Context) (bool, string, error) {
		wl := c.workloadOf(t, anyGPU.namespace, "infer")
		cond := condition(wl, "Admitted")
		return cond != nil && cond["status"] == "True", fmt.Sprintf("Admitted %v", cond), nil
	})
	if err != nil {
		t.Fatalf("Job infer (any-gpu) was not admitted on the L40S flavor: %v\n%s", err, c.kueue(anyGPU).dump(ctx))
	}
	infer := c.workloadOf(t, anyGPU.namespace, "infer")
	var flavor string
	if psas, _, _ := unstructured.NestedSlice(infer.Object, "status", "admission", "podSetAssignments"); len(psas) > 0 {
		flavor, _, _ = unstructured.NestedString(psas[0].(map[string]any), "flavors", a100.resource)
	}
	list, err := s.dyn.Resource(provisioningRequestGVR).Namespace(anyGPU.namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, item := range list.Items {
		names = append(names, item.GetName())
	}
	if len(names) != 1 || flavor != "nvidia-l40s-48gb" || checkState(infer, render.ProvisioningCheckName) != "" {
		t.Errorf("Job infer admitted on %q made ProvisioningRequests %v (check %q): want only train's, and no check on the L40S flavor", flavor, names, checkState(infer, render.ProvisioningCheckName))
	}
	t.Logf("Job infer (any-gpu) admitted without a check; ProvisioningRequests in %s: %s; total %s", anyGPU.namespace, strings.Join(names, ", "), time.Since(begin).Round(time.Millisecond))
}

// provisioningJob is a Job of n pods of count devices of q's profile.
func (c *kueueCluster) provisioningJob(t *testing.T, q queueProfile, name string, n int32, count int64) {
	t.Helper()
	pod := q.pod(t, "x", count)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: q.namespace, Labels: pod.Labels, Annotations: pod.Annotations},
		Spec: batchv1.JobSpec{
			Parallelism: &n, Completions: &n,
			Template: corev1.PodTemplateSpec{Spec: pod.Spec},
		},
	}
	job.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever
	if _, err := c.s.client.BatchV1().Jobs(q.namespace).Create(t.Context(), job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Job %s: %v", name, err)
	}
}

// workloadOf is the Workload Kueue made for the Job; the test fails when
// there is none within admitTimeout.
func (c *kueueCluster) workloadOf(t *testing.T, ns, job string) *unstructured.Unstructured {
	t.Helper()
	var found *unstructured.Unstructured
	err := poll(t.Context(), admitTimeout, func(ctx context.Context) (bool, string, error) {
		list, err := c.s.dyn.Resource(workloadGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for i := range list.Items {
			for _, o := range list.Items[i].GetOwnerReferences() {
				if o.Kind == "Job" && o.Name == job {
					found = &list.Items[i]
					return true, "", nil
				}
			}
		}
		return false, fmt.Sprintf("%d Workloads, none of Job %s", len(list.Items), job), nil
	})
	if err != nil {
		t.Fatalf("no Workload for Job %s: %v", job, err)
	}
	return found
}

// checkState is the state of the Workload's admission check; "" when it
// has none of that name.
func checkState(wl *unstructured.Unstructured, name string) string {
	checks, _, _ := unstructured.NestedSlice(wl.Object, "status", "admissionChecks")
	for _, ch := range checks {
		if m, ok := ch.(map[string]any); ok && m["name"] == name {
			return fmt.Sprint(m["state"])
		}
	}
	return ""
}
