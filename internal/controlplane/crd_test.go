package controlplane_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestHardwareProfileCRDIsODHs keeps the end-to-end tests' HardwareProfile
// CRD (tools/e2e/crds, accelc's own: the proxy does not serve ODH's
// operator) to what ODH's v1 types generate: spec required at the root,
// and v1alpha1 served beside v1, which is stored, with the same schema.
func TestHardwareProfileCRDIsODHs(t *testing.T) {
	b, err := os.ReadFile("../../tools/e2e/crds/infrastructure.opendatahub.io_hardwareprofiles.yaml")
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.UnmarshalStrict(b, &crd))
	served := map[string]bool{}
	var stored []string
	for _, v := range crd.Spec.Versions {
		served[v.Name] = v.Served
		if v.Storage {
			stored = append(stored, v.Name)
		}
		require.NotNil(t, v.Schema, v.Name)
		root := v.Schema.OpenAPIV3Schema
		assert.Contains(t, root.Required, "spec", "%s: ODH's HardwareProfile requires spec", v.Name)
		assert.Equal(t, crd.Spec.Versions[0].Schema, v.Schema, "%s: the schema of every version is v1's", v.Name)
	}
	assert.Equal(t, map[string]bool{"v1": true, "v1alpha1": true}, served)
	assert.Equal(t, []string{"v1"}, stored)
}
