package controlplane

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The audit's values become the manager's flags; the webhooks' are read
// for scopeWebhooks.
func TestParseGatekeeperValues(t *testing.T) {
	v, err := ParseGatekeeperValues([]byte(`auditInterval: 60
auditMatchKindOnly: true
validatingWebhookCustomRules:
- apiGroups: [""]
  apiVersions: ["*"]
  operations: [CREATE, UPDATE]
  resources: [pods, pods/ephemeralcontainers]
  scope: Namespaced
validatingWebhookMatchConditions:
- name: not-kueue
  expression: '!(request.operation == "UPDATE")'
validatingWebhookExemptNamespacesLabels:
  kubernetes.io/metadata.name: [kube-system]
`))
	require.NoError(t, err)
	assert.Equal(t, []string{"--audit-interval=60", "--audit-match-kind-only=true"}, v.flags())
	require.Len(t, v.ValidatingWebhookCustomRules, 1)
	assert.Equal(t, []string{"pods", "pods/ephemeralcontainers"}, v.ValidatingWebhookCustomRules[0].Resources)
	assert.Equal(t, "not-kueue", v.ValidatingWebhookMatchConditions[0].Name)
	assert.Equal(t, map[string][]string{"kubernetes.io/metadata.name": {"kube-system"}}, v.ValidatingWebhookExemptNamespacesLabels)
	assert.Nil(t, v.MutatingWebhookCustomRules, "unset: the harness's rules stay")

	none, err := ParseGatekeeperValues(nil)
	require.NoError(t, err)
	assert.Empty(t, none.flags(), "no values: the harness's own flags")
}

// A key the harness cannot install is refused, not ignored: a benchmark
// must not measure a Gatekeeper other than the values say.
func TestParseGatekeeperValuesUnknownKey(t *testing.T) {
	_, err := ParseGatekeeperValues([]byte("auditInterval: 60\nreplicas: 3\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown field "replicas"`)
	assert.Contains(t, err.Error(), "internal/controlplane/gatekeepervalues.go")
}

// Every values file accelc renders (the goldens) is one the harness can
// install, so the benchmark measures Gatekeeper as the docs install it.
func TestParseGatekeeperValuesRendered(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "golden*", "*", "mutations", "configmap-accelc-gatekeeper-values.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no rendered Gatekeeper values under testdata/golden*/")
	for _, f := range files {
		objs, err := ReadObjects(f)
		require.NoError(t, err, f)
		require.Len(t, objs, 1, f)
		values, _, _ := unstructured.NestedString(objs[0].Object, "data", "values.yaml")
		require.NotEmpty(t, values, "%s: no data.values.yaml", f)
		_, err = ParseGatekeeperValues([]byte(values))
		assert.NoError(t, err, f)
	}
}
