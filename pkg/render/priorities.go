package render

// The priority tiers: Kubernetes PriorityClasses, and Kueue's
// WorkloadPriorityClasses of the same names and values.

import (
	"maps"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// workloadPriorityClasses are Kueue's tiers, one per PriorityClass of the
// same name and value: what Kueue orders and preempts workloads by. A
// HardwareProfile names its class (spec.scheduling.kueue.priorityClass),
// which Open Data Hub puts in the workload's
// kueue.x-k8s.io/priority-class label; accelc's mutation does the same for
// plain pods, with the team's tier when the profile names none.
func workloadPriorityClasses(m *compile.Model) []Object {
	var out []Object
	for _, name := range slices.Sorted(maps.Keys(m.Cluster.PriorityClasses)) {
		pc := m.Cluster.PriorityClasses[name]
		out = append(out, Object{Dir: "priorities", Source: []string{"cluster", "priorityClasses", name},
			Body: &workloadPriorityClass{
				TypeMeta:    metav1.TypeMeta{APIVersion: kueueAPIVersion, Kind: "WorkloadPriorityClass"},
				ObjectMeta:  objectMeta(m.Cluster.Name, "", name),
				Value:       int32(pc.Value),
				Description: pc.Description,
			}})
	}
	return out
}
func priorityClasses(m *compile.Model) []Object {
	var out []Object
	names := make([]string, 0, len(m.Cluster.PriorityClasses))
	for name := range m.Cluster.PriorityClasses {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		pc := m.Cluster.PriorityClasses[name]
		body := &schedulingv1.PriorityClass{
			TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1", Kind: "PriorityClass"},
			ObjectMeta: objectMeta(m.Cluster.Name, "", name),
			// The schema bounds it to int32 (at most a billion).
			Value:         int32(pc.Value),
			Description:   pc.Description,
			GlobalDefault: pc.GlobalDefault,
		}
		if pc.PreemptionPolicy != "" {
			body.PreemptionPolicy = ptr(corev1.PreemptionPolicy(pc.PreemptionPolicy))
		}
		out = append(out, Object{Dir: "priorities", Body: body,
			Source: []string{"cluster", "priorityClasses", name}})
	}
	return out
}
