package audit

// Judging one workload: the objects and findings gathered for it, and the
// changes accelc's mutations would make to its pods once their namespace
// denies (a node type they could not reach, the queue, the priority class).

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/policytest"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/workloads"
)

// workload is one workload's objects and findings as they are gathered.
type workload struct {
	ref  workloads.Ref
	pods int
	// devices are the accelerators its running pods hold.
	devices int
	// violations are met when its pods are made again, audit by its
	// objects as stored: message → action.
	violations, audit map[string]string
	changes           map[string]bool
	waits             string
}

type auditor struct {
	m *compile.Model
	// pl is m placed on the inventory: each node's pool and GPUs.
	pl         *compile.Placed
	nodeByName map[string]*inventory.Node
	// accelerators are acceleratorPrefixes, once per run.
	accelerators []string
	nodes        map[string]map[string]any
	set          *workloads.Set
	byWorkload   map[workloads.Ref]*workload
	// queued are the pods that would hold quota, with their workload.
	queued []queuedPod
}

type queuedPod struct {
	pod *unstructured.Unstructured
	w   *workload
	key string // the team's quota key
	n   int
}

func (a *auditor) workload(o *unstructured.Unstructured) *workload {
	ref := a.set.Workload(o)
	ref.APIVersion = ""
	w, ok := a.byWorkload[ref]
	if !ok {
		w = &workload{ref: ref, violations: map[string]string{}, audit: map[string]string{}, changes: map[string]bool{}}
		a.byWorkload[ref] = w
	}
	return w
}

// add gathers one object's audit into its workload.
func (a *auditor) add(o *unstructured.Unstructured, oa policytest.ObjectAudit) {
	w := a.workload(o)
	isPod := o.GetKind() == "Pod" && o.GroupVersionKind().Group == ""
	gather(w.audit, oa.Violations)
	if !isPod {
		gather(w.violations, oa.Recreated)
		return
	}
	w.pods++
	if finished(o) {
		return
	}
	w.devices += devices(o, a.accelerators)
	if oa.Enforced == nil {
		return
	}
	gather(w.violations, oa.Recreated)
	var enforced unstructured.Unstructured
	if err := json.Unmarshal(oa.Enforced, &enforced.Object); err != nil {
		return
	}
	for _, c := range a.changes(o, &enforced) {
		w.changes[c] = true
	}
	if key, n, ok := a.holdsQuota(o, &enforced); ok {
		a.queued = append(a.queued, queuedPod{pod: o, w: w, key: key, n: n})
	}
}

// gather adds violations to a message → action set, each message once
// (a workload's expansion repeats what its pods say) at its strongest
// action.
func gather(into map[string]string, vs []policytest.Violation) {
	for _, v := range vs {
		msg := v.Message
		if strings.HasPrefix(msg, "[Implied by ") {
			if i := strings.Index(msg, "] "); i > 0 {
				msg = msg[i+2:]
			}
		}
		into[msg] = strongest(into[msg], v.Action)
	}
}

// The enforcement actions from weakest to strongest.
var actions = []string{"", compile.DryRun, compile.Warn, compile.Deny}

func strongest(a, b string) string {
	if slices.Index(actions, a) >= slices.Index(actions, b) {
		return a
	}
	return b
}

// finished says whether a pod has run to its end: it holds nothing.
func finished(pod *unstructured.Unstructured) bool {
	phase, _, _ := unstructured.NestedString(pod.Object, "status", "phase")
	return phase == "Succeeded" || phase == "Failed"
}

// changes says what accelc's mutations would change of a running pod.
func (a *auditor) changes(pod, enforced *unstructured.Unstructured) []string {
	var out []string
	team := a.m.TeamOf(pod.GetNamespace())
	queue := enforced.GetLabels()[render.QueueNameLabel]
	if queue != "" && pod.GetLabels()[render.QueueNameLabel] == "" {
		where := "LocalQueue " + queue
		if team != nil {
			where = team.Name + "." + queue
		}
		out = append(out, "would be queued in "+where)
	}
	was, _, _ := unstructured.NestedString(pod.Object, "spec", "priorityClassName")
	now, _, _ := unstructured.NestedString(enforced.Object, "spec", "priorityClassName")
	if now != was {
		if was == "" {
			was = "none"
		}
		out = append(out, fmt.Sprintf("would run at priority class %s (now %s)", now, was))
	}
	nodeName, _, _ := unstructured.NestedString(pod.Object, "spec", "nodeName")
	node, ok := a.nodes[nodeName]
	if !ok {
		return out
	}
	terms, found := enforcedTerms(pod, enforced)
	if !found || slices.ContainsFunc(terms, func(t any) bool { return termMatches(t, node) }) {
		return out
	}
	labels, _, _ := unstructured.NestedStringMap(node, "metadata", "labels")
	typ := labels[a.m.Cluster.TypeLabel()]
	if typ == "" {
		typ = "no accelerator type"
	}
	if allowed := requiredValues(terms, a.m.Cluster.TypeLabel()); len(allowed) > 0 {
		out = append(out, fmt.Sprintf("would move off its node's type (%s): it may run on %s", typ, strings.Join(allowed, ", ")))
	} else {
		out = append(out, fmt.Sprintf("would move off its node (%s): its required node affinity would not match it", typ))
	}
	return out
}

// termMatches says whether a node selector term selects the node by its
// labels (matchFields on the name too).
func termMatches(term any, node map[string]any) bool {
	t, _ := term.(map[string]any)
	labels, _, _ := unstructured.NestedStringMap(node, "metadata", "labels")
	name, _, _ := unstructured.NestedString(node, "metadata", "name")
	match := func(exprs any, value func(string) (string, bool)) bool {
		list, _ := exprs.([]any)
		for _, e := range list {
			em, _ := e.(map[string]any)
			k, _ := em["key"].(string)
			op, _ := em["operator"].(string)
			var values []string
			vs, _ := em["values"].([]any)
			for _, v := range vs {
				s, _ := v.(string)
				values = append(values, s)
			}
			v, has := value(k)
			switch op {
			case "In":
				if !has || !slices.Contains(values, v) {
					return false
				}
			case "NotIn":
				if has && slices.Contains(values, v) {
					return false
				}
			case "Exists":
				if !has {
					return false
				}
			case "DoesNotExist":
				if has {
					return false
				}
			default:
				// Gt and Lt: numbers accelc never writes; judged as not
				// matching only when the label is absent.
				if !has {
					return false
				}
			}
		}
		return true
	}
	if len(t) == 0 {
		return false
	}
	return match(t["matchExpressions"], func(k string) (string, bool) { v, ok := labels[k]; return v, ok }) &&
		match(t["matchFields"], func(k string) (string, bool) { return name, k == "metadata.name" })
}

// enforcedTerms are the required node-selector terms of the enforced
// pod, with each node selector key that enforcement gives the pod (or
// changes) ANDed into every term as an In of its one value (a one-type
// profile's type is a node selector, as the scheduler reads it: with
// every term), and whether enforcement requires anything. The pod's own
// node selector keys are not judged again: the pod was bound by them.
func enforcedTerms(pod, enforced *unstructured.Unstructured) ([]any, bool) {
	terms, found, _ := unstructured.NestedSlice(enforced.Object, "spec", "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
	had, _, _ := unstructured.NestedStringMap(pod.Object, "spec", "nodeSelector")
	sel, _, _ := unstructured.NestedStringMap(enforced.Object, "spec", "nodeSelector")
	var added []any
	for _, k := range slices.Sorted(maps.Keys(sel)) {
		if v, ok := had[k]; !ok || v != sel[k] {
			added = append(added, map[string]any{"key": k, "operator": "In", "values": []any{sel[k]}})
		}
	}
	if len(added) == 0 {
		return terms, found
	}
	if !found || len(terms) == 0 {
		return []any{map[string]any{"matchExpressions": added}}, true
	}
	out := make([]any, len(terms))
	for i, t := range terms {
		tm, _ := t.(map[string]any)
		term := maps.Clone(tm)
		exprs, _ := term["matchExpressions"].([]any)
		term["matchExpressions"] = append(slices.Clone(exprs), added...)
		out[i] = term
	}
	return out, true
}

// requiredValues are the values of key the terms allow, sorted: in each
// term that bounds key with In, the values every In of it names (the
// scheduler ANDs a term's expressions, so an In the enforcement adds
// narrows the pod's own) less those a NotIn names; the union over the
// terms (it ORs them). A term that does not bound key adds nothing.
func requiredValues(terms []any, key string) []string {
	seen := map[string]bool{}
	for _, term := range terms {
		tm, _ := term.(map[string]any)
		exprs, _, _ := unstructured.NestedSlice(tm, "matchExpressions")
		var allowed []string
		bounded := false
		var excluded []string
		for _, e := range exprs {
			em, _ := e.(map[string]any)
			if em["key"] != key {
				continue
			}
			var values []string
			vs, _ := em["values"].([]any)
			for _, v := range vs {
				if s, ok := v.(string); ok {
					values = append(values, s)
				}
			}
			switch em["operator"] {
			case "In":
				if !bounded {
					allowed, bounded = values, true
				} else {
					allowed = slices.DeleteFunc(allowed, func(v string) bool { return !slices.Contains(values, v) })
				}
			case "NotIn":
				excluded = append(excluded, values...)
			}
		}
		for _, v := range allowed {
			if !slices.Contains(excluded, v) {
				seen[v] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
