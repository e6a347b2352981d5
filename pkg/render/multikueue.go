package render

// MultiKueue objects on a manager: its clusters, configs and the
// admission checks that dispatch to them.

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// MultiKueueControllerName is the controller of Kueue's MultiKueue
// admission checks (kueue.MultiKueueControllerName).
const MultiKueueControllerName = "kueue.x-k8s.io/multikueue"

// multiKueueObjects are, on a MultiKueue manager, a MultiKueueCluster per
// worker, naming the Secret in Kueue's namespace that holds the worker's
// kubeconfig (never rendered: it is a credential, made out of band), and
// per set of workers some queue dispatches to, a MultiKueueConfig listing
// them and the AdmissionCheck whose parameters name it. Nil elsewhere.
func multiKueueObjects(m *compile.Model) []Object {
	if !m.IsMultiKueueManager() {
		return nil
	}
	mk := m.Cluster.MultiKueue
	var out []Object
	for _, name := range slices.Sorted(maps.Keys(mk.Workers)) {
		out = append(out, Object{
			Dir: "queues", Source: []string{"cluster", "multikueue", "workers", name},
			Body: &multiKueueCluster{
				TypeMeta:   metav1.TypeMeta{APIVersion: kueueAPIVersion, Kind: "MultiKueueCluster"},
				ObjectMeta: objectMeta(m.Cluster.Name, "", name),
				Spec: multiKueueClusterSpec{ClusterSource: multiKueueClusterSource{KubeConfig: &multiKueueKubeConfig{
					LocationType: "Secret", Location: mk.Workers[name].KubeconfigSecret,
				}}},
			},
		})
	}
	for _, workers := range m.DispatchGroups() {
		name := compile.DispatchGroupName(workers)
		source := []string{"cluster", "multikueue", "workers", workers[0]}
		out = append(out,
			Object{
				Dir: "queues", Source: source,
				Body: &multiKueueConfig{
					TypeMeta:   metav1.TypeMeta{APIVersion: kueueAPIVersion, Kind: "MultiKueueConfig"},
					ObjectMeta: objectMeta(m.Cluster.Name, "", name),
					Spec:       multiKueueConfigSpec{Clusters: workers},
				},
			},
			Object{
				Dir: "queues", Source: source,
				Body: &admissionCheck{
					TypeMeta:   metav1.TypeMeta{APIVersion: kueueAPIVersion, Kind: "AdmissionCheck"},
					ObjectMeta: objectMeta(m.Cluster.Name, "", name),
					Spec: admissionCheckSpec{
						ControllerName: MultiKueueControllerName,
						Parameters:     &admissionCheckParameters{APIGroup: "kueue.x-k8s.io", Kind: "MultiKueueConfig", Name: name},
					},
				},
			})
	}
	return out
}

// multiKueueCheck adds, on a manager, the MultiKueue admission check of
// the team's queue for the profile to the queue's checks: on all its
// flavors, as Kueue requires of a MultiKueue check (one per queue).
func multiKueueCheck(m *compile.Model, t *compile.Team, p *compile.Profile, s *admissionChecksStrategy) *admissionChecksStrategy {
	workers := m.DispatchWorkers(t, p)
	if len(workers) == 0 {
		return s
	}
	if s == nil {
		s = &admissionChecksStrategy{}
	}
	s.AdmissionChecks = append(s.AdmissionChecks, admissionCheckStrategyRule{Name: compile.DispatchGroupName(workers)})
	return s
}

// multiKueueConfiguration is the multiKueue section of a manager's Kueue
// Configuration fragment: the manager's name as the origin label of the
// Workloads it creates on its workers, so that a worker shared by two
// managers has each collect only its own; nil elsewhere.
func multiKueueConfiguration(m *compile.Model) *multiKueueConfigurationSection {
	if !m.IsMultiKueueManager() {
		return nil
	}
	return &multiKueueConfigurationSection{Origin: m.Cluster.Name}
}

// Kueue's MultiKueue objects, kueue.x-k8s.io/v1beta2.
type (
	multiKueueCluster struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              multiKueueClusterSpec `json:"spec"`
	}
	multiKueueClusterSpec struct {
		ClusterSource multiKueueClusterSource `json:"clusterSource"`
	}
	multiKueueClusterSource struct {
		KubeConfig *multiKueueKubeConfig `json:"kubeConfig,omitempty"`
	}
	multiKueueKubeConfig struct {
		Location     string `json:"location"`
		LocationType string `json:"locationType"`
	}
	multiKueueConfig struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              multiKueueConfigSpec `json:"spec"`
	}
	multiKueueConfigSpec struct {
		Clusters []string `json:"clusters"`
	}
	multiKueueConfigurationSection struct {
		Origin string `json:"origin"`
	}
)
