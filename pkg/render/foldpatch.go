package render

// How accelc's MutatingAdmissionPolicies are cut into mutations.
//
// The API server applies a policy's mutations one after another, and
// for each it converts the object for CEL (an activation of its own),
// evaluates the patch, then encodes the object to JSON, applies the
// patch and decodes the result strictly, even where the patch is empty
// (k8s.io/apiserver's jsonPatcher does not look at its length). A
// policy of ten mutations costs a Job ten of each. So each policy is one
// mutation where it fits one expression, its parts joined, and holds
// back by a match condition the objects none of its parts would change,
// which then cost one conversion and no JSON.

import (
	"strings"
	"unicode/utf8"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// PatchPartSeparator joins the parts of a JSON patch expression that
// foldPatches made of several, each in parentheses; no part holds a line
// break.
const PatchPartSeparator = " +\n"

// foldPatches packs parts, JSON patch expressions each yielding a list
// of operations, into as few mutations as fit CELExpressionLimit, each
// the concatenation of its parts' lists. It is for parts that never
// both yield operations for one object (a Job's profile and namespace
// select one part) or whose operations change disjoint fields (the
// templates of one object): evaluated on the same object, as one
// expression evaluates them, they patch what evaluated one after
// another they would.
func foldPatches(parts []string) []admissionregistrationv1.Mutation {
	wrapped := make([]string, len(parts))
	for i, p := range parts {
		// A part may be a conditional, which binds looser than +.
		wrapped[i] = "(" + p + ")"
	}
	return packed(wrapped, PatchPartSeparator, "")
}

// foldedParts are the parts of a mutation's expression foldPatches
// made; false where it is not one.
func foldedParts(expr string) ([]string, bool) {
	var out []string
	for _, w := range strings.Split(expr, PatchPartSeparator) {
		p, ok := strings.CutPrefix(w, "(")
		if !ok || !strings.HasSuffix(p, ")") {
			return nil, false
		}
		out = append(out, strings.TrimSuffix(p, ")"))
	}
	return out, true
}

// guardedPatch is a JSON patch expression that yields operations only
// where Guard holds.
type guardedPatch struct{ Guard, Patch string }

// chainPatches packs parts into as few mutations as fit
// CELExpressionLimit, each "g1 ? p1 : g2 ? p2 : []": the first part
// whose guard holds patches. It is for parts that write the same field
// and whose guards no longer hold once one has: as mutations applied in
// turn, the first would write and the rest find it written.
func chainPatches(parts []guardedPatch) []admissionregistrationv1.Mutation {
	exprs := make([]string, len(parts))
	for i, p := range parts {
		exprs[i] = p.Guard + " ? " + p.Patch + " : "
	}
	return packed(exprs, "", "[]")
}

// packed cuts exprs into runs that, joined by sep and ended by end, fit
// CELExpressionLimit: a mutation each. An expression too long alone is
// a mutation of its own (Validate names it).
func packed(exprs []string, sep, end string) []admissionregistrationv1.Mutation {
	var out []admissionregistrationv1.Mutation
	var run []string
	size := 0 // of run joined, without end
	flush := func() {
		if len(run) > 0 {
			out = append(out, admissionregistrationv1.Mutation{
				PatchType: admissionregistrationv1.PatchTypeJSONPatch,
				JSONPatch: &admissionregistrationv1.JSONPatch{Expression: strings.Join(run, sep) + end},
			})
		}
		run, size = nil, 0
	}
	for _, e := range exprs {
		n := utf8.RuneCountInString(e)
		if len(run) > 0 && size+len(sep)+n+len(end) > CELExpressionLimit {
			flush()
		}
		if len(run) > 0 {
			size += len(sep)
		}
		run = append(run, e)
		size += n
	}
	flush()
	return out
}

// anyHolds is the CEL condition that one of conditions holds.
func anyHolds(conditions []string) string {
	if len(conditions) == 1 {
		return conditions[0]
	}
	parts := make([]string, len(conditions))
	for i, c := range conditions {
		parts[i] = "(" + c + ")"
	}
	return strings.Join(parts, " || ")
}
