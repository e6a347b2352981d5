package engine

// Judging admission cases: each case admitted and checked against what it
// expects.

import (
	"context"
	"fmt"
	"sort"

	"github.com/open-policy-agent/frameworks/constraint/pkg/types"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/gator/reader"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/gator/verify"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/render"
)

// JudgeCases judges admission cases as a live cluster of the tree judges
// their requests, with nodes synced, and checks each case's expectations
// against each constraint as a gator suite's case would (the assertions
// of policytest.CaseTest), so that a failure reads as gator's.
func JudgeCases(ctx context.Context, tree render.Tree, nodes [][]byte, cases []policytest.CaseInput) ([]policytest.CaseResult, error) {
	j, err := NewCaseJudge(ctx, tree, nodes, cases)
	if err != nil {
		return nil, err
	}
	tests, err := policytest.CaseTests(tree)
	if err != nil {
		return nil, err
	}
	var out []policytest.CaseResult
	for _, tc := range cases {
		d, ns, err := j.Judge(ctx, tc)
		for _, t := range tests {
			res := policytest.CaseResult{Test: t.Name, Case: tc.Name, Err: err}
			switch {
			case err == nil && d.Refused != "":
				// No case says this: the request never reaches
				// Gatekeeper's validation.
				res.Err = fmt.Errorf("refused before Gatekeeper validates it: %s", d.Refused)
			case err == nil:
				res.Err = check(t, tc.Case, ns, d.Violations)
			}
			out = append(out, res)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Case != out[j].Case {
			return out[i].Case < out[j].Case
		}
		return out[i].Test < out[j].Test
	})
	return out, nil
}

// check runs a case's assertions against one constraint's violations with
// gator's own Assertion, stopping at the first that fails, as gator does.
func check(t policytest.CaseTest, tc policytest.Case, ns string, vs []Violation) error {
	var results []*types.Result
	for _, v := range vs {
		if v.Kind+"/"+v.Constraint == t.Name {
			results = append(results, &types.Result{Msg: v.Message})
		}
	}
	for _, a := range t.Assertions(tc, ns) {
		count := intstr.FromString(a.Violations)
		ga := verify.Assertion{Violations: &count}
		if a.Message != "" {
			msg := a.Message
			ga.Message = &msg
		}
		if err := ga.Run(results); err != nil {
			return err
		}
	}
	return nil
}

// CaseJudge judges admission cases against one tree.
type CaseJudge struct {
	mutator  *Mutator
	reviewer *Reviewer
}

// NewCaseJudge loads the tree, with nodes (manifests) as synced data, for
// the cases' namespaces.
func NewCaseJudge(ctx context.Context, tree render.Tree, nodes [][]byte, cases []policytest.CaseInput) (*CaseJudge, error) {
	var synced []*unstructured.Unstructured
	for i, n := range nodes {
		u, err := reader.ReadUnstructured(n)
		if err != nil {
			return nil, fmt.Errorf("node %d: %w", i, err)
		}
		synced = append(synced, u)
	}
	r, err := NewReviewer(ctx, tree, synced...)
	if err != nil {
		return nil, err
	}
	var namespaces []string
	seen := map[string]bool{}
	for _, tc := range cases {
		obj, err := reader.ReadUnstructured(tc.ObjectData)
		if err != nil {
			return nil, fmt.Errorf("case %s: %s: %w", tc.Name, tc.Object, err)
		}
		if ns := obj.GetNamespace(); !seen[ns] {
			seen[ns] = true
			namespaces = append(namespaces, ns)
		}
	}
	m, err := NewMutator(tree, namespaces)
	if err != nil {
		return nil, err
	}
	return &CaseJudge{mutator: m, reviewer: r}, nil
}

// Judge is what admission does with a case's request, and the namespace
// of its object. The object and old object are first encoded as the API
// server encodes them (Encoded). An UPDATE, and a CREATE with mutate, go
// through the whole admission path (Mutator.Admit): the
// MutatingAdmissionPolicies for the operations they name, Gatekeeper's
// mutation, then its validation with the old object. A CREATE without
// mutate reaches Gatekeeper's validating webhook as written
// (Mutator.Validate), whose expansions are mutated all the same.
func (j *CaseJudge) Judge(ctx context.Context, tc policytest.CaseInput) (Decision, string, error) {
	obj, err := reader.ReadUnstructured(tc.ObjectData)
	if err != nil {
		return Decision{}, "", fmt.Errorf("%s: %w", tc.Object, err)
	}
	if obj, err = Encoded(obj); err != nil {
		return Decision{}, "", fmt.Errorf("%s: %w", tc.Object, err)
	}
	req := Request{Object: obj, Operation: tc.Operation, SubResource: tc.SubResource, User: tc.User}
	if tc.OldObjectData != nil {
		old, err := reader.ReadUnstructured(tc.OldObjectData)
		if err != nil {
			return Decision{}, "", fmt.Errorf("%s: %w", tc.OldObject, err)
		}
		if req.OldObject, err = Encoded(old); err != nil {
			return Decision{}, "", fmt.Errorf("%s: %w", tc.OldObject, err)
		}
	}
	var d Decision
	if tc.Mutate || tc.Operation == string(admissionv1.Update) {
		d, err = j.mutator.Admit(ctx, j.reviewer, req)
	} else {
		d, err = j.mutator.Validate(ctx, j.reviewer, req)
	}
	if err != nil {
		return d, "", fmt.Errorf("%s: %w", tc.Object, err)
	}
	return d, obj.GetNamespace(), nil
}

// Encoded is obj as the API server hands it to admission: decoded into
// its Kubernetes type and encoded again, so that what the type does not
// hold is gone and what it omits when empty is absent (an empty list of
// an omitempty field, a quantity in its canonical form), as the webhook
// sees it. A kind Kubernetes' own types do not hold (a CRD's) is as
// written.
func Encoded(obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := obj.GroupVersionKind()
	typed, err := scheme.Scheme.New(gvk)
	if err != nil {
		return obj, nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, typed); err != nil {
		return nil, fmt.Errorf("%s %s: not a valid %s: %w", gvk.Kind, obj.GetName(), gvk.Kind, err)
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return nil, err
	}
	out := &unstructured.Unstructured{Object: u}
	out.SetGroupVersionKind(gvk)
	// The API server sets it; the converter writes the zero time as null.
	if ts, ok, _ := unstructured.NestedFieldNoCopy(u, "metadata", "creationTimestamp"); ok && ts == nil {
		unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
	}
	return out, nil
}
