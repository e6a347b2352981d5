package audit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"sigs.k8s.io/yaml"
)

// requiredValues reads terms as the scheduler does: a term's expressions
// ANDed (so an In that enforcement adds narrows the pod's own In, and a
// NotIn takes values out), the terms ORed.
func TestRequiredValues(t *testing.T) {
	const key = "accelerator.opendatahub.io/type"
	for _, tc := range []struct {
		name, terms string
		want        []string
	}{
		{"one In", `[{matchExpressions: [{key: ` + key + `, operator: In, values: [a, b]}]}]`, []string{"a", "b"}},
		{"two Ins in a term intersect", `[{matchExpressions: [{key: ` + key + `, operator: In, values: [a, b]}, {key: ` + key + `, operator: In, values: [b, c]}]}]`, []string{"b"}},
		{"NotIn takes out", `[{matchExpressions: [{key: ` + key + `, operator: In, values: [a, b]}, {key: ` + key + `, operator: NotIn, values: [a]}]}]`, []string{"b"}},
		{"Ins that exclude each other allow nothing", `[{matchExpressions: [{key: ` + key + `, operator: In, values: [a]}, {key: ` + key + `, operator: In, values: [b]}]}]`, nil},
		{"terms unite", `[{matchExpressions: [{key: ` + key + `, operator: In, values: [a]}]}, {matchExpressions: [{key: ` + key + `, operator: In, values: [c]}]}]`, []string{"a", "c"}},
		{"other keys and unbounded terms add nothing", `[{matchExpressions: [{key: zone, operator: In, values: [z]}]}, {matchExpressions: [{key: ` + key + `, operator: NotIn, values: [a]}]}]`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var terms []any
			if err := yaml.Unmarshal([]byte(tc.terms), &terms); err != nil {
				t.Fatal(err)
			}
			assert.Equal(t, tc.want, requiredValues(terms, key))
		})
	}
}
