package render

// The shapes of the Kueue objects render writes, kueue.x-k8s.io/v1beta2.

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/pkg/compile"
)

// Kueue's objects, kueue.x-k8s.io/v1beta2, as accelc writes them (Kueue's
// Go types are not in go.mod).
type (
	resourceFlavor struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		// Spec is written even when empty, as the default flavor's.
		Spec resourceFlavorSpec `json:"spec"`
	}
	resourceFlavorSpec struct {
		NodeLabels map[string]string `json:"nodeLabels,omitempty"`
		NodeTaints []compile.Taint   `json:"nodeTaints,omitempty"`
		// Tolerations are added by Kueue to the pods it admits in the
		// flavor's quota.
		Tolerations []compile.Toleration `json:"tolerations,omitempty"`
		// TopologyName is the Topology Kueue places the flavor's pods by.
		TopologyName string `json:"topologyName,omitempty"`
	}

	clusterQueue struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              clusterQueueSpec `json:"spec"`
	}
	clusterQueueSpec struct {
		CohortName        string                `json:"cohortName,omitempty"`
		FlavorFungibility *flavorFungibility    `json:"flavorFungibility,omitempty"`
		NamespaceSelector *metav1.LabelSelector `json:"namespaceSelector"`
		Preemption        *queuePreemption      `json:"preemption,omitempty"`
		QueueingStrategy  string                `json:"queueingStrategy"`
		ResourceGroups    []resourceGroup       `json:"resourceGroups"`

		// AdmissionChecksStrategy: the provisioning check (provisioning.go).
		AdmissionChecksStrategy *admissionChecksStrategy `json:"admissionChecksStrategy,omitempty"`
		// AdmissionScope: the team's admission fair sharing.
		AdmissionScope *admissionScope `json:"admissionScope,omitempty"`
		// FairSharing weighs the queue against the team's queues of
		// other profiles in the team's Cohort.
		FairSharing *fairSharingSpec `json:"fairSharing,omitempty"`
	}
	admissionScope struct {
		AdmissionMode string `json:"admissionMode"`
	}
	flavorFungibility struct {
		WhenCanBorrow  string `json:"whenCanBorrow"`
		WhenCanPreempt string `json:"whenCanPreempt"`
	}
	queuePreemption struct {
		BorrowWithinCohort  *borrowWithinCohort `json:"borrowWithinCohort,omitempty"`
		ReclaimWithinCohort string              `json:"reclaimWithinCohort"`
		WithinClusterQueue  string              `json:"withinClusterQueue"`
	}
	borrowWithinCohort struct {
		Policy string `json:"policy"`
	}

	// cohort is a hierarchical Cohort: a team's budget.
	cohort struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              cohortSpec `json:"spec"`
	}
	cohortSpec struct {
		FairSharing    *fairSharingSpec `json:"fairSharing,omitempty"`
		ParentName     string           `json:"parentName,omitempty"`
		ResourceGroups []resourceGroup  `json:"resourceGroups,omitempty"`
	}
	// fairSharingSpec is a Cohort's or ClusterQueue's fairSharing.
	fairSharingSpec struct {
		Weight compile.Quantity `json:"weight"`
	}

	// topology is Kueue's Topology: an accelerator type's levels, each a
	// node label, widest first.
	topology struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              topologySpec `json:"spec"`
	}
	topologySpec struct {
		Levels []topologyLevel `json:"levels"`
	}
	topologyLevel struct {
		NodeLabel string `json:"nodeLabel"`
	}

	workloadPriorityClass struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Value             int32  `json:"value"`
		Description       string `json:"description,omitempty"`
	}
	resourceGroup struct {
		CoveredResources []string       `json:"coveredResources"`
		Flavors          []flavorQuotas `json:"flavors"`
	}
	flavorQuotas struct {
		Name      string          `json:"name"`
		Resources []resourceQuota `json:"resources"`
	}
	// resourceQuota is one resource's quota in a flavor. Kueue reads
	// quantities; accelc writes device counts as integers and CPU and
	// memory as quantity strings ("64", "512Gi").
	resourceQuota struct {
		Name           string            `json:"name"`
		NominalQuota   compile.Quantity  `json:"nominalQuota"`
		BorrowingLimit *compile.Quantity `json:"borrowingLimit,omitempty"`
		LendingLimit   *compile.Quantity `json:"lendingLimit,omitempty"`
	}

	localQueue struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
		Spec              localQueueSpec `json:"spec"`
	}
	localQueueSpec struct {
		ClusterQueue string `json:"clusterQueue"`
		// FairSharing weighs the namespace under its team's admission
		// fair sharing.
		FairSharing *fairSharingSpec `json:"fairSharing,omitempty"`
	}
)
