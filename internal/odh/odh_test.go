package odh

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/render"
)

const label = "accelerator.opendatahub.io/profile"

func queueOf(p string) string {
	return map[string]string{"standard-gpu": "standard-gpu", "by-node": ""}[p]
}

func TestQueueLabelled(t *testing.T) {
	for _, tc := range []struct {
		name, object string
		want         string // the queue label after; "" for none
		changed      bool
	}{
		{"a pod naming its profile by annotation", `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns, annotations: {opendatahub.io/hardware-profile-name: standard-gpu}}`, "standard-gpu", true},
		{"a Notebook as the dashboard writes it", `
apiVersion: kubeflow.org/v1
kind: Notebook
metadata: {name: nb, namespace: ns, labels: {app: nb}, annotations: {opendatahub.io/hardware-profile-name: standard-gpu}}
spec: {template: {spec: {containers: [{name: nb}]}}}`, "standard-gpu", true},
		{"a Deployment whose template names the profile", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns}
spec: {template: {metadata: {annotations: {opendatahub.io/hardware-profile-name: standard-gpu}}}}`, "standard-gpu", true},
		{"a pod that names its profile by label is ODH's no more", `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns, labels: {accelerator.opendatahub.io/profile: standard-gpu}, annotations: {opendatahub.io/hardware-profile-name: standard-gpu}}`, "", false},
		{"a Deployment whose template has the profile label", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ns}
spec: {template: {metadata: {labels: {accelerator.opendatahub.io/profile: standard-gpu}, annotations: {opendatahub.io/hardware-profile-name: standard-gpu}}}}`, "", false},
		{"a pod that joins a queue already keeps it", `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns, labels: {kueue.x-k8s.io/queue-name: gpu}, annotations: {opendatahub.io/hardware-profile-name: standard-gpu}}`, "gpu", false},
		{"a profile that schedules by node gets no queue", `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns, annotations: {opendatahub.io/hardware-profile-name: by-node}}`, "", false},
		{"a pod naming no profile", `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns}`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var obj unstructured.Unstructured
			require.NoError(t, yaml.Unmarshal([]byte(tc.object), &obj.Object))
			assert.Equal(t, tc.changed, QueueLabelled(&obj, label, queueOf))
			assert.Equal(t, tc.want, obj.GetLabels()[render.QueueNameLabel])
		})
	}
}

// Every difference is named with why, and under an example's case.
func TestOlderMinorDiffersSay(t *testing.T) {
	for id, why := range OlderMinorDiffers {
		assert.Regexp(t, `^[a-z0-9-]+/[a-z0-9-]+$`, id)
		assert.NotEmpty(t, why, id)
	}
}
