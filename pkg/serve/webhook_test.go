package serve_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/serve"
)

const profileLabel = "accelerator.opendatahub.io/profile"

// mutations are hetero-prod's, in short: the profile label in every
// namespace but one that does not deny, and the premium-gpu queue in
// ml-research.
var mutations = &render.AdmissionMutations{
	ProfileLabel: profileLabel,
	NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"dry-run-ns"},
	}}},
	JobQueues: map[string][]render.GangLabels{"batch/Job": {{
		Profile: "premium-gpu", Namespaces: []string{"ml-research"},
		Labels: map[string]string{render.QueueNameLabel: "premium-gpu", render.WorkloadPriorityLabel: "training"},
	}}},
}

// review sends the object (YAML) under op in ns through the handler and
// returns the object as the API server stores it after the patch, and
// the patch.
func review(t *testing.T, op admissionv1.Operation, ns, object string) (map[string]any, []byte) {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(object))
	require.NoError(t, err)
	in := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: "a-uid", Operation: op, Namespace: ns,
			Object: runtime.RawExtension{Raw: raw},
		},
	}
	body, err := json.Marshal(in)
	require.NoError(t, err)
	srv := httptest.NewServer(serve.MutateHandler(func() *render.AdmissionMutations { return mutations }))
	defer srv.Close()
	resp, err := http.Post(srv.URL+serve.MutatePath, "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out admissionv1.AdmissionReview
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.NotNil(t, out.Response)
	assert.Equal(t, "admission.k8s.io/v1", out.APIVersion)
	assert.Equal(t, in.Request.UID, out.Response.UID)
	assert.True(t, out.Response.Allowed, "the webhook never refuses")
	patched := raw
	if len(out.Response.Patch) > 0 {
		require.NotNil(t, out.Response.PatchType)
		assert.Equal(t, admissionv1.PatchTypeJSONPatch, *out.Response.PatchType)
		p, err := jsonpatch.DecodePatch(out.Response.Patch)
		require.NoError(t, err)
		patched, err = p.Apply(raw)
		require.NoError(t, err, "the patch applies to the object: %s", out.Response.Patch)
	} else {
		assert.Nil(t, out.Response.PatchType)
	}
	var obj map[string]any
	require.NoError(t, json.Unmarshal(patched, &obj))
	return obj, out.Response.Patch
}

func labelsAt(obj map[string]any, path ...string) map[string]any {
	cur := obj
	for _, p := range append(path, "metadata") {
		next, _ := cur[p].(map[string]any)
		cur = next
	}
	l, _ := cur["labels"].(map[string]any)
	return l
}

func TestWebhookPod(t *testing.T) {
	// A pod as ODH's notebook controller makes it: the annotation, no
	// labels at all.
	obj, _ := review(t, admissionv1.Create, "ml-research", `
apiVersion: v1
kind: Pod
metadata: {name: nb-0, namespace: ml-research, annotations: {opendatahub.io/hardware-profile-name: premium-gpu}}
spec: {containers: [{name: main, image: x}]}
`)
	assert.Equal(t, map[string]any{profileLabel: "premium-gpu"}, labelsAt(obj))

	// With labels of its own: the one label added, a key with a slash
	// escaped in the pointer.
	obj, patch := review(t, admissionv1.Create, "ml-research", `
apiVersion: v1
kind: Pod
metadata: {name: nb-0, labels: {app: nb}, annotations: {opendatahub.io/hardware-profile-name: premium-gpu}}
spec: {containers: [{name: main, image: x}]}
`)
	assert.Equal(t, map[string]any{"app": "nb", profileLabel: "premium-gpu"}, labelsAt(obj))
	assert.Contains(t, string(patch), `accelerator.opendatahub.io~1profile`)
}

// What the webhook leaves alone: a label the pod has (one that disagrees
// with the annotation is the validation's to refuse), a pod naming no
// profile, a namespace the mutations do not apply in, an UPDATE of a
// pod, and a subresource.
func TestWebhookLeavesAlone(t *testing.T) {
	for name, tc := range map[string]struct {
		op     admissionv1.Operation
		ns     string
		object string
	}{
		"labelled": {admissionv1.Create, "ml-research", `
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {accelerator.opendatahub.io/profile: large-gpu}, annotations: {opendatahub.io/hardware-profile-name: premium-gpu}}
`},
		"no profile": {admissionv1.Create, "ml-research", `
apiVersion: v1
kind: Pod
metadata: {name: p, labels: {app: x}}
`},
		"other namespace": {admissionv1.Create, "dry-run-ns", `
apiVersion: v1
kind: Pod
metadata: {name: p, annotations: {opendatahub.io/hardware-profile-name: premium-gpu}}
`},
		"pod update": {admissionv1.Update, "ml-research", `
apiVersion: v1
kind: Pod
metadata: {name: p, annotations: {opendatahub.io/hardware-profile-name: premium-gpu}}
`},
		"job in a namespace without the queue": {admissionv1.Create, "serving-prod", `
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec: {template: {metadata: {labels: {accelerator.opendatahub.io/profile: premium-gpu}}}}
`},
		"job of an unqueued profile": {admissionv1.Create, "ml-research", `
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec: {template: {metadata: {labels: {accelerator.opendatahub.io/profile: large-gpu}}}}
`},
	} {
		t.Run(name, func(t *testing.T) {
			_, patch := review(t, tc.op, tc.ns, tc.object)
			assert.Empty(t, patch)
		})
	}
}

func TestWebhookWorkloadTemplates(t *testing.T) {
	// A Deployment's template, on CREATE and on UPDATE.
	for _, op := range []admissionv1.Operation{admissionv1.Create, admissionv1.Update} {
		obj, _ := review(t, op, "serving-prod", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: serving-prod}
spec:
  template:
    metadata: {labels: {app: d}, annotations: {opendatahub.io/hardware-profile-name: large-gpu}}
`)
		assert.Equal(t, map[string]any{"app": "d", profileLabel: "large-gpu"}, labelsAt(obj, "spec", "template"), op)
		assert.Nil(t, labelsAt(obj), "the Deployment itself is not labelled")
	}
	// A LeaderWorkerSet's two templates, each from its own annotation.
	obj, _ := review(t, admissionv1.Create, "ml-research", `
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: l}
spec:
  leaderWorkerTemplate:
    leaderTemplate: {metadata: {annotations: {opendatahub.io/hardware-profile-name: cpu}}}
    workerTemplate: {metadata: {annotations: {opendatahub.io/hardware-profile-name: premium-gpu}}}
`)
	assert.Equal(t, map[string]any{profileLabel: "cpu"}, labelsAt(obj, "spec", "leaderWorkerTemplate", "leaderTemplate"))
	assert.Equal(t, map[string]any{profileLabel: "premium-gpu"}, labelsAt(obj, "spec", "leaderWorkerTemplate", "workerTemplate"))
	// A Notebook is labelled itself: its controller copies its labels.
	obj, _ = review(t, admissionv1.Create, "ml-research", `
apiVersion: kubeflow.org/v1
kind: Notebook
metadata: {name: n, annotations: {opendatahub.io/hardware-profile-name: premium-gpu}}
spec: {template: {spec: {containers: [{name: n, image: x}]}}}
`)
	assert.Equal(t, map[string]any{profileLabel: "premium-gpu"}, labelsAt(obj))
}

func TestWebhookJob(t *testing.T) {
	// A new Job whose template names a queued profile by annotation: the
	// template's label, the Job's queue and priority.
	obj, _ := review(t, admissionv1.Create, "ml-research", `
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ml-research}
spec:
  template:
    metadata: {annotations: {opendatahub.io/hardware-profile-name: premium-gpu}}
    spec: {restartPolicy: Never, containers: [{name: main, image: x}]}
`)
	assert.Equal(t, map[string]any{render.QueueNameLabel: "premium-gpu", render.WorkloadPriorityLabel: "training"}, labelsAt(obj))
	assert.Equal(t, map[string]any{profileLabel: "premium-gpu"}, labelsAt(obj, "spec", "template"))

	// A queue the Job names is kept (the entitlement policy judges it).
	obj, _ = review(t, admissionv1.Create, "ml-research", `
apiVersion: batch/v1
kind: Job
metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: mine}}
spec: {template: {metadata: {labels: {accelerator.opendatahub.io/profile: premium-gpu}}}}
`)
	assert.Equal(t, map[string]any{render.QueueNameLabel: "mine", render.WorkloadPriorityLabel: "training"}, labelsAt(obj))
}

func TestWebhookBadRequests(t *testing.T) {
	srv := httptest.NewServer(serve.MutateHandler(func() *render.AdmissionMutations { return mutations }))
	defer srv.Close()
	for _, body := range []string{"not json", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`} {
		resp, err := http.Post(srv.URL+serve.MutatePath, "application/json", bytes.NewReader([]byte(body)))
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, body)
	}
	resp, err := http.Get(srv.URL + serve.MutatePath)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}
