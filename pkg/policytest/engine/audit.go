package engine

// Gatekeeper's audit: each stored object and the pods its controllers
// make judged as the audit judges them.

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

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
// against the tree and again as if made now, and each pod mutated by the
// enforcing tree's mutators, on as many goroutines as there are CPUs.
//
// Pods are judged once per shape: the replicas of a workload differ only
// in what identifies them, which no policy reads, and in their node, which
// the policies read through the synced Node. Pods whose shapes are equal
// and whose nodes are synced alike share one judgement, the node's name in
// its messages ("spec.nodeName <node>") put back; made again, with no
// node, they share one regardless.
func serveAudit(ctx context.Context, req *policytest.EngineRequest) ([]policytest.ObjectAudit, error) {
	var data []*unstructured.Unstructured
	nodeClass := map[string]string{}
	for i, d := range req.Data {
		u, err := reader.ReadUnstructured(d)
		if err != nil {
			return nil, fmt.Errorf("data[%d]: %w", i, err)
		}
		data = append(data, u)
		if u.GetKind() == "Node" {
			c := u.DeepCopy()
			c.SetName("")
			b, err := json.Marshal(c.Object)
			if err != nil {
				return nil, err
			}
			nodeClass[u.GetName()] = string(b)
		}
	}
	tree := render.Tree(req.Tree)
	r, err := NewReviewer(ctx, tree, data...)
	if err != nil {
		return nil, err
	}
	r.Memoize()
	judge, err := NewMutator(tree, req.Namespaces)
	if err != nil {
		return nil, err
	}
	kueue, err := readKueueIdentities(tree)
	if err != nil {
		return nil, err
	}
	var enforce *Mutator
	if req.EnforcingTree != nil {
		if enforce, err = NewMutator(render.Tree(req.EnforcingTree), req.Namespaces); err != nil {
			return nil, err
		}
	}
	objs := make([]*unstructured.Unstructured, len(req.Objects))
	stored := map[string][]int{} // shape as stored → objects
	again := map[string][]int{}  // shape made again → objects
	var storedOrder, againOrder []string
	out := make([]policytest.ObjectAudit, len(req.Objects))
	for i, raw := range req.Objects {
		if objs[i], err = reader.ReadUnstructured(raw); err != nil {
			out[i].Error = err.Error()
			continue
		}
		sk, ak := shapes(objs[i], nodeClass, i)
		if _, ok := stored[sk]; !ok {
			storedOrder = append(storedOrder, sk)
		}
		stored[sk] = append(stored[sk], i)
		if _, ok := again[ak]; !ok {
			againOrder = append(againOrder, ak)
		}
		again[ak] = append(again[ak], i)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, k := range storedOrder {
		idx := stored[k]
		if objs[idx[0]] == nil {
			continue
		}
		g.Go(func() error {
			vs, err := judge.Audit(gctx, r, objs[idx[0]])
			for _, i := range idx {
				if err != nil {
					out[i].Error = err.Error()
					continue
				}
				out[i].Violations = onNode(vs, nodeName(objs[idx[0]]), nodeName(objs[i]))
			}
			return gctx.Err()
		})
	}
	for _, k := range againOrder {
		idx := again[k]
		if objs[idx[0]] == nil {
			continue
		}
		g.Go(func() error {
			recreated, enforced, err := madeAgain(gctx, r, judge, enforce, kueue, objs[idx[0]])
			for _, i := range idx {
				if err != nil {
					out[i].Error = err.Error()
					continue
				}
				out[i].Recreated, out[i].Enforced = recreated, enforced
			}
			return gctx.Err()
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// shapes are an object's keys for sharing judgements: as stored (a pod
// without what identifies it, its node by how it is synced) and made
// again (without its node and status too). Objects other than pods are
// their own: messages name a workload or claim.
func shapes(obj *unstructured.Unstructured, nodeClass map[string]string, i int) (stored, again string) {
	if obj.GetKind() != "Pod" || obj.GroupVersionKind().Group != "" {
		own := fmt.Sprintf("object %d", i)
		return own, own
	}
	c := withoutIdentity(obj)
	node := nodeName(obj)
	class, synced := nodeClass[node]
	if !synced {
		class = "node " + node
	}
	if node != "" {
		_ = unstructured.SetNestedField(c.Object, class, "spec", "nodeName")
	}
	s, _ := json.Marshal(c.Object)
	delete(c.Object, "status")
	unstructured.RemoveNestedField(c.Object, "spec", "nodeName")
	a, _ := json.Marshal(c.Object)
	return string(s), string(a)
}

func nodeName(obj *unstructured.Unstructured) string {
	n, _, _ := unstructured.NestedString(obj.Object, "spec", "nodeName")
	return n
}

// onNode is a judgement of a pod on node from moved to node to: the
// policies name a pod's node only as "spec.nodeName <node>".
func onNode(vs []policytest.Violation, from, to string) []policytest.Violation {
	if from == to {
		return vs
	}
	out := make([]policytest.Violation, len(vs))
	for i, v := range vs {
		v.Message = strings.ReplaceAll(v.Message, "spec.nodeName "+from+" ", "spec.nodeName "+to+" ")
		out[i] = v
	}
	return out
}

// madeAgain judges an object as if it were made now (without its status,
// a pod without its node) through the tree's own admission, and mutates
// a pod with enforce's mutators. A pod whose controller is a kind Kueue
// admits whole is made again by that controller, as its own identity.
func madeAgain(ctx context.Context, r *Reviewer, judge, enforce *Mutator, kueue kueueIdentities, obj *unstructured.Unstructured) ([]policytest.Violation, []byte, error) {
	again := obj.DeepCopy()
	delete(again.Object, "status")
	isPod := obj.GetKind() == "Pod" && obj.GroupVersionKind().Group == ""
	if isPod {
		unstructured.RemoveNestedField(again.Object, "spec", "nodeName")
	}
	req := Request{Object: again.DeepCopy()}
	if key, _, _ := controllerOwner(again.Object["metadata"].(map[string]any)); key != "" && len(kueue.controllers[key]) > 0 {
		req.User = kueue.controllers[key][0]
	}
	d, err := judge.Admit(ctx, r, req)
	if err != nil {
		return nil, nil, err
	}
	if enforce == nil || !isPod {
		return d.Violations, nil, nil
	}
	mutated, err := enforce.MutateObject(again)
	if err != nil {
		return nil, nil, err
	}
	enforced, err := json.Marshal(mutated.Object)
	return d.Violations, enforced, err
}
