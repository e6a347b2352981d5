//go:build e2e

package e2e

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/render"
)

// TestTopologyPolicies: the API server itself runs the rendered
// MutatingAdmissionPolicies that give a topology profile's Jobs (on their
// template) and pods Kueue's pod-set topology annotation, whichever way
// they name the profile: as Open Data Hub writes it (the annotation), by
// accelc's label (for a Job, on the template or on the Job); a Job with no
// metadata on its template gets it too. A Job or pod of another profile,
// or one that names one of Kueue's topology annotations itself (its own
// level, a preferred one, none at all), is left as written: Kueue's
// webhooks refuse a pod set with two, and Kueue's manager runs here to
// say so of each (the Jobs and pods it admits are what it validated).
// The rollout is staged: research
// denies, serving is still at dryrun, and nothing in serving changes.
// Then accelc's webhook, which stands in for the policies before 1.36,
// does the same, in the same namespaces.
func TestTopologyPolicies(t *testing.T) {
	s := newSuite(t)
	dir := filepath.Join(s.work, "fair-topology")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(s.root, "e2e", "testdata", "fair-topology"))); err != nil {
		t.Fatal(err)
	}
	// fair-topology's cluster at dryrun, one team at deny: mutations
	// are rendered only where a namespace denies.
	if err := os.WriteFile(filepath.Join(dir, "staged.cue"), []byte("package cluster\n\ncluster: enforcement: \"dryrun\"\nteams: research: enforcement: \"deny\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := s.render(t, dir, "staged")
	s.cp = controlplane.Start(t)
	// Kueue's manager with the rendered Configuration: its webhooks
	// validate every Job and pod created here, and refuse a pod set
	// with two topology annotations.
	fragment, namespaces := kueueConfig(t, readTree(t, out))
	s.cp.StartKueue(t, controlplane.KueueOptions{Namespaces: namespaces, Fragment: []byte(fragment)})
	s.connect(t)
	policies := []string{
		"mutations/mutatingadmissionpolicy-accelc-job-topology.yaml", "mutations/mutatingadmissionpolicybinding-accelc-job-topology.yaml",
		"mutations/mutatingadmissionpolicy-accelc-pod-topology.yaml", "mutations/mutatingadmissionpolicybinding-accelc-pod-topology.yaml",
	}
	for _, f := range append([]string{"tenancy/namespace-research.yaml", "tenancy/namespace-serving.yaml"}, policies...) {
		s.mustKubectl(t, "apply", "--server-side", "-f", filepath.Join(out, f))
	}
	const (
		required, preferred, unconstrained = compile.RequiredTopologyAnnotation, compile.PreferredTopologyAnnotation, compile.UnconstrainedTopologyAnnotation
		clique, host, label                = "nvidia.com/gpu.clique", "kubernetes.io/hostname", "accelerator.opendatahub.io/profile"
	)
	odh := func(kv ...string) map[string]string {
		ann := map[string]string{hardwareProfileAnnotation: "h200-nvlink"}
		for i := 0; i+1 < len(kv); i += 2 {
			ann[kv[i]] = kv[i+1]
		}
		return ann
	}
	job := func(name string, labels, tmplLabels, tmplAnnotations map[string]string) *batchv1.Job {
		j := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: batchv1.JobSpec{Suspend: ptr.To(true), Template: corev1.PodTemplateSpec{
				Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "main", Image: "registry.example/train:1"}}},
			}},
		}
		if tmplLabels != nil || tmplAnnotations != nil {
			j.Spec.Template.ObjectMeta = metav1.ObjectMeta{Labels: tmplLabels, Annotations: tmplAnnotations}
		}
		return j
	}
	pod := func(name string, labels, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/train:1"}}},
		}
	}
	type object struct {
		job *batchv1.Job
		pod *corev1.Pod
	}
	cases := []struct {
		ns   string
		obj  object
		want map[string]string // Kueue's topology annotations after
	}{
		{"research", object{job: job("odh", nil, nil, odh())}, map[string]string{required: clique}},
		{"research", object{job: job("template-label", nil, map[string]string{label: "h200-nvlink"}, nil)}, map[string]string{required: clique}},
		{"research", object{job: job("job-label", map[string]string{label: "h200-nvlink"}, nil, nil)}, map[string]string{required: clique}},
		{"research", object{job: job("other-profile", nil, nil, map[string]string{hardwareProfileAnnotation: "h200"})}, map[string]string{}},
		{"research", object{job: job("own-level", nil, nil, odh(required, host))}, map[string]string{required: host}},
		{"research", object{job: job("prefers", nil, nil, odh(preferred, host))}, map[string]string{preferred: host}},
		{"research", object{job: job("unconstrained", nil, nil, odh(unconstrained, "true"))}, map[string]string{unconstrained: "true"}},
		{"research", object{pod: pod("odh-pod", nil, odh())}, map[string]string{required: clique}},
		{"research", object{pod: pod("labelled-pod", map[string]string{label: "h200-nvlink"}, nil)}, map[string]string{required: clique}},
		{"research", object{pod: pod("prefers-pod", nil, odh(preferred, host))}, map[string]string{preferred: host}},
		{"serving", object{job: job("odh", nil, nil, odh())}, map[string]string{}},
		{"serving", object{pod: pod("odh-pod", nil, odh())}, map[string]string{}},
	}
	topology := func(ann map[string]string) map[string]string {
		out := map[string]string{}
		for _, k := range compile.TopologyAnnotations {
			if v, ok := ann[k]; ok {
				out[k] = v
			}
		}
		return out
	}
	create := func(ctx context.Context, ns, prefix string, o object, opts metav1.CreateOptions) (string, map[string]string, error) {
		if o.job != nil {
			j := o.job.DeepCopy()
			j.Name = prefix + j.Name
			got, err := s.client.BatchV1().Jobs(ns).Create(ctx, j, opts)
			if err != nil {
				return "Job " + ns + "/" + j.Name, nil, err
			}
			return "Job " + ns + "/" + j.Name, topology(got.Spec.Template.Annotations), nil
		}
		p := o.pod.DeepCopy()
		p.Name = prefix + p.Name
		got, err := s.client.CoreV1().Pods(ns).Create(ctx, p, opts)
		if err != nil {
			return "pod " + ns + "/" + p.Name, nil, err
		}
		return "pod " + ns + "/" + p.Name, topology(got.Annotations), nil
	}
	// What mutates them is in force once the API server has loaded it:
	// the first Job and the first pod are retried (as dry runs) until
	// they are.
	play := func(what, prefix string) {
		for _, probe := range []object{cases[0].obj, cases[7].obj} {
			err := poll(t.Context(), admitTimeout, func(ctx context.Context) (bool, string, error) {
				_, got, err := create(ctx, "research", prefix+"probe-", probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				if err != nil {
					return false, err.Error(), nil
				}
				return got[required] == clique, "topology annotations " + jsonString(got), nil
			})
			if err != nil {
				t.Fatalf("%s never took effect: %v", what, err)
			}
		}
		for _, c := range cases {
			name, got, err := create(t.Context(), c.ns, prefix, c.obj, metav1.CreateOptions{})
			if err != nil {
				t.Errorf("%s: %s: %v", what, name, err)
				continue
			}
			if !maps.Equal(got, c.want) {
				t.Errorf("%s: %s: Kueue's topology annotations %s, want %s", what, name, jsonString(got), jsonString(c.want))
				continue
			}
			t.Logf("%s: %s: topology annotations %s", what, name, jsonString(got))
		}
	}
	play("the topology policies", "")

	// Before 1.36 accelc's webhook does it in the policies' place: the
	// cluster rendered for 1.34 with the catalog service, its webhook
	// served here (startWebhook) and registered with the API server
	// instead of the policies, the same Jobs and pods give the same
	// objects.
	for i := len(policies) - 1; i >= 0; i-- {
		s.mustKubectl(t, "delete", "-f", filepath.Join(out, policies[i]))
	}
	older := filepath.Join(s.work, "fair-topology-1.34")
	if err := os.CopyFS(older, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(older, "older.cue"), []byte("package cluster\n\ncluster: kubernetesVersion: \"1.34\"\ncluster: catalogService: {image: \"registry.example.com/accelc:v0.4.0\", allowFrom: []}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &clusterUnderTest{out: s.render(t, older, "staged")}
	if !s.startWebhook(t, c) {
		t.Fatal("fair-topology rendered for 1.34 with the catalog service has no accelc webhook")
	}
	s.mustKubectl(t, "apply", "--server-side", "-f", filepath.Join(c.out, render.DirCatalogService, "mutatingwebhookconfiguration-"+render.ProfileWebhookName+".yaml"))
	play("accelc's webhook", "hook-")
}
