package render

// The fragment of Kueue's own Configuration that accelc's queues need,
// as a ConfigMap the admin merges.

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/pkg/compile"
)

// KueueConfigMapName is the ConfigMap that holds the part of Kueue's
// Configuration accelc's queues need.
const KueueConfigMapName = "accelc-kueue-configuration"

// KueueQuotas reports whether the teams' quotas are Kueue's: some team has
// a quota and the cluster does not ask for ResourceQuotas. Then accelc
// renders Kueue's queues and its Configuration fragment.
func KueueQuotas(m *compile.Model) bool {
	if m.Cluster.Quotas == "resourcequota" {
		return false
	}
	for i := range m.Teams {
		if len(m.Teams[i].Quota) > 0 {
			return true
		}
	}
	return false
}

// KueueNamespaces are the namespaces accelc's Kueue Configuration hands
// Kueue's webhooks (managedJobsNamespaceSelector), sorted: every team's,
// where the teams' quotas are Kueue's (KueueQuotas); none otherwise. Kueue's
// pod webhook gates each pod made there that joins a LocalQueue.
func KueueNamespaces(m *compile.Model) []string {
	if !KueueQuotas(m) {
		return nil
	}
	var namespaces []string
	for _, t := range m.Teams {
		namespaces = append(namespaces, t.Namespaces...)
	}
	slices.Sort(namespaces)
	return namespaces
}

// kueueConfiguration is a ConfigMap, in the profile namespace, holding
// the fragment of Kueue's Configuration (config.kueue.x-k8s.io/v1beta2)
// that the admin merges into Kueue's own (kueue-manager-config,
// controller_manager_config.yaml): Kueue manages plain pods and Jobs in
// the team namespaces only (managedJobsNamespaceSelector), so pods that
// must never wait in a queue — kube-system's, the GPU Operator's — are
// left alone, and the pod integration is on. Where DRA profiles are
// queued, their DeviceClasses are mapped to their resource
// (resources.deviceClassMappings): Kueue charges a claimed device to the
// team's quota of its type as it charges a requested one. accelc does not write Kueue's
// ConfigMap: it holds settings (webhook, metrics, other frameworks) that
// are the Kueue installation's. Where a team, cohort or profile sets a
// fair-share weight, fair sharing is on (fairSharing.preemptionStrategies);
// where a team sets admissionFairSharing, so is Kueue's
// admissionFairSharing.
func kueueConfiguration(m *compile.Model) (Object, error) {
	namespaces := KueueNamespaces(m)
	type deviceClassMapping struct {
		Name             string   `json:"name"`
		DeviceClassNames []string `json:"deviceClassNames"`
	}
	type resources struct {
		DeviceClassMappings []deviceClassMapping `json:"deviceClassMappings"`
	}
	type fairSharing struct {
		PreemptionStrategies []string `json:"preemptionStrategies"`
	}
	type admissionFairSharing struct {
		UsageHalfLifeTime     string `json:"usageHalfLifeTime"`
		UsageSamplingInterval string `json:"usageSamplingInterval"`
	}
	fragment := struct {
		APIVersion                   string                `json:"apiVersion"`
		Kind                         string                `json:"kind"`
		ManagedJobsNamespaceSelector *metav1.LabelSelector `json:"managedJobsNamespaceSelector"`
		Integrations                 struct {
			Frameworks []string `json:"frameworks"`
		} `json:"integrations"`
		Controller           kueueController                 `json:"controller"`
		ClientConnection     kueueClientConnection           `json:"clientConnection"`
		Resources            *resources                      `json:"resources,omitempty"`
		MultiKueue           *multiKueueConfigurationSection `json:"multiKueue,omitempty"`
		FairSharing          *fairSharing                    `json:"fairSharing,omitempty"`
		AdmissionFairSharing *admissionFairSharing           `json:"admissionFairSharing,omitempty"`
	}{APIVersion: "config.kueue.x-k8s.io/v1beta2", Kind: "Configuration",
		ManagedJobsNamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: namespaces,
		}}}}
	fragment.Integrations.Frameworks = kueueFrameworks()
	fragment.Controller, fragment.ClientConnection = kueueSizing(m)
	fragment.MultiKueue = multiKueueConfiguration(m)
	if mappings := m.KueueDeviceClassMappings(); len(mappings) > 0 {
		fragment.Resources = &resources{}
		for _, mp := range mappings {
			fragment.Resources.DeviceClassMappings = append(fragment.Resources.DeviceClassMappings, deviceClassMapping{Name: mp.Resource, DeviceClassNames: mp.Classes})
		}
	}
	// Fair sharing, where a team or cohort sets a weight: Kueue lends
	// idle quota to the member of a cohort with the least borrowed per
	// weight, and preempts by share to reclaim it: first a workload whose
	// queue, without it, still holds at least the preemptor's share with
	// it, then one whose queue holds more than the preemptor's before
	// (Kueue's default pair).
	if m.FairSharing() {
		fragment.FairSharing = &fairSharing{PreemptionStrategies: []string{"LessThanOrEqualToFinalShare", "LessThanInitialShare"}}
	}
	// Admission fair sharing, where a team sets it: how Kueue counts a
	// namespace's recent use, which orders its team's waiting workloads.
	if afs := m.AdmissionFairSharingConfig(); afs != nil {
		fragment.AdmissionFairSharing = &admissionFairSharing{UsageHalfLifeTime: afs.UsageHalfLife, UsageSamplingInterval: afs.UsageSamplingInterval}
	}
	b, err := yaml.Marshal(fragment)
	if err != nil {
		return Object{}, err
	}
	body := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: KueueConfigMapName, Namespace: m.Cluster.ProfileNamespace, Labels: managedLabels(m.Cluster.Name),
			Annotations: map[string]string{"accelc.io/merge-into": "kueue-system/kueue-manager-config controller_manager_config.yaml"}},
		Data: map[string]string{"configuration.yaml": string(b)},
	}
	return Object{Dir: "queues", Body: body, Source: []string{"teams"}}, nil
}

// kueueController is the controller section of Kueue's Configuration:
// how many objects of each kind its reconcilers work on at once.
type kueueController struct {
	GroupKindConcurrency map[string]int `json:"groupKindConcurrency"`
}

// kueueClientConnection is Kueue's client's rate limit on the API server.
type kueueClientConnection struct {
	QPS   int `json:"qps"`
	Burst int `json:"burst"`
}

// quotaDevices is D, the devices the teams' quotas hold in all.
func quotaDevices(m *compile.Model) int {
	devices := 0
	for _, t := range m.Teams {
		for _, n := range t.Quota {
			devices += n
		}
	}
	return devices
}

// kueueSizing sizes Kueue's controllers and client for the devices its
// queues hold: D, the sum of every team's quota. Kueue writes about five
// times for each pod it queues alone (the Workload, its quota
// reservation and admission, the gate lifted, the finalizer), fewer per
// pod of a Job admitted whole. Its client gets a request a second for
// every 16 devices, in steps of 50, and never less than Kueue's default
// of 300 (burst 5/3 of it, Kueue's own 300:500): about D/80 pods of one
// device admitted a second, the whole quota turned over in 80 s; the
// default serves D up to 4,800. The Pod and Job reconcilers get a worker
// for every 400 devices, 5 (Kueue's default) to 20, and Workloads twice
// as many (Kueue's ratio); past 20 the API server, not Kueue's workers,
// is the limit. The queues' own reconcilers keep Kueue's defaults: they
// see a change per queue, not per pod. The numbers depend on the CUE
// alone, so a render is reproducible.
func kueueSizing(m *compile.Model) (kueueController, kueueClientConnection) {
	devices := quotaDevices(m)
	qps := 300
	// D/16 rounded up to a multiple of 50: 50 requests/s per 800 devices.
	if steps := (devices + 799) / 800; steps*50 > qps {
		qps = steps * 50
	}
	workers := min(max(5, (devices+399)/400), 20)
	return kueueController{GroupKindConcurrency: map[string]int{
			"Job.batch":                     workers,
			"Pod":                           workers,
			"Workload.kueue.x-k8s.io":       2 * workers,
			"LocalQueue.kueue.x-k8s.io":     5,
			"ClusterQueue.kueue.x-k8s.io":   5,
			"Cohort.kueue.x-k8s.io":         1,
			"ResourceFlavor.kueue.x-k8s.io": 1,
		}}, kueueClientConnection{
			QPS:   qps,
			Burst: qps * 5 / 3,
		}
}
