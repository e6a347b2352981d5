package engine

// Admission as the API server does it: a request through the mutating
// policies, then the validating ones, with the decision.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/open-policy-agent/frameworks/constraint/pkg/client/reviews"
	mutationtypes "github.com/open-policy-agent/gatekeeper/v3/pkg/mutation/types"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/target"
	"github.com/open-policy-agent/gatekeeper/v3/pkg/util"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/render"
)

// Request is one admission request: an object on CREATE, or on UPDATE
// with the object it replaces, possibly through a subresource
// ("ephemeralcontainers"), by a user.
type Request struct {
	Object      *unstructured.Unstructured
	OldObject   *unstructured.Unstructured
	Operation   string // CREATE (default) or UPDATE
	SubResource string
	// User is the request's userInfo.username: who makes or changes the
	// object (a controller's service account, Kueue's); "" is DefaultUser.
	User string
	// KueueSkipped says that Kueue's pod or job webhook did not run on the
	// request though Kueue queues its namespace: the webhook failed open,
	// or the cluster's Kueue selects other namespaces than accelc renders.
	KueueSkipped bool
}

// DefaultUser is the user of a Request that names none: an ordinary user,
// neither a controller nor Kueue.
const DefaultUser = "accelc-test"

// Decision is what admission does with a Request.
type Decision struct {
	// Stored is the object as the API server would store it: after
	// accelc's MutatingAdmissionPolicies and, for a pod, Gatekeeper's
	// mutators.
	Stored *unstructured.Unstructured
	// Expanded are the pods Gatekeeper's ExpansionTemplates make of a
	// workload, mutated as its controller's pods will be.
	Expanded []*unstructured.Unstructured
	// Messages are the violations, a workload's expansions' prefixed
	// "[Implied by <template>] " as Gatekeeper prefixes them. None:
	// admitted.
	Messages []string
	// Violations are the Messages with the constraints that found them
	// and their enforcement actions.
	Violations []Violation
	// Refused, when set, says why the API server refuses the request
	// after the mutations and before Gatekeeper validates it: a pod's
	// UPDATE whose mutations change what a pod's UPDATE may not. It is
	// then the one message, with no violation.
	Refused string
}

// Admit does what the API server and Gatekeeper do with a request: the
// MutatingAdmissionPolicies the tree renders, for the operations their
// matchConstraints name (a pod's and a Job's template's on CREATE only),
// then Gatekeeper's mutating webhook (on CREATE, as accelc installs it,
// unless MutateUpdates; not for a subresource, which its webhook's "*"
// rule leaves out), then Kueue's webhooks (a new pod it queues is gated, a
// new Job it queues suspended, unless the request says Kueue skipped
// it), then Gatekeeper's validating webhook (Validate).
func (m *Mutator) Admit(ctx context.Context, r *Reviewer, req Request) (Decision, error) {
	return m.admit(ctx, r, req, true)
}

// Validate does what Gatekeeper's validating webhook does with a request
// whose object reaches it as written: the request judged with its
// operation and old object, and each pod the workload's
// ExpansionTemplates make, mutated by Gatekeeper's mutators as the
// webhook mutates it, judged under the same operation with no old
// object.
func (m *Mutator) Validate(ctx context.Context, r *Reviewer, req Request) (Decision, error) {
	return m.admit(ctx, r, req, false)
}

func (m *Mutator) admit(ctx context.Context, r *Reviewer, req Request, mutating bool) (Decision, error) {
	op := req.Operation
	if op == "" {
		op = string(admissionv1.Create)
	}
	obj := req.Object
	d := Decision{Stored: obj}
	if req.SubResource == "" {
		if mutating {
			m.admission.Mutate(obj, op)
		}
		w, isWorkload := render.WorkloadKindOf(obj.GroupVersionKind().Group, obj.GetKind())
		if !(isWorkload && w.ObjectLabels) {
			// The expander mutates its base with Gatekeeper's mutators
			// before it expands it: the mutating webhook's work, which
			// an object judged as written has not had.
			base := obj
			if !mutating || (op == string(admissionv1.Update) && !m.MutateUpdates) {
				base = obj.DeepCopy()
			}
			before, _, _ := unstructured.NestedMap(obj.Object, "spec")
			resultants, err := m.expander.Expand(base)
			if err != nil {
				return d, err
			}
			if mutating && op == string(admissionv1.Update) && obj.GetKind() == "Pod" && obj.GroupVersionKind().Group == "" {
				after, _, _ := unstructured.NestedMap(obj.Object, "spec")
				if changed := immutableChanges(before, after); len(changed) > 0 {
					d.Refused = fmt.Sprintf("Gatekeeper's mutators change the pod's spec.%s on this UPDATE, which a pod's UPDATE may not change: the API server refuses it as invalid", strings.Join(changed, ", spec."))
					// Refused, as a denial is: whoever reads only the
					// messages sees it refused.
					d.Messages = []string{d.Refused}
					return d, nil
				}
			}
			// Kueue's pod webhook runs on every new pod, whether or not
			// accelc's mutators did.
			if op == string(admissionv1.Create) && !req.KueueSkipped && m.KueueWebhooks(obj) {
				if node, _, _ := unstructured.NestedString(obj.Object, "spec", "nodeName"); node != "" {
					d.Refused = fmt.Sprintf("Kueue's pod webhook gates the pod, and a pod with spec.nodeName %s may not have scheduling gates: the API server refuses it as invalid", node)
					d.Messages = []string{d.Refused}
					return d, nil
				}
			}
			for _, res := range resultants {
				d.Expanded = append(d.Expanded, res.Obj)
				vs, err := r.violations(ctx, target.AugmentedUnstructured{Object: *res.Obj, Operation: admissionv1.Operation(op), Source: mutationtypes.SourceTypeGenerated})
				if err != nil {
					return d, err
				}
				for _, v := range vs {
					v.Message = fmt.Sprintf("[Implied by %s] %s", res.TemplateName, v.Message)
					d.Violations = append(d.Violations, v)
				}
			}
		}
	}
	ar, err := admissionRequest(req, obj, op)
	if err != nil {
		return d, err
	}
	vs, err := r.violations(ctx, target.AugmentedReview{AdmissionRequest: ar, IsAdmission: true, Source: mutationtypes.SourceTypeOriginal})
	if err != nil {
		return d, err
	}
	d.Violations = append(vs, d.Violations...)
	for _, v := range d.Violations {
		d.Messages = append(d.Messages, v.Message)
	}
	return d, nil
}

// immutableChanges are the fields of a pod's spec that differ between
// before and after, other than those a pod's UPDATE may change (its
// tolerations, which Gatekeeper's ModifySet only adds to, its images,
// activeDeadlineSeconds, terminationGracePeriodSeconds), sorted.
func immutableChanges(before, after map[string]any) []string {
	fields := map[string]bool{}
	for k := range before {
		fields[k] = true
	}
	for k := range after {
		fields[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		switch k {
		case "tolerations", "activeDeadlineSeconds", "terminationGracePeriodSeconds", "containers", "initContainers":
			// Images may change; the mutators touch neither list.
			continue
		}
		if !reflect.DeepEqual(before[k], after[k]) {
			out = append(out, k)
		}
	}
	return out
}

func admissionRequest(req Request, obj *unstructured.Unstructured, op string) (*admissionv1.AdmissionRequest, error) {
	user := req.User
	if user == "" {
		user = DefaultUser
	}
	gvk := obj.GroupVersionKind()
	raw, err := json.Marshal(obj.Object)
	if err != nil {
		return nil, err
	}
	ar := &admissionv1.AdmissionRequest{
		UID:         "accelc-test",
		Kind:        metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		Resource:    metav1.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: resourceOf(gvk)},
		SubResource: req.SubResource,
		Name:        obj.GetName(),
		Namespace:   obj.GetNamespace(),
		Operation:   admissionv1.Operation(op),
		UserInfo:    authenticationv1.UserInfo{Username: user},
		Object:      runtime.RawExtension{Raw: raw},
	}
	if req.OldObject != nil {
		if ar.OldObject.Raw, err = json.Marshal(req.OldObject.Object); err != nil {
			return nil, err
		}
	}
	return ar, nil
}

// resourceOf is the plural resource of a kind accelc judges.
func resourceOf(gvk schema.GroupVersionKind) string {
	if w, ok := render.WorkloadKindOf(gvk.Group, gvk.Kind); ok {
		return w.Resource
	}
	return strings.ToLower(gvk.Kind) + "s"
}

// review returns the violations' messages of one review.
func (r *Reviewer) review(ctx context.Context, obj any) ([]string, error) {
	vs, err := r.violations(ctx, obj)
	if err != nil {
		return nil, err
	}
	var msgs []string
	for _, v := range vs {
		msgs = append(msgs, v.Message)
	}
	return msgs, nil
}

// Violation is what one constraint found in a review.
type Violation = policytest.Violation

// violations are the constraints' findings in one review.
func (r *Reviewer) violations(ctx context.Context, obj any) ([]Violation, error) {
	key := ""
	if r.memo != nil {
		if key = memoKey(obj); key != "" {
			if vs, ok := r.memo.Load(key); ok {
				return vs.([]Violation), nil
			}
		}
	}
	vs, err := r.judge(ctx, obj)
	if err == nil && key != "" {
		r.memo.Store(key, vs)
	}
	return vs, err
}

func (r *Reviewer) judge(ctx context.Context, obj any) ([]Violation, error) {
	res, err := r.client.Review(ctx, obj, reviews.EnforcementPoint(util.GatorEnforcementPoint))
	if err != nil {
		return nil, err
	}
	var out []Violation
	for _, v := range res.Results() {
		out = append(out, Violation{Constraint: v.Constraint.GetName(), Kind: v.Constraint.GetKind(), Action: v.EnforcementAction, Message: v.Msg})
	}
	return out, nil
}
