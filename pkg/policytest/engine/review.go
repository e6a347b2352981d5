package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

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
