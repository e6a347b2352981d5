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
	"github.com/accelc/accelc/pkg/render"
)

// TestJobTopologyPolicy: the API server itself runs the rendered
// MutatingAdmissionPolicy that gives a topology profile's Jobs Kueue's
// pod-set topology annotation on their template, whichever way the Job
// names the profile: as Open Data Hub writes it (the template's
// annotation), by accelc's label on the template, or on the Job; a Job
// with no metadata on its template gets it too; a Job of another profile,
// or one that chose its own level, is left as written. Then accelc's
// webhook, which stands in for the policy before 1.36, does the same.
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
	// What renders them is in force once the API server has loaded it:
	// the first case is retried until it is.
	play := func(what, prefix string) {
		err := poll(t.Context(), admitTimeout, func(ctx context.Context) (bool, string, error) {
			j := cases[0].job.DeepCopy()
			j.Name = prefix + "probe"
			got, err := s.client.BatchV1().Jobs("research").Create(ctx, j, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				return false, err.Error(), nil
			}
			return got.Spec.Template.Annotations[key] == clique, "template annotations " + jsonString(got.Spec.Template.Annotations), nil
		})
		if err != nil {
			t.Fatalf("%s never took effect: %v", what, err)
		}
		for _, c := range cases {
			j := c.job.DeepCopy()
			j.Name = prefix + j.Name
			got, err := s.client.BatchV1().Jobs("research").Create(t.Context(), j, metav1.CreateOptions{})
			if err != nil {
				t.Errorf("%s: Job %s: %v", what, j.Name, err)
				continue
			}
			if have := got.Spec.Template.Annotations[key]; have != c.want {
				t.Errorf("%s: Job %s: template annotation %s=%q, want %q", what, j.Name, key, have, c.want)
				continue
			}
			t.Logf("%s: Job %s: template %s=%q", what, j.Name, key, got.Spec.Template.Annotations[key])
		}
	}
	play("the job topology policy", "")

	// Before 1.36 accelc's webhook does it in the policy's place: the
	// cluster rendered for 1.34 with the catalog service, its webhook
	// served here (startWebhook) and registered with the API server
	// instead of the policy, the same Jobs give the same templates.
	for _, f := range []string{"mutations/mutatingadmissionpolicybinding-accelc-job-topology.yaml", "mutations/mutatingadmissionpolicy-accelc-job-topology.yaml"} {
		s.mustKubectl(t, "delete", "-f", filepath.Join(out, f))
	}
	older := filepath.Join(s.work, "fair-topology-1.34")
	if err := os.CopyFS(older, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(older, "older.cue"), []byte("package cluster\n\ncluster: kubernetesVersion: \"1.34\"\ncluster: catalogService: {image: \"registry.example.com/accelc:v0.4.0\", allowFrom: []}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &clusterUnderTest{out: s.render(t, older, "deny")}
	if !s.startWebhook(t, c) {
		t.Fatal("fair-topology rendered for 1.34 with the catalog service has no accelc webhook")
	}
	s.mustKubectl(t, "apply", "--server-side", "-f", filepath.Join(c.out, render.DirCatalogService, "mutatingwebhookconfiguration-"+render.ProfileWebhookName+".yaml"))
	play("accelc's webhook", "hook-")
}
