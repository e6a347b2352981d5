package render

// ResourceQuotas: each team namespace's accelerator requests capped at
// the team's total, for clusters without Kueue.

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// resourceQuotas caps each team namespace's accelerator requests at the
// team's total per resource: the guard rail for clusters without Kueue.
func resourceQuotas(m *compile.Model, t *compile.Team) []Object {
	hard := map[corev1.ResourceName]int{}
	for id := range t.Quota {
		for res, q := range m.KeyQuotas(t, id) {
			hard[corev1.ResourceName("requests."+res)] += q
		}
	}
	return namespaceQuotas(m, t, "accelc-accelerators", "queues", []string{"teams", t.Name, "namespaces"}, hard)
}

// namespaceQuotas are a ResourceQuota of the name in each of the team's
// namespaces, each with the team's whole hard limits.
//
// A team not yet at deny gets none: a ResourceQuota refuses pods, which
// dryrun and warn never do (accelc audit says which would wait).
func namespaceQuotas(m *compile.Model, t *compile.Team, name, dir string, source []string, hard map[corev1.ResourceName]int) []Object {
	var out []Object
	for _, ns := range t.Namespaces {
		if m.TeamStage(t, ns) != compile.Deny {
			continue
		}
		out = append(out, Object{
			Dir: dir, PerNamespace: true, Source: source,
			Body: &deviceQuota{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ResourceQuota"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: managedLabels(m.Cluster.Name),
					Annotations: map[string]string{"accelc.io/team": t.Name}},
				Spec: deviceQuotaSpec{Hard: hard},
			},
		})
	}
	return out
}

// deviceQuota is a core/v1 ResourceQuota of device counts. It is not
// corev1.ResourceQuota, whose quantities marshal as strings ("56") and
// whose status is always written: accelc writes the counts as integers,
// which the API server reads as the same quantities.
type deviceQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              deviceQuotaSpec `json:"spec"`
}

type deviceQuotaSpec struct {
	Hard map[corev1.ResourceName]int `json:"hard"`
}
