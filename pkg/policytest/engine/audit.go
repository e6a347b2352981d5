package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"

	"github.com/open-policy-agent/gatekeeper/v3/pkg/gator/reader"
	mutationtypes "github.com/open-policy-agent/gatekeeper/v3/pkg/mutation/types"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/target"
	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/policytest"
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

// serveAudit answers an OpAudit request: every object judged by Audit
// against the tree, and each pod mutated by the enforcing tree's
// mutators, on as many goroutines as there are CPUs.
func serveAudit(ctx context.Context, req *policytest.EngineRequest) ([]policytest.ObjectAudit, error) {
	var data []*unstructured.Unstructured
	for i, d := range req.Data {
		u, err := reader.ReadUnstructured(d)
		if err != nil {
			return nil, fmt.Errorf("data[%d]: %w", i, err)
		}
		data = append(data, u)
	}
	tree := render.Tree(req.Tree)
	r, err := NewReviewer(ctx, tree, data...)
	if err != nil {
		return nil, err
	}
	judge, err := NewMutator(tree, req.Namespaces)
	if err != nil {
		return nil, err
	}
	var enforce *Mutator
	if req.EnforcingTree != nil {
		if enforce, err = NewMutator(render.Tree(req.EnforcingTree), req.Namespaces); err != nil {
			return nil, err
		}
	}
	out := make([]policytest.ObjectAudit, len(req.Objects))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, raw := range req.Objects {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			out[i] = auditOne(gctx, r, judge, enforce, raw)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

func auditOne(ctx context.Context, r *Reviewer, judge, enforce *Mutator, raw []byte) policytest.ObjectAudit {
	var a policytest.ObjectAudit
	obj, err := reader.ReadUnstructured(raw)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	if a.Violations, err = judge.Audit(ctx, r, obj); err != nil {
		a.Error = err.Error()
		return a
	}
	// As if the object were made again: what the API server, the
	// scheduler and controllers set since are not its author's.
	again := obj.DeepCopy()
	delete(again.Object, "status")
	isPod := obj.GetKind() == "Pod" && obj.GroupVersionKind().Group == ""
	if isPod {
		unstructured.RemoveNestedField(again.Object, "spec", "nodeName")
	}
	d, err := judge.Admit(ctx, r, Request{Object: again.DeepCopy()})
	if err != nil {
		a.Error = err.Error()
		return a
	}
	a.Recreated = d.Violations
	if enforce == nil || !isPod {
		return a
	}
	mutated, err := enforce.MutateObject(again)
	if err != nil {
		a.Error = err.Error()
		return a
	}
	if a.Enforced, err = json.Marshal(mutated.Object); err != nil {
		a.Error = err.Error()
	}
	return a
}
