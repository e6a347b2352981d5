//go:build e2e

package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/accelc/accelc/internal/controlplane"
)

// TestJobTopologyPolicy: the API server itself runs the rendered
// MutatingAdmissionPolicy that gives a topology profile's Jobs Kueue's
// pod-set topology annotation on their template, whichever way the Job
// names the profile: as Open Data Hub writes it (the template's
// annotation), by accelc's label on the template, or on the Job; a Job
// with no metadata on its template gets it too; a Job of another profile,
// or one that chose its own level, is left as written.
func TestJobTopologyPolicy(t *testing.T) {
	s := newSuite(t)
	// fair-topology at deny: mutations are rendered only where a
	// namespace denies.
	dir := filepath.Join(s.work, "fair-topology")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(s.root, "e2e", "testdata", "fair-topology"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deny.cue"), []byte("package cluster\n\ncluster: enforcement: \"deny\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := s.render(t, dir, "deny")
	s.cp = controlplane.Start(t)
	s.connect(t)
	for _, f := range []string{"tenancy/namespace-research.yaml", "mutations/mutatingadmissionpolicy-accelc-job-topology.yaml", "mutations/mutatingadmissionpolicybinding-accelc-job-topology.yaml"} {
		s.mustKubectl(t, "apply", "--server-side", "-f", filepath.Join(out, f))
	}
	const key, clique = "kueue.x-k8s.io/podset-required-topology", "nvidia.com/gpu.clique"
	job := func(name string, labels, tmplLabels, tmplAnnotations map[string]string) *batchv1.Job {
		j := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "research", Labels: labels},
			Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "registry.example/train:1"}}},
			}},
		}
		if tmplLabels != nil || tmplAnnotations != nil {
			j.Spec.Template.ObjectMeta = metav1.ObjectMeta{Labels: tmplLabels, Annotations: tmplAnnotations}
		}
		return j
	}
	cases := []struct {
		job  *batchv1.Job
		want string
	}{
		{job("odh", nil, nil, map[string]string{hardwareProfileAnnotation: "h200-nvlink"}), clique},
		{job("template-label", nil, map[string]string{"accelerator.opendatahub.io/profile": "h200-nvlink"}, nil), clique},
		{job("job-label", map[string]string{"accelerator.opendatahub.io/profile": "h200-nvlink"}, nil, nil), clique},
		{job("other-profile", nil, nil, map[string]string{hardwareProfileAnnotation: "h200"}), ""},
		{job("own-level", nil, nil, map[string]string{hardwareProfileAnnotation: "h200-nvlink", key: "kubernetes.io/hostname"}), "kubernetes.io/hostname"},
	}
	// The policy is in force once the API server has loaded it: the
	// first case is retried until it is.
	err := poll(t.Context(), admitTimeout, func(ctx context.Context) (bool, string, error) {
		j := cases[0].job.DeepCopy()
		j.Name = "probe"
		got, err := s.client.BatchV1().Jobs("research").Create(ctx, j, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return false, err.Error(), nil
		}
		return got.Spec.Template.Annotations[key] == clique, "template annotations " + jsonString(got.Spec.Template.Annotations), nil
	})
	if err != nil {
		t.Fatalf("the job topology policy never took effect: %v", err)
	}
	for _, c := range cases {
		got, err := s.client.BatchV1().Jobs("research").Create(t.Context(), c.job, metav1.CreateOptions{})
		if err != nil {
			t.Errorf("Job %s: %v", c.job.Name, err)
			continue
		}
		if have := got.Spec.Template.Annotations[key]; have != c.want {
			t.Errorf("Job %s: template annotation %s=%q, want %q", c.job.Name, key, have, c.want)
			continue
		}
		t.Logf("Job %s: template %s=%q", c.job.Name, key, got.Spec.Template.Annotations[key])
	}
}
