package render_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// The API server converts the object and encodes, patches and decodes
// it again for each mutation of a MutatingAdmissionPolicy, an empty
// patch included: every policy accelc renders for the examples is one
// mutation, and holds back by a match condition the objects it would
// not change.
func TestMutatingPoliciesOneMutationEach(t *testing.T) {
	for _, name := range exampleClusters(t) {
		tree := renderExample(t, name)
		seen := 0
		for _, p := range tree.Paths() {
			if !strings.HasPrefix(p, "mutations/mutatingadmissionpolicy-") {
				continue
			}
			var mp admissionregistrationv1.MutatingAdmissionPolicy
			require.NoError(t, yaml.UnmarshalStrict(tree[p], &mp), p)
			seen++
			assert.Len(t, mp.Spec.Mutations, 1, "%s: %s", name, p)
			assert.NotEmpty(t, mp.Spec.MatchConditions, "%s: %s", name, p)
		}
		assert.NotZero(t, seen, name)
	}
}
