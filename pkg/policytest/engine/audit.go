package engine

import (
	"context"
	"fmt"

	mutationtypes "github.com/open-policy-agent/gatekeeper/v3/pkg/mutation/types"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/target"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/render"
)

// Audit judges an object the cluster holds as Gatekeeper's audit does:
// the object itself, under no admission request (so no operation and no
// old object), and each pod its ExpansionTemplates make, mutated as its
// controller's pods would be, each violation of those prefixed
// "[Implied by <template>] " and reported against the object. A Notebook
// is judged as its pod by the policies themselves.
func (m *Mutator) Audit(ctx context.Context, r *Reviewer, obj *unstructured.Unstructured) ([]Violation, error) {
	out, err := r.violations(ctx, target.AugmentedUnstructured{Object: *obj, Source: mutationtypes.SourceTypeOriginal})
	if err != nil {
		return nil, err
	}
	if w, ok := render.WorkloadKindOf(obj.GroupVersionKind().Group, obj.GetKind()); ok && w.ObjectLabels {
		return out, nil
	}
	resultants, err := m.expander.Expand(obj)
	if err != nil {
		return nil, err
	}
	for _, res := range resultants {
		vs, err := r.violations(ctx, target.AugmentedUnstructured{Object: *res.Obj, Source: mutationtypes.SourceTypeGenerated})
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			v.Message = fmt.Sprintf("[Implied by %s] %s", res.TemplateName, v.Message)
			out = append(out, v)
		}
	}
	return out, nil
}
