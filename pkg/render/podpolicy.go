package render

// The MutatingAdmissionPolicy that gives a new pod, on Kubernetes 1.36,
// what Gatekeeper's pod mutators would: translated from those mutators,
// so that the two cannot drift, and run by the API server itself, so that
// making a pod costs no call to Gatekeeper's mutating webhook.

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// PodProfilePolicyName names the MutatingAdmissionPolicy (and its
// binding) that mutates pods in place of Gatekeeper's mutating webhook.
const PodProfilePolicyName = "accelc-pod-profile"

// The locations of Gatekeeper's pod mutators that podProfilePolicy knows.
const (
	preferredAffinity  = "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
	requiredAffinityAt = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
	// termKeyPrefix and termKeySuffix surround the key of a mutator that
	// ANDs one expression into every term of a required node affinity.
	termKeyPrefix = requiredAffinityAt + ".nodeSelectorTerms[matchExpressions: *].matchExpressions[key: "
	termKeySuffix = "]"
	// nodeSelectorAt starts the location of a mutator that selects one
	// node label (a one-type profile's type), the key quoted after it.
	nodeSelectorAt = "spec.nodeSelector."
)

// podProfilePolicy is the MutatingAdmissionPolicy that does, on a new pod,
// what the Gatekeeper mutators among mutators that match pods do
// (mutationObjects renders both; Gatekeeper keeps its mutators for the
// pods it expands from workloads, and its mutating webhook is sent no pod:
// GatekeeperInstallValues). Each mutator becomes a JSON patch operation
// under the same condition as its match, applied as Gatekeeper applies
// them: in its order (kind, then name), a metadata key or a field with a
// MustNotExist test written only where the pod has nothing, a toleration
// merged where the pod has none equal to it, the rest (the priority)
// set. A mutator keyed on accelc's profile label reads the label, else
// Open Data Hub's annotation; the policy's first operation gives a pod
// that has only the annotation the label, as profileLabelPolicy does
// where there is no pod mutator (mutationObjects renders one or the
// other).
//
// One policy with one JSON patch, for cost: the API server encodes and
// decodes the pod once per mutation of a policy, and converts it for CEL
// once per expression. So the operations that make a missing map, list or
// affinity come first in the same patch, where the pod needs one, and the
// expressions the mutators AND into the terms of a pod's own required
// affinity are one operation that rewrites the terms. The operations
// themselves are variables, by what they add into (labels, annotations,
// affinity, tolerations, the rest) and cut where they grow long: the API
// server takes no CEL expression of more than CELExpressionLimit code
// points, which one of every operation outgrows at some hundred teams or
// twenty profiles, and a variable is evaluated once, so each condition
// is too where the patch both makes a map and adds into it.
//
// A mutator of any other shape is a bug in accelc: podProfilePolicy
// panics, and every example's render test says which.
func podProfilePolicy(m *compile.Model, mutators []Object) []Object {
	var muts []*mutator
	for _, o := range mutators {
		if mu, ok := o.Body.(*mutator); ok && matchesPods(mu.Spec.Match) {
			muts = append(muts, mu)
		}
	}
	if len(muts) == 0 {
		return nil
	}
	// Gatekeeper applies its mutators sorted by group (all
	// mutations.gatekeeper.sh), kind and name.
	slices.SortFunc(muts, func(a, b *mutator) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	p := podPatch{label: m.Cluster.LabelPrefix + "/profile", earlier: map[string][]earlierOp{}}
	// First, what profileLabelPolicy does, which this policy replaces: a
	// pod that names its profile only by Open Data Hub's annotation gets
	// accelc's profile label from it.
	byAnnotation := fmt.Sprintf("!(has(object.metadata.labels) && %q in object.metadata.labels) && has(object.metadata.annotations) && %q in object.metadata.annotations", p.label, ProfileAnnotation)
	p.op(opLabels, byAnnotation, "add", "/metadata/labels/"+escapePointer(p.label), fmt.Sprintf("object.metadata.annotations[%q]", ProfileAnnotation))
	for _, mu := range muts {
		p.add(mu)
	}
	vars, patch := p.policy()
	return mutatingPolicy(m, PodProfilePolicyName, admissionregistrationv1.MutatingAdmissionPolicySpec{
		MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
			RuleWithOperations: admissionregistrationv1.RuleWithOperations{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: v1, Resources: []string{"pods"}},
			},
		}}},
		MatchConditions: []admissionregistrationv1.MatchCondition{{
			Name:       "a-mutator-matches",
			Expression: p.anyMatch(),
		}},
		Variables: vars,
		Mutations: []admissionregistrationv1.Mutation{{
			PatchType: admissionregistrationv1.PatchTypeJSONPatch,
			JSONPatch: &admissionregistrationv1.JSONPatch{Expression: patch},
		}},
	})
}

// GatekeeperIgnoreLabel exempts a namespace from Gatekeeper's webhooks.
const GatekeeperIgnoreLabel = "admission.gatekeeper.sh/ignore"

// policy is the policy's variables — the profile the pod names, each
// namespace test, then the operations (packed) — and its JSON patch
// (expression).
func (p *podPatch) policy() ([]admissionregistrationv1.Variable, string) {
	out := []admissionregistrationv1.Variable{{
		Name: "profile",
		Expression: fmt.Sprintf(`has(object.metadata.labels) && %q in object.metadata.labels ? object.metadata.labels[%q] : (has(object.metadata.annotations) && %q in object.metadata.annotations ? object.metadata.annotations[%q] : "")`,
			p.label, p.label, ProfileAnnotation, ProfileAnnotation),
	}, {
		// The pod names a profile, perhaps an empty one: the label is
		// there, or the policy writes it from the annotation.
		Name:       "named",
		Expression: p.names(),
	}}
	for i, test := range p.namespaces {
		out = append(out, admissionregistrationv1.Variable{Name: fmt.Sprintf("namespaces%d", i), Expression: test})
	}
	ops, terms := p.packed()
	for _, o := range ops {
		out = append(out, o.vars...)
	}
	out = append(out, terms.vars...)
	return out, p.expression(ops, terms.ref)
}

// packedOps are operations packed into variables (chunked): the
// variables, and the expression that joins them ("" for none).
type packedOps struct {
	vars []admissionregistrationv1.Variable
	ref  string
}

// packed are each class's operations and the terms' expressions, gated
// and packed into variables.
func (p *podPatch) packed() (ops [opClasses]packedOps, terms packedOps) {
	for class := range opClasses {
		ops[class].vars, ops[class].ref = chunked(opVariables[class], gated(p.ops[class], class == opTolerations))
	}
	terms.vars, terms.ref = chunked("termExpressions", gated(p.terms, true))
	return ops, terms
}

// celChunk is how long chunked lets one variable grow, in bytes (at
// least the code points the API server counts): a CEL expression of more
// than CELExpressionLimit is refused, so the policy would not be
// admitted and no pod mutated. A variable holds at most celChunk, or one
// item alone that is longer (one operation: far shorter in practice);
// checkCELSizes refuses what still crosses the limit.
const celChunk = 60_000

// CELExpressionLimit is the most code points the API server takes in one
// CEL expression (cel-go's parser limit, which Kubernetes sets).
const CELExpressionLimit = 100_000

// chunked packs items, each a CEL list, into variables name0, name1, …
// of at most celChunk bytes each (an item longer than that alone), and
// returns them with the expression that joins them ("" for none): one
// expression of a cluster's every operation would outgrow
// CELExpressionLimit with some hundred teams or twenty profiles.
func chunked(name string, items []string) ([]admissionregistrationv1.Variable, string) {
	var vars []admissionregistrationv1.Variable
	var refs []string
	for i, cur := range chunks(items, 3) {
		v := fmt.Sprintf("%s%d", name, i)
		vars = append(vars, admissionregistrationv1.Variable{Name: v, Expression: strings.Join(cur, " +\n")})
		refs = append(refs, "variables."+v)
	}
	return vars, strings.Join(refs, " + ")
}

// chunks cuts items, to be joined by a separator of sep bytes, into runs
// of at most celChunk bytes each (an item longer than that alone).
func chunks(items []string, sep int) [][]string {
	var out [][]string
	var cur []string
	size := 0
	for _, it := range items {
		if size > 0 && size+len(it)+sep > celChunk {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, it)
		size += len(it) + sep
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// matchesPods reports whether a mutator's match names pods.
func matchesPods(mt match) bool {
	return slices.ContainsFunc(mt.Kinds, func(k matchKinds) bool {
		return slices.Contains(k.APIGroups, "") && slices.Contains(k.Kinds, "Pod")
	})
}

// podPatch builds the policy's one JSON patch expression from the
// mutators, in Gatekeeper's order.
type podPatch struct {
	label string
	// anyPodIn are the namespaces of the mutators that select no
	// profile; everywhere, that one of them names no namespace.
	anyPodIn   []string
	everywhere bool
	// earlier are, by location, the operations before that write there:
	// Gatekeeper's first mutator to write a location wins.
	earlier map[string][]earlierOp
	// namespaces names each distinct namespace test a variable
	// (variables.namespaces0, …), in order.
	namespaces []string
	// ops are the operations, each "cond ? [{op, path, value}] : []", by
	// what they need to exist (opLabels: metadata.labels, …), each class
	// in Gatekeeper's order.
	ops [opClasses][]gatedOp
	// terms are the expressions ANDed into each term of the pod's own
	// required affinity, in order, each "cond ? [{key, expression}] : []".
	terms []gatedOp
	// gate is the current mutator's gate (gateOf).
	gate string
}

// gatedOp is an operation and the gate its condition implies: a cheap
// test, shared by the operations of one profile's mutators (or one
// namespace list's), that holds wherever the condition does.
type gatedOp struct {
	gate, text string
}

// profileGate starts the gate of a mutator that selects one profile.
const profileGate = "variables.profile == "

// gateOf is the gate of a mutator's match: the profile its label selector
// names, else its namespaces (a variable), else none.
func (p *podPatch) gateOf(mt match) string {
	if ls := mt.LabelSelector; ls != nil {
		if v, ok := ls.MatchLabels[p.label]; ok {
			return profileGate + strconv.Quote(v)
		}
	}
	if len(mt.Namespaces) > 0 && !slices.ContainsFunc(mt.Namespaces, func(ns string) bool { return strings.Contains(ns, "*") }) {
		return p.namespaceVariable(mt.Namespaces)
	}
	return ""
}

// gated are a class's operations as CEL lists: those of one gate
// together under it, in the order each gate first comes, so that a pod
// evaluates one test for each profile and namespace list, and the
// operations of its own. Where the order between gates matters (several
// operations append to one list: tolerations, a term's expressions),
// only gates of which no pod meets two (one profile each) are grouped;
// otherwise the operations keep their order, ungrouped.
func gated(ops []gatedOp, ordered bool) []string {
	if ordered && slices.ContainsFunc(ops, func(o gatedOp) bool { return !strings.HasPrefix(o.gate, profileGate) }) {
		out := make([]string, len(ops))
		for i, o := range ops {
			out[i] = o.text
		}
		return out
	}
	var gates []string
	byGate := map[string][]string{}
	for _, o := range ops {
		if _, ok := byGate[o.gate]; !ok {
			gates = append(gates, o.gate)
		}
		byGate[o.gate] = append(byGate[o.gate], o.text)
	}
	var out []string
	for _, g := range gates {
		if g == "" {
			out = append(out, byGate[g]...)
			continue
		}
		out = append(out, fmt.Sprintf("(%s ? %s : [])", g, strings.Join(byGate[g], " + ")))
	}
	return out
}

// opClass sorts operations by the map, object or list they add into:
// each class is a list of its own, so that the operation that makes a
// missing one asks only whether its class has an operation.
type opClass int

const (
	opLabels opClass = iota
	opAnnotations
	// opAffinity: the required affinity or the preference, written whole
	// into spec.affinity.nodeAffinity.
	opAffinity
	// opNodeSelector: a key of spec.nodeSelector.
	opNodeSelector
	opTolerations
	opOther
	opClasses
)

// opVariables name each class's variables (labelOps0, labelOps1, …).
var opVariables = [opClasses]string{"labelOps", "annotationOps", "affinityOps", "nodeSelectorOps", "tolerationOps", "otherOps"}

// earlierOp is an operation before, by its mutator's selection and its
// condition.
type earlierOp struct {
	sel  selection
	cond string
}

// selection is what a mutator's match selects, as far as podProfilePolicy
// compares two: the profiles (in, or notIn; neither: any) and the
// namespaces (nil: any; a glob makes them incomparable).
type selection struct {
	in, notIn  []string
	namespaces []string
	globs      bool
}

// exclusive reports whether no pod is selected by both a and b: they
// select different profiles, or namespaces named apart.
func (a selection) exclusive(b selection) bool {
	outside := func(in, notIn []string) bool {
		return len(in) > 0 && !slices.ContainsFunc(in, func(p string) bool { return !slices.Contains(notIn, p) })
	}
	switch {
	case len(a.in) > 0 && len(b.in) > 0 && !slices.ContainsFunc(a.in, func(p string) bool { return slices.Contains(b.in, p) }):
		return true
	case outside(a.in, b.notIn), outside(b.in, a.notIn):
		return true
	}
	if a.namespaces == nil || b.namespaces == nil || a.globs || b.globs {
		return false
	}
	return !slices.ContainsFunc(a.namespaces, func(ns string) bool { return slices.Contains(b.namespaces, ns) })
}

// add translates one mutator.
func (p *podPatch) add(mu *mutator) {
	cond, sel := p.matchCondition(mu.Spec.Match)
	p.gate = p.gateOf(mu.Spec.Match)
	defer func() { p.gate = "" }()
	if mu.Spec.Match.LabelSelector == nil {
		p.anyPodIn = append(p.anyPodIn, mu.Spec.Match.Namespaces...)
		p.everywhere = p.everywhere || len(mu.Spec.Match.Namespaces) == 0
	}
	loc := mu.Spec.Location
	mustNotExist := slices.ContainsFunc(mu.Spec.Parameters.PathTests, func(t pathTest) bool {
		return t.SubPath == loc && t.Condition == "MustNotExist"
	})
	bad := func(why string) {
		panic(fmt.Sprintf("render: Gatekeeper mutator %s %s (%s): %s, which podProfilePolicy does not translate: teach it, or keep the mutator off pods", mu.Kind, mu.Name, loc, why))
	}
	if len(mu.Spec.Parameters.PathTests) > 0 && !mustNotExist {
		bad("a path test other than MustNotExist on its location")
	}
	switch mu.Kind {
	case "AssignMetadata":
		field, quoted, ok := strings.Cut(strings.TrimPrefix(loc, "metadata."), ".")
		key, err := strconv.Unquote(quoted)
		if !ok || err != nil || (field != "labels" && field != "annotations") || !strings.HasPrefix(loc, "metadata.") {
			bad("a location outside metadata.labels and metadata.annotations")
		}
		value, ok := mu.Spec.Parameters.Assign.Value.(string)
		if !ok {
			bad("a value that is not a string")
		}
		at := "object.metadata." + field
		cond = p.first("metadata."+field+"."+key, sel, fmt.Sprintf("%s && !(has(%s) && %q in %s)", cond, at, key, at))
		class := opAnnotations
		if field == "labels" {
			class = opLabels
		}
		p.op(class, cond, "add", "/metadata/"+field+"/"+escapePointer(key), strconv.Quote(value))
	case "Assign":
		switch {
		case (loc == requiredAffinityAt || loc == preferredAffinity) && mustNotExist:
			cond = p.first(loc, sel, fmt.Sprintf("%s && !(%s)", cond, has(strings.Split(loc, "."))))
			p.op(opAffinity, cond, "add", patchPath(strings.Split(loc, ".")), celLiteral(mu.Spec.Parameters.Assign.Value))
		case strings.HasPrefix(loc, termKeyPrefix) && strings.HasSuffix(loc, termKeySuffix) && mustNotExist:
			key, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(loc, termKeyPrefix), termKeySuffix))
			if err != nil {
				bad("a key that is not a quoted string")
			}
			p.terms = append(p.terms, gatedOp{gate: p.gate, text: fmt.Sprintf(`((%s) ? [{"key": dyn(%q), "expression": dyn(%s)}] : [])`, cond, key, celLiteral(mu.Spec.Parameters.Assign.Value))})
		case strings.HasPrefix(loc, nodeSelectorAt) && mustNotExist:
			key, err := strconv.Unquote(strings.TrimPrefix(loc, nodeSelectorAt))
			if err != nil {
				bad("a node selector key that is not a quoted string")
			}
			value, ok := mu.Spec.Parameters.Assign.Value.(string)
			if !ok {
				bad("a value that is not a string")
			}
			cond = p.first("spec.nodeSelector."+key, sel, fmt.Sprintf("%s && !(has(object.spec.nodeSelector) && %q in object.spec.nodeSelector)", cond, key))
			p.op(opNodeSelector, cond, "add", "/spec/nodeSelector/"+escapePointer(key), strconv.Quote(value))
		case (loc == "spec.priorityClassName" || loc == "spec.priority" || loc == "spec.preemptionPolicy") && !mustNotExist:
			cond = p.first(loc, sel, cond)
			p.op(opOther, cond, "add", patchPath(strings.Split(loc, ".")), celLiteral(mu.Spec.Parameters.Assign.Value))
		default:
			bad("a location it has no operation for")
		}
	case "ModifySet":
		if loc != "spec.tolerations" || mu.Spec.Parameters.Operation != "merge" || mu.Spec.Parameters.Values == nil {
			bad("anything but merging tolerations")
		}
		for _, t := range mu.Spec.Parameters.Values.FromList {
			id, err := json.Marshal(t)
			if err != nil {
				panic(err)
			}
			c := p.first("spec.tolerations "+string(id), sel, fmt.Sprintf("%s && !(has(object.spec.tolerations) && object.spec.tolerations.exists(t, %s))", cond, tolerationEqual("t", t)))
			p.op(opTolerations, c, "add", "/spec/tolerations/-", celLiteral(t))
		}
	default:
		bad("a kind other than Assign, AssignMetadata and ModifySet")
	}
}

// first is cond, unless an earlier operation that may select the same
// pod writes at: then cond and not that operation's condition.
func (p *podPatch) first(at string, sel selection, cond string) string {
	out := cond
	var prev []string
	for _, e := range p.earlier[at] {
		if !sel.exclusive(e.sel) {
			prev = append(prev, e.cond)
		}
	}
	if len(prev) > 0 {
		out = fmt.Sprintf("%s && !(%s)", cond, strings.Join(prev, " || "))
	}
	p.earlier[at] = append(p.earlier[at], earlierOp{sel: sel, cond: cond})
	return out
}

// op appends the operation at path with the CEL value under cond to its
// class.
func (p *podPatch) op(class opClass, cond, op, path, value string) {
	p.ops[class] = append(p.ops[class], gatedOp{gate: p.gate, text: fmt.Sprintf(`((%s) ? [{"op": dyn(%q), "path": dyn(%q), "value": dyn(%s)}] : [])`, cond, op, path, value)})
}

// matchCondition is a mutator's match as CEL, and what it selects: the
// profile label first (variables.profile: the label, else Open Data
// Hub's annotation), then its namespaces and excluded namespaces, each a
// variable.
func (p *podPatch) matchCondition(mt match) (string, selection) {
	var parts []string
	sel := selection{namespaces: mt.Namespaces}
	if ls := mt.LabelSelector; ls != nil {
		for _, k := range slices.Sorted(maps.Keys(ls.MatchLabels)) {
			if k != p.label {
				panic(fmt.Sprintf("render: a pod mutator selects on label %s: podProfilePolicy knows only %s", k, p.label))
			}
			parts = append(parts, fmt.Sprintf("variables.profile == %q", ls.MatchLabels[k]))
			sel.in = append(sel.in, ls.MatchLabels[k])
		}
		for _, e := range ls.MatchExpressions {
			if e.Key != p.label {
				panic(fmt.Sprintf("render: a pod mutator selects on label %s: podProfilePolicy knows only %s", e.Key, p.label))
			}
			switch e.Operator {
			case metav1.LabelSelectorOpExists:
				// The label exists, empty too, as Gatekeeper's selector
				// reads it.
				parts = append(parts, "variables.named")
			case metav1.LabelSelectorOpIn:
				parts = append(parts, "variables.profile in "+celStrings(e.Values))
				sel.in = append(sel.in, e.Values...)
			case metav1.LabelSelectorOpNotIn:
				parts = append(parts, "!(variables.profile in "+celStrings(e.Values)+")")
				sel.notIn = append(sel.notIn, e.Values...)
			default:
				panic(fmt.Sprintf("render: a pod mutator selects with %s: podProfilePolicy knows Exists, In and NotIn", e.Operator))
			}
		}
	}
	if len(mt.Namespaces) > 0 {
		parts = append(parts, p.namespaceVariable(mt.Namespaces))
		sel.globs = slices.ContainsFunc(mt.Namespaces, func(ns string) bool { return strings.Contains(ns, "*") })
	}
	if len(mt.ExcludedNamespaces) > 0 {
		parts = append(parts, "!"+p.namespaceVariable(mt.ExcludedNamespaces))
	}
	if len(parts) == 0 {
		return "true", sel
	}
	return strings.Join(parts, " && "), sel
}

// inlineNamespaces is the most names a namespace test written in place
// has: a variable costs the API server a program run of its own the first
// time a pod's evaluation reads it (about 10 µs: with a thousand teams,
// each a variable, ten milliseconds a pod), a short list costs about
// nothing to test again.
const inlineNamespaces = 4

// namespaceVariable is the variable that tests the request's namespace
// against patterns (namespaceIn), named for the first time here; a few
// names without a glob are tested in place.
func (p *podPatch) namespaceVariable(patterns []string) string {
	test := namespaceIn(patterns)
	if len(patterns) <= inlineNamespaces && !slices.ContainsFunc(patterns, func(ns string) bool { return strings.Contains(ns, "*") }) {
		return test
	}
	i := slices.Index(p.namespaces, test)
	if i < 0 {
		i = len(p.namespaces)
		p.namespaces = append(p.namespaces, test)
	}
	return fmt.Sprintf("variables.namespaces%d", i)
}

// anyMatch is the policy's match condition: the pod names a profile (by
// label or annotation: a match condition reads no variable), or it is
// in the namespaces of a mutator that selects no profile (the team
// annotation, on every pod of the team's namespaces). The operations'
// conditions hold back the rest.
func (p *podPatch) anyMatch() string {
	cond := p.names()
	if p.everywhere {
		return "true"
	}
	if len(p.anyPodIn) > 0 {
		cond += " || " + namespaceIn(slices.Compact(slices.Sorted(slices.Values(p.anyPodIn))))
	}
	return cond
}

// names is the CEL test that the pod names a profile: by the label, or
// by Open Data Hub's annotation.
func (p *podPatch) names() string {
	return fmt.Sprintf("(has(object.metadata.labels) && %q in object.metadata.labels) || (has(object.metadata.annotations) && %q in object.metadata.annotations)", p.label, ProfileAnnotation)
}

// expression is the policy's JSON patch: the maps, list and affinity a
// pod lacks and an operation needs, the operations (by class, each a
// variable or several: each condition is evaluated once, and no
// expression outgrows CELExpressionLimit), then the terms of the pod's
// own required affinity rewritten with what the mutators AND in.
func (p *podPatch) expression(ops [opClasses]packedOps, terms string) string {
	var out []string
	ensure := func(class opClass, missing, path, value string) {
		if ops[class].ref != "" {
			out = append(out, fmt.Sprintf("((%s) && size(%s) > 0 ? [JSONPatch{op: \"add\", path: %q, value: %s}] : [])", missing, ops[class].ref, path, value))
		}
	}
	ensure(opLabels, "!has(object.metadata.labels)", "/metadata/labels", "{}")
	ensure(opAnnotations, "!has(object.metadata.annotations)", "/metadata/annotations", "{}")
	ensure(opAffinity, "!has(object.spec.affinity)", "/spec/affinity", "{}")
	ensure(opAffinity, "!(has(object.spec.affinity) && has(object.spec.affinity.nodeAffinity))", "/spec/affinity/nodeAffinity", "{}")
	ensure(opNodeSelector, "!has(object.spec.nodeSelector)", "/spec/nodeSelector", "{}")
	ensure(opTolerations, "!has(object.spec.tolerations)", "/spec/tolerations", "[]")
	// A variable cannot name JSONPatch: the operations are maps there.
	for _, o := range ops {
		if o.ref != "" {
			out = append(out, fmt.Sprintf("(%s).map(o, JSONPatch{op: o.op, path: o.path, value: o.value})", o.ref))
		}
	}
	if terms != "" {
		// Each term gets the expressions whose key it lacks, in order.
		termsAt := strings.Split(requiredAffinityAt+".nodeSelectorTerms", ".")
		exprs := fmt.Sprintf("(has(t.matchExpressions) ? t.matchExpressions : []) + (%s).filter(a, !(has(t.matchExpressions) && t.matchExpressions.exists(e, e.key == a.key))).map(a, a.expression)", terms)
		term := fmt.Sprintf(`has(t.matchFields) ? {"matchExpressions": dyn(%s), "matchFields": dyn(t.matchFields)} : {"matchExpressions": dyn(%s)}`, exprs, exprs)
		out = append(out, fmt.Sprintf("((%s) && size(%s) > 0 ? [JSONPatch{op: \"replace\", path: %q, value: %s.map(t, %s)}] : [])",
			has(termsAt), terms, patchPath(termsAt), celPath(termsAt), term))
	}
	return strings.Join(out, " +\n")
}
