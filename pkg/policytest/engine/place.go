package engine

// Where a pod could be scheduled in the escape check: node affinity,
// selectors and taints against the simulated nodes.

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/accelc/accelc/pkg/inventory"
)

// taints and the accelerator resources it asks for.
func (e *EscapeCheck) feasible(spec map[string]any, n simNode) bool {
	for _, c := range containers(spec) {
		for _, r := range accelRequests(c) {
			if !n.offers[r] {
				return false
			}
		}
	}
	if name, ok := spec["nodeName"].(string); ok && name != "" {
		if name != n.name {
			return false
		}
		// The scheduler is bypassed: only NoExecute taints evict.
		return tolerates(spec, n.taints, "NoExecute")
	}
	for k, v := range mapOf(spec["nodeSelector"]) {
		if got, ok := n.label(k); !ok || got != v {
			return false
		}
	}
	aff := mapOf(mapOf(mapOf(spec["affinity"])["nodeAffinity"])["requiredDuringSchedulingIgnoredDuringExecution"])
	if terms := list(aff["nodeSelectorTerms"]); aff != nil && len(terms) > 0 {
		if !slices.ContainsFunc(terms, func(t map[string]any) bool { return termMatches(t, n) }) {
			return false
		}
	}
	return tolerates(spec, n.taints, "NoSchedule") && tolerates(spec, n.taints, "NoExecute")
}

func (n simNode) label(k string) (string, bool) {
	if v, ok := n.labels[k]; ok {
		return v, true
	}
	if k == "kubernetes.io/hostname" {
		return n.name, true
	}
	if n.node != nil {
		return n.node.Label(k)
	}
	return "", false
}

func termMatches(t map[string]any, n simNode) bool {
	exprs, fields := list(t["matchExpressions"]), list(t["matchFields"])
	if len(exprs) == 0 && len(fields) == 0 {
		return false // an empty term matches no node
	}
	for _, ex := range exprs {
		v, ok := n.label(fmt.Sprint(ex["key"]))
		if !requirement(fmt.Sprint(ex["operator"]), v, ok, stringList(ex["values"])) {
			return false
		}
	}
	for _, f := range fields {
		if fmt.Sprint(f["key"]) != "metadata.name" || !requirement(fmt.Sprint(f["operator"]), n.name, true, stringList(f["values"])) {
			return false
		}
	}
	return true
}

func requirement(op, v string, ok bool, values []string) bool {
	switch op {
	case "In":
		return ok && slices.Contains(values, v)
	case "NotIn":
		return !ok || !slices.Contains(values, v)
	case "Exists":
		return ok
	case "DoesNotExist":
		return !ok
	case "Gt", "Lt":
		if !ok || len(values) != 1 {
			return false
		}
		a, err1 := strconv.Atoi(v)
		b, err2 := strconv.Atoi(values[0])
		return err1 == nil && err2 == nil && (op == "Gt" && a > b || op == "Lt" && a < b)
	}
	return false
}

// tolerates reports whether the pod tolerates every taint of the effect.
func tolerates(spec map[string]any, taints []inventory.Taint, effect string) bool {
	tols := list(spec["tolerations"])
	for _, t := range taints {
		if t.Effect != effect {
			continue
		}
		if !slices.ContainsFunc(tols, func(tol map[string]any) bool {
			key, _ := tol["key"].(string)
			op, _ := tol["operator"].(string)
			eff, _ := tol["effect"].(string)
			if eff != "" && eff != t.Effect {
				return false
			}
			if key == "" {
				return op == "Exists"
			}
			if key != t.Key {
				return false
			}
			val, _ := tol["value"].(string)
			return op == "Exists" || val == t.Value
		}) {
			return false
		}
	}
	return true
}

// feasibleNodes are the names of the nodes kube-scheduler could bind a pod
// of this spec to.
func (e *EscapeCheck) feasibleNodes(spec map[string]any) []string {
	var out []string
	for _, n := range e.nodes {
		if e.feasible(spec, n) {
			out = append(out, n.name)
		}
	}
	return out
}
