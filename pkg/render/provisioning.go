package render

// Kueue ProvisioningRequest configs and the admission checks for types
// that scale.

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// ProvisioningCheckName names both the AdmissionCheck the ClusterQueues of
// provisioned profiles list and the ProvisioningRequestConfig it points
// at: one per cluster, as cluster.autoscaling.provisioning is.
const ProvisioningCheckName = "accelc-provisioning"

// ProvisioningControllerName is the controller of Kueue's
// ProvisioningRequest admission checks (kueue.ProvisioningRequestControllerName).
const ProvisioningControllerName = "kueue.x-k8s.io/provisioning-request"

// provisioningObjects are Kueue's ProvisioningRequestConfig, holding the
// class, parameters, retry strategy and managed resources of
// cluster.autoscaling.provisioning, and the AdmissionCheck whose
// parameters name it; nil when no ClusterQueue waits for a
// ProvisioningRequest.
func provisioningObjects(m *compile.Model) []Object {
	if !m.Provisioned() {
		return nil
	}
	conf := m.Cluster.Autoscaling.Provisioning
	spec := provisioningRequestConfigSpec{
		ProvisioningClassName: conf.Class,
		Parameters:            conf.Parameters,
		ManagedResources:      conf.ManagedResources,
	}
	if r := conf.Retry; r != nil {
		spec.RetryStrategy = &provisioningRetryStrategy{
			BackoffLimitCount:  r.BackoffLimitCount,
			BackoffBaseSeconds: r.BackoffBaseSeconds,
			BackoffMaxSeconds:  r.BackoffMaxSeconds,
		}
	}
	source := []string{"cluster", "autoscaling", "provisioning"}
	return []Object{
		{
			Dir: "queues", Source: source,
			Body: &provisioningRequestConfig{
				TypeMeta:   metav1.TypeMeta{APIVersion: kueueAPIVersion, Kind: "ProvisioningRequestConfig"},
				ObjectMeta: objectMeta(m.Cluster.Name, "", ProvisioningCheckName),
				Spec:       spec,
			},
		},
		{
			Dir: "queues", Source: source,
			Body: &admissionCheck{
				TypeMeta:   metav1.TypeMeta{APIVersion: kueueAPIVersion, Kind: "AdmissionCheck"},
				ObjectMeta: objectMeta(m.Cluster.Name, "", ProvisioningCheckName),
				Spec: admissionCheckSpec{
					ControllerName: ProvisioningControllerName,
					Parameters: &admissionCheckParameters{
						APIGroup: "kueue.x-k8s.io",
						Kind:     "ProvisioningRequestConfig",
						Name:     ProvisioningCheckName,
					},
				},
			},
		},
	}
}

// provisioningChecks is a team's ClusterQueue's admissionChecksStrategy
// for a profile: the provisioning check on the flavors whose type a
// NodePool launches, or, when that is every flavor, on all of them (no
// onFlavors, so the default flavor's CPU and memory are not left out);
// nil when the queue waits for none.
func provisioningChecks(m *compile.Model, t *compile.Team, p *compile.Profile) *admissionChecksStrategy {
	flavors, all := m.ProvisionedFlavors(t, p)
	if len(flavors) == 0 {
		return nil
	}
	rule := admissionCheckStrategyRule{Name: ProvisioningCheckName}
	if !all {
		rule.OnFlavors = flavors
	}
	return &admissionChecksStrategy{AdmissionChecks: []admissionCheckStrategyRule{rule}}
}

// Kueue's admission-check objects, kueue.x-k8s.io/v1beta2.
type (
	provisioningRequestConfig struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              provisioningRequestConfigSpec `json:"spec"`
	}
	provisioningRequestConfigSpec struct {
		ManagedResources      []string                   `json:"managedResources,omitempty"`
		Parameters            map[string]string          `json:"parameters,omitempty"`
		ProvisioningClassName string                     `json:"provisioningClassName"`
		RetryStrategy         *provisioningRetryStrategy `json:"retryStrategy,omitempty"`
	}
	provisioningRetryStrategy struct {
		BackoffBaseSeconds *int32 `json:"backoffBaseSeconds,omitempty"`
		BackoffLimitCount  *int32 `json:"backoffLimitCount,omitempty"`
		BackoffMaxSeconds  *int32 `json:"backoffMaxSeconds,omitempty"`
	}

	admissionCheck struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              admissionCheckSpec `json:"spec"`
	}
	admissionCheckSpec struct {
		ControllerName string                    `json:"controllerName"`
		Parameters     *admissionCheckParameters `json:"parameters,omitempty"`
	}
	admissionCheckParameters struct {
		APIGroup string `json:"apiGroup"`
		Kind     string `json:"kind"`
		Name     string `json:"name"`
	}

	// admissionChecksStrategy is a ClusterQueue's
	// spec.admissionChecksStrategy.
	admissionChecksStrategy struct {
		AdmissionChecks []admissionCheckStrategyRule `json:"admissionChecks"`
	}
	admissionCheckStrategyRule struct {
		Name      string   `json:"name"`
		OnFlavors []string `json:"onFlavors,omitempty"`
	}
)
