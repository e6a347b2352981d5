package engine

// Reviewing objects as Gatekeeper's validating webhook does, against a
// rendered tree's templates and constraints.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/gatekeeper/v3/apis"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/gator"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/gator/reader"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/target"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/accelc/accelc/pkg/render"
)

// Reviewer judges objects as Gatekeeper's validating webhook does, with its
// own constraint framework: a rendered tree's templates and constraints,
// and as synced data the tree's HardwareProfiles, NamespaceEntitlements
// and PriorityClasses plus the Nodes given.
type Reviewer struct {
	client gator.Client
	// memo, when set, keeps the judgement of each pod shape reviewed
	// outside an admission request (Memoize).
	memo *sync.Map
}

// Memoize makes r judge each pod it reviews outside an admission request
// once per shape — the pod without what identifies it (name, uid,
// owners), which no policy reads — and its operation: a workload's
// ReplicaSets and replicas expand to pods alike. For audits, where the
// synced data does not change.
func (r *Reviewer) Memoize() { r.memo = &sync.Map{} }

// memoKey is a pod's shape under an operation, or "" for what is not
// memoized.
func memoKey(obj any) string {
	au, ok := obj.(target.AugmentedUnstructured)
	if !ok || au.Object.GetKind() != "Pod" || au.Object.GroupVersionKind().Group != "" {
		return ""
	}
	b, err := json.Marshal(withoutIdentity(&au.Object).Object)
	if err != nil {
		return ""
	}
	return string(au.Operation) + " " + string(au.Source) + " " + string(b)
}

// NewReviewer loads the tree once.
func NewReviewer(ctx context.Context, tree render.Tree, nodes ...*unstructured.Unstructured) (*Reviewer, error) {
	s := runtime.NewScheme()
	if err := apis.AddToScheme(s); err != nil {
		return nil, err
	}
	client, err := gator.NewOPAClient(false)
	if err != nil {
		return nil, err
	}
	var constraints, data []*unstructured.Unstructured
	for _, p := range tree.Paths() {
		if strings.HasSuffix(p, "kustomization.yaml") {
			continue
		}
		u, err := reader.ReadUnstructured(tree[p])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		switch {
		case u.GetKind() == "ConstraintTemplate":
			t, err := reader.ToTemplate(s, u)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
			if _, err := client.AddTemplate(ctx, t); err != nil {
				return nil, fmt.Errorf("%s: %w", p, err)
			}
		case strings.HasPrefix(u.GetAPIVersion(), "constraints.gatekeeper.sh/"):
			constraints = append(constraints, u)
		case slices.Contains([]string{"HardwareProfile", "NamespaceEntitlement", "PriorityClass"}, u.GetKind()):
			data = append(data, u)
		}
	}
	for _, c := range constraints {
		if _, err := client.AddConstraint(ctx, c); err != nil {
			return nil, err
		}
	}
	for _, d := range append(data, nodes...) {
		if _, err := client.AddData(ctx, d); err != nil {
			return nil, err
		}
	}
	return &Reviewer{client: client}, nil
}

// Review returns the violations' messages of obj judged as written, as a
// CREATE; none: admitted.
func (r *Reviewer) Review(ctx context.Context, obj *unstructured.Unstructured) ([]string, error) {
	return r.review(ctx, target.AugmentedUnstructured{Object: *obj})
}

// withoutIdentity is a copy of a pod without what identifies it (name,
// uid, owners, version), which no policy reads: replicas of one workload
// are alike without it.
func withoutIdentity(obj *unstructured.Unstructured) *unstructured.Unstructured {
	c := obj.DeepCopy()
	for _, f := range []string{"name", "generateName", "uid", "resourceVersion", "creationTimestamp", "ownerReferences", "managedFields"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	return c
}
