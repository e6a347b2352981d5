package compile

// The Kubernetes version a cluster targets: its minor version, what it
// allows (admission policies), and the check of it.

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultKubernetesMinor is the Kubernetes minor a cluster that sets no
// cluster.kubernetesVersion is taken to run.
const DefaultKubernetesMinor = 36

// AdmissionPolicyMinor is the first Kubernetes minor that serves
// MutatingAdmissionPolicy (admissionregistration.k8s.io/v1) by default.
const AdmissionPolicyMinor = 36

// OldestKubernetesMinor is the oldest Kubernetes minor accelc supports
// (README, Supported versions): Flux v2.9 needs 1.34.1, and before 1.34
// MutatingAdmissionPolicy is alpha.
const OldestKubernetesMinor = 34

// KubernetesMinor is the cluster's Kubernetes minor: 34 for
// kubernetesVersion "1.34", DefaultKubernetesMinor when it is not set.
func (c Cluster) KubernetesMinor() int {
	_, minor, ok := strings.Cut(c.KubernetesVersion, ".")
	if !ok {
		return DefaultKubernetesMinor
	}
	n, err := strconv.Atoi(minor)
	if err != nil {
		return DefaultKubernetesMinor
	}
	return n
}

// checkKubernetesMinor refuses a minor accelc does not support.
func checkKubernetesMinor(m *Model) []Diagnostic {
	if minor := m.Cluster.KubernetesMinor(); minor < OldestKubernetesMinor {
		return []Diagnostic{{Path: m.root().Key("cluster").Key("kubernetesVersion"), Msg: fmt.Sprintf(
			"Kubernetes %s is not supported: accelc needs 1.%d or later (README, Supported versions: Flux v2.9 needs 1.34.1, and MutatingAdmissionPolicy is alpha before 1.34); upgrade the cluster first",
			m.Cluster.KubernetesVersion, OldestKubernetesMinor)}}
	}
	return nil
}

// AdmissionPolicies reports whether the cluster's API server serves
// MutatingAdmissionPolicies, which label a workload naming its profile
// only by Open Data Hub's annotation. Where it does not, Gatekeeper
// mutators label the workloads of a profile that schedules through Kueue
// from the queue label Open Data Hub's webhook gives them.
func (c Cluster) AdmissionPolicies() bool {
	return c.KubernetesMinor() >= AdmissionPolicyMinor
}

// ProfileWebhook reports whether accelc's own mutating webhook (accelc
// serve, in the catalog service's Deployment) does what the
// MutatingAdmissionPolicies do on 1.36: on a cluster whose API server
// serves none, where the catalog service runs.
func (c Cluster) ProfileWebhook() bool {
	return !c.AdmissionPolicies() && c.CatalogService != nil
}

// LabelsFromQueue reports whether Gatekeeper mutators label a workload
// that names its profile only by Open Data Hub's annotation from the
// queue label ODH's webhook writes: before 1.36, without accelc's webhook.
func (c Cluster) LabelsFromQueue() bool {
	return !c.AdmissionPolicies() && !c.ProfileWebhook()
}

// checkKubernetesVersion says, for a cluster before 1.36, how a workload
// that names its profile only by Open Data Hub's annotation is labelled
// there: by accelc's webhook, where the catalog service runs it; else
// from the queue label ODH's webhook writes. That fallback labels only
// the workloads of profiles that schedule through Kueue (ODH's webhook
// writes a queue label only from a HardwareProfile with
// scheduling.kueue.localQueueName), so a cluster with an offered profile
// that does not, and no catalog service, is refused: such a workload of
// that profile, as ODH's dashboard writes Notebooks and
// InferenceServices, would be denied under deny, and nothing accelc
// renders without its webhook could label it.
//
// The refusal is a configuration error, found when the model loads
// (checkOlderMinorLabelling); the warnings are vet's (Check).
func (m *Model) checkKubernetesVersion() []Diagnostic {
	if d := m.olderMinorLabelling(); d != nil && d.Severity == Warning {
		return []Diagnostic{*d}
	}
	return nil
}

// checkOlderMinorLabelling refuses, at load, a cluster before 1.36
// whose annotation-only workloads of some profile nothing would label
// (checkKubernetesVersion).
func checkOlderMinorLabelling(m *Model) []Diagnostic {
	if d := m.olderMinorLabelling(); d != nil && d.Severity == Error {
		return []Diagnostic{*d}
	}
	return nil
}

// olderMinorLabelling is what checkKubernetesVersion says, nil on 1.36.
func (m *Model) olderMinorLabelling() *Diagnostic {
	if m.Cluster.AdmissionPolicies() {
		return nil
	}
	at := m.root().Key("cluster").Key("kubernetesVersion")
	if m.Cluster.ProfileWebhook() {
		return &Diagnostic{Severity: Warning, Path: at, Msg: fmt.Sprintf(
			"Kubernetes %s serves no MutatingAdmissionPolicy by default (GA in 1.36), so none is rendered: accelc's own mutating webhook (accelc serve in the catalog service, MutatingWebhookConfiguration accelc-profile-label) does what they do — the profile label from annotation opendatahub.io/hardware-profile-name on pods and workload templates, a new Job's LocalQueue and priority labels and Kueue topology annotation — over TLS from a certificate cert-manager issues (or OpenShift's service CA, with catalogService.tls.openshiftServiceCA); it fails closed: while no replica answers, what it would label is refused",
			m.Cluster.KubernetesVersion)}
	}
	var queued, other []string
	for i := range m.Profiles {
		p := &m.Profiles[i]
		if !p.Offered() {
			continue
		}
		if len(m.QueueTeams(p)) > 0 {
			queued = append(queued, p.Name)
		} else {
			other = append(other, p.Name)
		}
	}
	if len(other) > 0 {
		return &Diagnostic{Path: at, Msg: fmt.Sprintf(
			"Kubernetes %s serves no MutatingAdmissionPolicy by default (GA in 1.36), and profiles %s do not schedule through Kueue, so nothing but accelc's own webhook can give their workloads that name them only by annotation opendatahub.io/hardware-profile-name (as Open Data Hub's dashboard writes Notebooks and InferenceServices) label %s/profile, and without it they would be refused: set cluster.catalogService (accelc serve runs the webhook; docs/policies.md, \"Before Kubernetes 1.36\"), or give every profile's teams Kueue quotas",
			m.Cluster.KubernetesVersion, strings.Join(other, ", "), m.Cluster.LabelPrefix)}
	}
	msg := fmt.Sprintf("Kubernetes %s serves no MutatingAdmissionPolicy by default (GA in 1.36), so none is rendered, and without cluster.catalogService no accelc webhook stands in: a workload that names its profile only by annotation opendatahub.io/hardware-profile-name gets accelc's profile label from a Gatekeeper mutator instead, keyed on the kueue.x-k8s.io/queue-name label Open Data Hub's webhook writes from the HardwareProfile's scheduling.kueue.localQueueName",
		m.Cluster.KubernetesVersion)
	if len(queued) > 0 {
		msg += fmt.Sprintf(" (profiles %s)", strings.Join(queued, ", "))
	}
	var topology []string
	for i := range m.Profiles {
		if p := &m.Profiles[i]; p.Offered() && m.UsesKueue() {
			if key, _ := m.TopologyAnnotation(p); key != "" {
				topology = append(topology, p.Name)
			}
		}
	}
	if len(topology) > 0 {
		msg += fmt.Sprintf("; and profiles %s keep their pods in one topology domain, which only accelc's policies or webhook write as Kueue asks: without them a new Job gets no topology annotation (Kueue places it without one), and a pod gets one from a Gatekeeper mutator that cannot leave alone a pod that names another (Kueue refuses a pod with two)",
			strings.Join(topology, ", "))
	}
	msg += "; set cluster.catalogService to have accelc's webhook label them as on 1.36"
	return &Diagnostic{Severity: Warning, Path: at, Msg: msg}
}
