package audit

// Quota: which pods would hold their team's quota and how many devices,
// and which would wait for it.

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/policies"
)

// holdsQuota says whether a pod would hold its team's quota once its
// namespace denies — through Kueue where its queue label says so, else
// a team ResourceQuota on its accelerator requests — and which quota key
// and how many devices.
func (a *auditor) holdsQuota(pod, enforced *unstructured.Unstructured) (key string, n int, ok bool) {
	team := a.m.TeamOf(pod.GetNamespace())
	if team == nil || len(team.Quota) == 0 {
		return "", 0, false
	}
	if a.m.UsesKueue() && enforced.GetLabels()[render.QueueNameLabel] == "" {
		return "", 0, false
	}
	n = devices(pod, a.accelerators)
	if n == 0 {
		return "", 0, false
	}
	// The quota of the node it runs on, unless enforcement would move it:
	// then of the first type its affinity allows.
	typ := ""
	nodeName, _, _ := unstructured.NestedString(pod.Object, "spec", "nodeName")
	terms, constrained := enforcedTerms(pod, enforced)
	if node := a.nodeByName[nodeName]; node != nil && (!constrained || slices.ContainsFunc(terms, func(t any) bool { return termMatches(t, a.nodes[nodeName]) })) {
		typ = node.AcceleratorType
		if pool := a.pl.NodePool(node); pool != nil {
			if _, ok := team.Quota[pool.Name]; ok {
				return pool.Name, n, true
			}
		}
	} else if allowed := requiredValues(terms, a.m.Cluster.TypeLabel()); len(allowed) > 0 {
		typ = allowed[0]
		if p := a.m.Profile(profileOf(pod, a.m)); p != nil && len(p.AcceleratorTypes) > 0 && slices.Contains(allowed, p.AcceleratorTypes[0]) {
			typ = p.AcceleratorTypes[0]
		}
	}
	if typ == "" || typ == "unknown" || typ == "mixed" {
		if p := a.m.Profile(profileOf(pod, a.m)); p != nil && len(p.AcceleratorTypes) > 0 {
			typ = p.AcceleratorTypes[0]
		}
	}
	if typ == "" {
		return "", 0, false
	}
	return typ, n, true
}

// profileOf is the profile a pod names, by ODH's annotation or accelc's
// label.
func profileOf(pod *unstructured.Unstructured, m *compile.Model) string {
	if p := pod.GetAnnotations()[render.ProfileAnnotation]; p != "" {
		return p
	}
	return pod.GetLabels()[m.Cluster.LabelPrefix+"/profile"]
}

// acceleratorPrefixes are the resource names (and prefixes) the policies
// count as accelerators: theirs and every catalog class's.
func acceleratorPrefixes(m *compile.Model) []string {
	prefixes := slices.Clone(policies.BaseResourcePrefixes)
	if m.Catalog == nil {
		return prefixes
	}
	for _, c := range m.Catalog.Classes() {
		prefixes = append(prefixes, c.ResourceName)
	}
	return prefixes
}

// devices counts the accelerators a pod's containers ask for (limits,
// else requests), as the policies count them: podDevices, summed.
func devices(pod *unstructured.Unstructured, prefixes []string) int {
	total := 0
	for _, n := range podDevices(pod, prefixes) {
		total += n
	}
	return total
}

// quantity is a device count as a pod spec holds it: a number, or a
// Kubernetes quantity ("2"); 0 when it is neither.
func quantity(q any) int {
	switch v := q.(type) {
	case int64:
		return int(v)
	case float64:
		return int(v)
	case string:
		if parsed, err := resource.ParseQuantity(v); err == nil {
			return int(parsed.Value())
		}
	}
	return 0
}

// quotas walks each team's pods that would hold quota, oldest first, and
// marks the workloads of those beyond the team's quota as waiting.
func (a *auditor) quotas() {
	created := func(p *unstructured.Unstructured) time.Time { return p.GetCreationTimestamp().Time }
	slices.SortStableFunc(a.queued, func(x, y queuedPod) int {
		return cmp.Or(created(x.pod).Compare(created(y.pod)), cmp.Compare(x.pod.GetNamespace(), y.pod.GetNamespace()), cmp.Compare(x.pod.GetName(), y.pod.GetName()))
	})
	held := map[string]map[string]int{} // team → key → devices
	for _, q := range a.queued {
		team := a.m.TeamOf(q.pod.GetNamespace())
		if held[team.Name] == nil {
			held[team.Name] = map[string]int{}
		}
		quota := team.Quota[q.key]
		before := held[team.Name][q.key]
		held[team.Name][q.key] += q.n
		if before+q.n > quota && q.w.waits == "" {
			q.w.waits = fmt.Sprintf("would wait for quota: team %s's quota of %s is %d, and %d are held by workloads started before it (it asks for %d)",
				team.Name, q.key, quota, before, q.n)
		}
	}
}
