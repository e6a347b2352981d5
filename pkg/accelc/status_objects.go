package accelc

// The objects status reads from the API server, decoded: only the
// fields it shows.

import (
	"cmp"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/pkg/workloads"
)

// What status reads from the API server, decoded: only the fields it
// shows. A part not installed has its flag false.
type clusterObjects struct {
	gatekeeper, kueue, flux bool
	kueueVersion            string

	constraints []constraintObject
	mutators    map[string]int // kind → count
	// mutatingWebhook and validatingWebhook are Gatekeeper's webhook
	// configurations as registered (what they receive is judged from
	// them: mutatesPodUpdates, receivesEverything, skipsJudgedPods…); nil
	// where they could not be read.
	mutatingWebhook, validatingWebhook *mutatingWebhookConfiguration
	// podAdmission: what the API server holds of accelc-pod-admission.
	podAdmission podAdmissionObjects
	// ignored are the namespaces labelled admission.gatekeeper.sh/ignore,
	// sorted (none where they could not be listed).
	ignored []string
	// identities: the users the policies trust, as the cluster has them
	// (read only with a configuration).
	identities identityObjects
	// entitlements map namespaces to teams (read only without a
	// configuration).
	entitlements map[string]string

	clusterQueues  []clusterQueueObject
	cohorts        []cohortObject
	localQueues    []localQueueObject
	workloads      []workloadObject
	sources        []ociRepositoryObject
	kustomizations []kustomizationObject

	// running is what the cluster runs, with Kueue's Workloads: read
	// only where Kueue is served and some namespace queues through it.
	running *workloads.Set
}

// admits says whether accelc's admission is in the cluster: one of its
// constraints, or accelc-pod-admission.
func (o *clusterObjects) admits() bool {
	return len(o.constraints) > 0 || o.podAdmission.policy
}

// podAdmissionObjects is what the API server holds of
// accelc-pod-admission, the ValidatingAdmissionPolicy that judges the
// common GPU pod on Kubernetes 1.36.
type podAdmissionObjects struct {
	// read: the reader may read ValidatingAdmissionPolicies and their
	// bindings; nothing else is known otherwise.
	read bool
	// policy: the ValidatingAdmissionPolicy is there.
	policy bool
	// bindings counts its bindings; denying, those whose
	// validationActions hold Deny.
	bindings, denying int
	// bound are the profiles its bindings select (one a profile, by the
	// profile label), each with why no binding that selects it refuses a
	// pod it judges wrong ("" where one does): validationActions without
	// Deny, or parameterNotFoundAction Allow (a HardwareProfile deleted
	// in the dashboard then admits its pods).
	bound map[string]string
	// unknownPolicy and unknownBinding: accelc-pod-admission-unknown-profile
	// and its binding are there; unknownLeaves, the profiles that binding
	// leaves to accelc-pod-admission's (the tree's, as rendered).
	unknownPolicy, unknownBinding bool
	unknownLeaves                 []string
}

// managedBy selects the objects accelc rendered.
const managedBy = "app.kubernetes.io/managed-by=accelc"

// clusterLabel is the label that names the cluster an object was
// rendered for.
const clusterLabel = "accelc.io/cluster"

type objectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func ready(conds []condition) Condition {
	for _, c := range conds {
		if c.Type == "Ready" {
			return Condition{Status: c.Status, Reason: c.Reason, Message: c.Message}
		}
	}
	return Condition{}
}

func isTrue(conds []condition, typ string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Status == "True"
		}
	}
	return false
}

type constraintObject struct {
	Kind     string     `json:"kind"`
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		EnforcementAction string `json:"enforcementAction"`
	} `json:"spec"`
	Status struct {
		AuditTimestamp  string      `json:"auditTimestamp"`
		TotalViolations *int        `json:"totalViolations"`
		Violations      []Violation `json:"violations"`
	} `json:"status"`
}

type entitlementObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Team string `json:"team"`
	} `json:"spec"`
}

type resourceGroups []struct {
	Flavors []struct {
		Name      string `json:"name"`
		Resources []struct {
			Name         string            `json:"name"`
			NominalQuota resource.Quantity `json:"nominalQuota"`
		} `json:"resources"`
	} `json:"flavors"`
}

type flavorUsage []struct {
	Name      string `json:"name"`
	Resources []struct {
		Name  string            `json:"name"`
		Total resource.Quantity `json:"total"`
	} `json:"resources"`
}

type clusterQueueObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		// CohortName is v1beta2's, Cohort v1beta1's.
		CohortName     string         `json:"cohortName"`
		Cohort         string         `json:"cohort"`
		ResourceGroups resourceGroups `json:"resourceGroups"`
	} `json:"spec"`
	Status struct {
		FlavorsReservation flavorUsage `json:"flavorsReservation"`
		FlavorsUsage       flavorUsage `json:"flavorsUsage"`
		PendingWorkloads   int         `json:"pendingWorkloads"`
		ReservingWorkloads int         `json:"reservingWorkloads"`
		AdmittedWorkloads  int         `json:"admittedWorkloads"`
	} `json:"status"`
}

func (q *clusterQueueObject) cohort() string { return cmp.Or(q.Spec.CohortName, q.Spec.Cohort) }

type cohortObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		ResourceGroups resourceGroups `json:"resourceGroups"`
	} `json:"spec"`
}

type localQueueObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		ClusterQueue string `json:"clusterQueue"`
	} `json:"spec"`
}

type workloadObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		QueueName string `json:"queueName"`
	} `json:"spec"`
	Status struct {
		Conditions []condition `json:"conditions"`
	} `json:"status"`
}

// waiting says whether Kueue has not admitted the workload and it has
// not finished.
func (w *workloadObject) waiting() bool {
	return !isTrue(w.Status.Conditions, "Admitted") && !isTrue(w.Status.Conditions, "Finished")
}

type ociRepositoryObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		URL string `json:"url"`
	} `json:"spec"`
	Status struct {
		Artifact *struct {
			Revision string            `json:"revision"`
			Metadata map[string]string `json:"metadata"`
		} `json:"artifact"`
		Conditions []condition `json:"conditions"`
	} `json:"status"`
}

type kustomizationObject struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Path      string `json:"path"`
		SourceRef struct {
			Kind      string `json:"kind"`
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"sourceRef"`
	} `json:"spec"`
	Status struct {
		LastAppliedRevision string      `json:"lastAppliedRevision"`
		Conditions          []condition `json:"conditions"`
	} `json:"status"`
}
