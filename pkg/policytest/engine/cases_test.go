package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/policytest/engine"
)

// examples are the example clusters with admission cases.
var examples = []string{"small-lab", "gpu-pools", "hetero-prod", "tpu-trainium"}

// judge loads an example's cases and its enforced tree, with its
// inventory's Nodes synced, as accelc test does.
func judge(t *testing.T, name string) (*engine.CaseJudge, []policytest.CaseInput, func() ([]policytest.CaseResult, error)) {
	t.Helper()
	dir := filepath.Join("../../../examples/clusters", name)
	res, err := accelc.Cluster(context.Background(), dir, accelc.Options{Stages: accelc.Rendered})
	require.NoError(t, err)
	tree, err := res.EnforcedTree()
	require.NoError(t, err)
	cases, err := policytest.ReadCases(dir)
	require.NoError(t, err)
	inputs, err := policytest.ReadCaseInputs(dir, cases)
	require.NoError(t, err)
	nodes, err := policytest.Nodes(res.Model.Cluster.TypeLabel(), res.NodeTypes())
	require.NoError(t, err)
	j, err := engine.NewCaseJudge(t.Context(), tree, nodes, inputs)
	require.NoError(t, err)
	return j, inputs, func() ([]policytest.CaseResult, error) { return engine.JudgeCases(t.Context(), tree, nodes, inputs) }
}

// TestJudgeCasesExamples: every case of every example is judged as it
// says, through the admission path a live cluster runs.
func TestJudgeCasesExamples(t *testing.T) {
	for _, name := range examples {
		t.Run(name, func(t *testing.T) {
			_, inputs, run := judge(t, name)
			results, err := run()
			require.NoError(t, err)
			require.NotEmpty(t, results)
			for _, r := range results {
				assert.NoError(t, r.Err, "case %s, %s", r.Case, r.Test)
			}
			assert.Len(t, results, len(inputs), "one constraint, one result per case")
		})
	}
}

// TestJudgeStoredDeploymentImageUpdate is issue 45's refusal: a
// Deployment as the API server stores it (its template labelled by the
// workload policy, defaults, status, managedFields), updated to a new
// image only. Its template has none of the placement Gatekeeper's
// mutators give its pods; the webhook mutates the pod its expansion
// yields, so the UPDATE is admitted, and so it is offline.
func TestJudgeStoredDeploymentImageUpdate(t *testing.T) {
	j, inputs, _ := judge(t, "hetero-prod")
	i := slices.IndexFunc(inputs, func(c policytest.CaseInput) bool { return c.Name == "update-deployment-image" })
	require.GreaterOrEqual(t, i, 0)
	d, _, err := j.Judge(t.Context(), inputs[i])
	require.NoError(t, err)
	assert.Empty(t, d.Messages)
	require.Len(t, d.Expanded, 1)
	pod := d.Expanded[0].Object
	typ, _, _ := unstructured.NestedString(pod, "spec", "nodeSelector", "accelerator.opendatahub.io/type")
	assert.Equal(t, "nvidia-a100-80gb", typ, "the expanded pod has the profile's one type as a node selector from Gatekeeper's mutators")
	queue, _, _ := unstructured.NestedString(pod, "metadata", "labels", "kueue.x-k8s.io/queue-name")
	assert.Equal(t, "large-gpu", queue)
	// The stored Deployment itself is not given what the mutators give
	// its pods: Gatekeeper's mutators match pods only.
	_, has, _ := unstructured.NestedFieldNoCopy(d.Stored.Object, "spec", "template", "spec", "nodeSelector")
	assert.False(t, has)

	// The same UPDATE naming a profile team model-serving may not use
	// (standard-gpu, data-science's) is judged at the expansion: denied.
	other := inputs[i]
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal(other.ObjectData, &obj))
	require.NoError(t, unstructured.SetNestedField(obj, "standard-gpu", "spec", "template", "metadata", "labels", "accelerator.opendatahub.io/profile"))
	require.NoError(t, unstructured.SetNestedField(obj, "standard-gpu", "spec", "template", "metadata", "annotations", "opendatahub.io/hardware-profile-name"))
	b, err := yaml.Marshal(obj)
	require.NoError(t, err)
	other.ObjectData = b
	d, _, err = j.Judge(t.Context(), other)
	require.NoError(t, err)
	assert.NotEmpty(t, d.Messages)
}

// TestAdmitPolicyOperations: the MutatingAdmissionPolicies label a
// template on the operations their matchConstraints name: a Deployment's
// on UPDATE too, a Job's (whose template cannot change) on CREATE only.
func TestAdmitPolicyOperations(t *testing.T) {
	dir, _, _, tree := example(t, "hetero-prod")
	r, err := engine.NewReviewer(t.Context(), tree)
	require.NoError(t, err)
	m, err := engine.NewMutator(tree, []string{"serving-prod", "ds-notebooks"})
	require.NoError(t, err)
	for _, tc := range []struct {
		file, op string
		labelled bool
	}{
		{"pods/kserve-deployment-odh.yaml", "CREATE", true},
		{"pods/kserve-deployment-odh.yaml", "UPDATE", true},
		{"pods/job-odh.yaml", "CREATE", true},
		{"pods/job-odh.yaml", "UPDATE", false},
	} {
		b, err := os.ReadFile(filepath.Join(dir, "admission", tc.file))
		require.NoError(t, err)
		var obj map[string]any
		require.NoError(t, yaml.Unmarshal(b, &obj))
		u := &unstructured.Unstructured{Object: obj}
		d, err := m.Admit(t.Context(), r, engine.Request{Object: u, OldObject: u.DeepCopy(), Operation: tc.op})
		require.NoError(t, err)
		_, has, _ := unstructured.NestedString(d.Stored.Object, "spec", "template", "metadata", "labels", "accelerator.opendatahub.io/profile")
		assert.Equal(t, tc.labelled, has, "%s %s", tc.op, tc.file)
	}
}

// TestAdmitPodUpdateMutatedSpec: where Gatekeeper's mutating webhook
// receives UPDATEs (its default installation, MutateUpdates), a pod made
// before its namespace moved to deny, relabelled with a profile on
// UPDATE, meets the profile's mutators, which give it node affinity; a
// pod's UPDATE may not change that, so the API server refuses it before
// Gatekeeper validates it. As accelc installs Gatekeeper (mutation on
// CREATE only), the UPDATE reaches the validation unchanged.
func TestAdmitPodUpdateMutatedSpec(t *testing.T) {
	dir, _, _, tree := example(t, "hetero-prod")
	r, err := engine.NewReviewer(t.Context(), tree)
	require.NoError(t, err)
	m, err := engine.NewMutator(tree, []string{"ds-notebooks"})
	require.NoError(t, err)
	m.MutateUpdates = true
	b, err := os.ReadFile(filepath.Join(dir, "admission/updates/job-pod-before-deny.yaml"))
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal(b, &obj))
	old := &unstructured.Unstructured{Object: obj}
	relabelled := old.DeepCopy()
	require.NoError(t, unstructured.SetNestedField(relabelled.Object, "standard-gpu", "metadata", "labels", "accelerator.opendatahub.io/profile"))
	d, err := m.Admit(t.Context(), r, engine.Request{Object: relabelled, OldObject: old, Operation: "UPDATE"})
	require.NoError(t, err)
	assert.Contains(t, d.Refused, "spec.nodeSelector")
	assert.Equal(t, []string{d.Refused}, d.Messages)
	assert.Empty(t, d.Violations, "Gatekeeper's validation never sees it")

	// The finalizer's removal changes nothing the mutators touch.
	done := old.DeepCopy()
	done.SetFinalizers(nil)
	d, err = m.Admit(t.Context(), r, engine.Request{Object: done, OldObject: old, Operation: "UPDATE"})
	require.NoError(t, err)
	assert.Empty(t, d.Refused)

	m.MutateUpdates = false
	d, err = m.Admit(t.Context(), r, engine.Request{Object: relabelled, OldObject: old, Operation: "UPDATE"})
	require.NoError(t, err)
	assert.Empty(t, d.Refused, "mutation on CREATE only: the relabel reaches the validation")
	assert.NotEmpty(t, d.Violations, "and is judged there")
}

// TestAdmitKueueWebhooks: a new pod and Job of a profile Kueue shares out
// are gated and suspended by Kueue's webhooks before Gatekeeper judges
// them, and admitted; where Kueue's webhook skipped them they arrive
// ungated and running, and are refused.
func TestAdmitKueueWebhooks(t *testing.T) {
	_, _, _, tree := example(t, "hetero-prod")
	r, err := engine.NewReviewer(t.Context(), tree)
	require.NoError(t, err)
	m, err := engine.NewMutator(tree, []string{"ml-research"})
	require.NoError(t, err)
	pod := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "p", "namespace": "ml-research", "labels": map[string]any{"accelerator.opendatahub.io/profile": "premium-gpu"}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "image": "x",
				"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": "1"}}}}},
		}}
	}
	job := func() *unstructured.Unstructured {
		p := pod()
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "batch/v1", "kind": "Job",
			"metadata": map[string]any{"name": "j", "namespace": "ml-research", "labels": map[string]any{"kueue.x-k8s.io/queue-name": "premium-gpu"}},
			"spec": map[string]any{"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"accelerator.opendatahub.io/profile": "premium-gpu"}},
				"spec":     map[string]any{"restartPolicy": "Never", "containers": p.Object["spec"].(map[string]any)["containers"]},
			}},
		}}
	}
	d, err := m.Admit(t.Context(), r, engine.Request{Object: pod()})
	require.NoError(t, err)
	assert.Empty(t, d.Messages)
	gates, _, _ := unstructured.NestedSlice(d.Stored.Object, "spec", "schedulingGates")
	assert.Equal(t, []any{map[string]any{"name": engine.KueueGate}}, gates, "gated by Kueue's pod webhook")

	d, err = m.Admit(t.Context(), r, engine.Request{Object: pod(), KueueSkipped: true})
	require.NoError(t, err)
	require.Len(t, d.Messages, 1)
	assert.Contains(t, d.Messages[0], "the pod joins Kueue's LocalQueue premium-gpu (label kueue.x-k8s.io/queue-name) but reached admission without Kueue's scheduling gate")

	d, err = m.Admit(t.Context(), r, engine.Request{Object: job()})
	require.NoError(t, err)
	assert.Empty(t, d.Messages)
	suspended, _, _ := unstructured.NestedBool(d.Stored.Object, "spec", "suspend")
	assert.True(t, suspended, "suspended by Kueue's job webhook")

	d, err = m.Admit(t.Context(), r, engine.Request{Object: job(), KueueSkipped: true})
	require.NoError(t, err)
	assert.Contains(t, strings.Join(d.Messages, "\n"), `Job j: it joins Kueue's LocalQueue premium-gpu (profile "premium-gpu") but reached admission not suspended`)
}
