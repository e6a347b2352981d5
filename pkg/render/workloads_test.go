package render_test

import (
	"context"
	"slices"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/policies"
)

// TestWorkloadKindsInRego keeps the Rego library's fixed_templates,
// constraint_paths and template_lists, through which it reads the templates of the objects an
// AppWrapper wraps and a workload's lists, equal to WorkloadKinds.
func TestWorkloadKindsInRego(t *testing.T) {
	eval := func(q string) any {
		rs, err := rego.New(rego.Query(q), rego.Module("lib.rego", policies.Lib())).Eval(context.Background())
		require.NoError(t, err)
		require.Len(t, rs, 1, q)
		return rs[0].Expressions[0].Value
	}
	paths, own, lists := map[string]any{}, map[string]any{}, map[string]any{}
	for _, w := range render.WorkloadKinds {
		if w.ObjectLabels || w.Composed {
			continue
		}
		key := w.Group + "/" + w.Kind
		for _, tmpl := range w.Templates {
			in := paths
			if tmpl.Expansion == "" {
				in = own
			}
			ps, _ := in[key].([]any)
			in[key] = append(ps, anys(tmpl.Path))
		}
		for _, l := range w.Lists {
			ls, _ := lists[key].([]any)
			lists[key] = append(ls, map[string]any{"path": anys(l.Path), "template": anys(l.Template), "name": l.Name})
		}
	}
	assert.Equal(t, paths, eval("data.lib.accelc.fixed_templates"))
	assert.Equal(t, own, eval("data.lib.accelc.constraint_paths"))
	assert.Equal(t, lists, eval("data.lib.accelc.template_lists"))
}

func anys(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// TestWorkloadKindsMatched: the admission constraint matches every kind
// whose templates no ExpansionTemplate reaches (in lists, optional, or
// composed by the library), else nothing would judge them before their
// pods.
func TestWorkloadKindsMatched(t *testing.T) {
	for _, w := range render.WorkloadKinds {
		own := slices.ContainsFunc(w.Templates, func(t render.PodTemplate) bool { return t.Expansion == "" })
		if len(w.Lists) == 0 && !w.Composed && !own {
			continue
		}
		matched := slices.ContainsFunc(policies.AdmissionKinds, func(k policies.MatchKind) bool {
			return slices.Contains(k.APIGroups, w.Group) && slices.Contains(k.Kinds, w.Kind)
		})
		assert.True(t, matched, "policies.AdmissionKinds does not match %s/%s", w.Group, w.Kind)
	}
}
