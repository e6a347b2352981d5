package compile

// The Model: a cluster's compiled configuration, its types and the
// settings every consumer reads.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/accelc/accelc/pkg/catalog"
)

// Model is a cluster's configuration, decoded, defaulted and resolved
// against its catalog.
type Model struct {
	Cluster  Cluster
	Catalog  *catalog.Catalog
	Profiles []Profile // sorted by name
	Teams    []Team    // sorted by name
	// Pins maps node names to class ids set by hand in cluster.nodes.
	Pins map[string]string
	// NodePools are the sharing pools and MIG configs, sorted by name.
	NodePools []*NodePool

	// pins are cluster.nodes' entries by node.
	pins map[string]Path
	src  *source
}

// Where is "file:line:col" (relative to the working directory) where the
// user's CUE declares path (cue path elements: "profiles", "l4"), or the
// longest prefix of it they declare; "" when they declare none of it.
func (m *Model) Where(path ...string) string {
	if m == nil || m.src == nil {
		return ""
	}
	sel := make([]cue.Selector, len(path))
	for i, p := range path {
		sel[i] = cue.Str(p)
	}
	return relPos(m.src.written(sel), m.src.cwd)
}

func (m *Model) root() Path { return m.src.root() }

// Cluster holds cluster-wide settings.
type Cluster struct {
	Name             string `json:"name"`
	LabelPrefix      string `json:"labelPrefix"`
	ProfileNamespace string `json:"profileNamespace"`
	// KubernetesVersion is the cluster's Kubernetes minor, "1.36"; ""
	// is the default, 1.36 (kubernetes_version.go).
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`
	// Enforcement is the constraints' enforcementAction: dryrun, warn or
	// deny.
	Enforcement string `json:"enforcement"`
	// NodeEnforcement is the stage of the node layer (MIG configs,
	// sharing pools' taints and device-plugin configs) where a pool sets
	// none; "" follows Enforcement. Only at deny are nodes reconfigured.
	NodeEnforcement      string   `json:"nodeEnforcement,omitempty"`
	GenericGPUNamespaces []string `json:"genericGPUNamespaces"`
	ExcludedNamespaces   []string `json:"excludedNamespaces"`
	// ExcludedNamespacesAbsentOK are excluded names the admins accept
	// the cluster lacks (check_cluster.go).
	ExcludedNamespacesAbsentOK []string `json:"excludedNamespacesAbsentOK"`
	// NonAcceleratorResources are the extended resources, exact or
	// prefixes ending in / or -, that are not accelerators.
	NonAcceleratorResources []string `json:"nonAcceleratorResources"`
	// NamespaceCreation is "anyone" or "admins-only": only under
	// admins-only may ExcludedNamespaces hold globs.
	NamespaceCreation string `json:"namespaceCreation"`
	// KueueIdentities are Kueue's and its job integrations' controllers'
	// users, which the admission policy tells from other users.
	KueueIdentities KueueIdentities `json:"kueueIdentities"`
	// DeviceRuntimeClasses hand devices to containers from their
	// environment; PodSecurity is the level team namespaces enforce.
	DeviceRuntimeClasses []string `json:"deviceRuntimeClasses"`
	PodSecurity          string   `json:"podSecurity"`
	// Quotas is "kueue" or "resourcequota".
	Quotas          string                   `json:"quotas"`
	PriorityClasses map[string]PriorityClass `json:"priorityClasses"`
	// MIG is nil when the cluster partitions no GPU.
	MIG                  *MIG   `json:"mig,omitempty"`
	GPUOperatorNamespace string `json:"gpuOperatorNamespace"`
	// Sharing holds the time-slicing and MPS pools by name.
	Sharing map[string]SharingPool `json:"sharing"`
	// Delivery is nil when the cluster renders no Flux objects.
	Delivery *Delivery `json:"delivery,omitempty"`
	// CatalogService, when set, renders accelc serve in the cluster.
	CatalogService *CatalogService `json:"catalogService,omitempty"`
	// Autoscaling says how the cluster's GPU capacity grows.
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`
	// DRA is nil when the cluster renders no Dynamic Resource Allocation
	// objects.
	DRA *DRA `json:"dra,omitempty"`
	// Cohorts are the declared cohorts (parents of teams' cohorts), by
	// name.
	Cohorts map[string]Cohort `json:"cohorts,omitempty"`
	// Topology is, per accelerator type, its network levels, widest first.
	Topology map[string]Topology `json:"topology,omitempty"`
	// MultiKueue is the cluster's part in a MultiKueue fleet; nil for none.
	MultiKueue *MultiKueue `json:"multikueue,omitempty"`
	// AdmissionFairSharing is how Kueue counts namespaces' recent use
	// (admission_fairshare.go); nil: Kueue's defaults as accelc writes them.
	AdmissionFairSharing *AdmissionFairSharingSettings `json:"admissionFairSharing,omitempty"`
}

// KueueIdentities are who may act as Kueue and as the controllers of the
// kinds Kueue admits whole.
type KueueIdentities struct {
	// Manager are Kueue's controller manager's users: only they may lift
	// Kueue's admission gate from a pod.
	Manager []string `json:"manager"`
	// PodControllers are, by "<group>/<Kind>", the users that create the
	// pods of a kind Kueue admits whole.
	PodControllers map[string][]string `json:"podControllers"`
}

// DRA is the cluster's Dynamic Resource Allocation: the DeviceClasses the
// admins write by attribute (the catalog's classes get theirs from
// DeviceClasses).
type DRA struct {
	Classes map[string]AttributeClass `json:"classes"`
}

// AttributeClass is a DeviceClass an admin writes: a CEL selector over
// the DRA driver's devices.
type AttributeClass struct {
	Description string `json:"description,omitempty"`
	Selector    string `json:"selector"`
}

// ProfileDRA says a profile hands its devices out through a resource
// claim: of its types, or of DeviceClass, one of cluster.dra.classes.
type ProfileDRA struct {
	DeviceClass string `json:"deviceClass,omitempty"`
}

// MIG is the cluster's MIG partitioning.
type MIG struct {
	Strategy string               `json:"strategy"`
	Configs  map[string]MIGConfig `json:"configs"`
}

// MIGConfig is one layout for the GPUs of a type.
type MIGConfig struct {
	AcceleratorType string         `json:"acceleratorType"`
	Nodes           []string       `json:"nodes"`
	Layout          map[string]int `json:"layout"`
	Taint           TaintField     `json:"taint"`
	// Enforcement is the config's own node stage; "" follows the
	// cluster's.
	Enforcement string `json:"enforcement,omitempty"`
}

// SharingPool is a time-slicing or MPS pool.
type SharingPool struct {
	AcceleratorType            string     `json:"acceleratorType"`
	Nodes                      []string   `json:"nodes"`
	Strategy                   string     `json:"strategy"`
	Replicas                   int        `json:"replicas"`
	RenameByDefault            bool       `json:"renameByDefault"`
	FailRequestsGreaterThanOne *bool      `json:"failRequestsGreaterThanOne,omitempty"`
	Taint                      TaintField `json:"taint"`
	// Enforcement is the pool's own node stage; "" follows the
	// cluster's.
	Enforcement string `json:"enforcement,omitempty"`
}

// Delivery is where the cluster's artifact is published and how Flux
// follows it.
type Delivery struct {
	URL string `json:"url"`
	Ref struct {
		Tag    string `json:"tag,omitempty"`
		Semver string `json:"semver,omitempty"`
		Digest string `json:"digest,omitempty"`
	} `json:"ref"`
	Interval  string `json:"interval"`
	Namespace string `json:"namespace"`
	Provider  string `json:"provider"`
	Insecure  bool   `json:"insecure,omitempty"`
	SecretRef string `json:"secretRef,omitempty"`
	Verify    *struct {
		Provider          string `json:"provider"`
		SecretRef         string `json:"secretRef,omitempty"`
		MatchOIDCIdentity []struct {
			Issuer  string `json:"issuer"`
			Subject string `json:"subject"`
		} `json:"matchOIDCIdentity,omitempty"`
	} `json:"verify,omitempty"`
}

// Autoscaling is how the cluster grows.
type Autoscaling struct {
	Karpenter *Karpenter `json:"karpenter,omitempty"`
	// Provisioning is Kueue's ProvisioningRequest check (provisioning.go).
	Provisioning *Provisioning `json:"provisioning,omitempty"`
}

// Karpenter is one NodePool per pool.
type Karpenter struct {
	NodeClass NodeClassRef             `json:"nodeClass"`
	Pools     map[string]KarpenterPool `json:"pools"`
}

// NodeClassRef names a Karpenter node class.
type NodeClassRef struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
}

// KarpenterPool is one NodePool: instances of one class.
type KarpenterPool struct {
	AcceleratorType string   `json:"acceleratorType"`
	CapacityTypes   []string `json:"capacityTypes"`
	Limit           *int     `json:"limit,omitempty"`
	InstanceTypes   []string `json:"instanceTypes,omitempty"`
	Weight          *int32   `json:"weight,omitempty"`
	Consolidation   struct {
		Policy string `json:"policy"`
		After  string `json:"after"`
	} `json:"consolidation"`
	ExpireAfter string        `json:"expireAfter"`
	NodeClass   *NodeClassRef `json:"nodeClass,omitempty"`
}

// CatalogService is accelc serve run in the cluster.
type CatalogService struct {
	Image     string   `json:"image"`
	Namespace string   `json:"namespace"`
	Replicas  int      `json:"replicas"`
	AllowFrom []string `json:"allowFrom"`
	Memory    string   `json:"memory"`
	// RecordTypes runs it with --record-types: it writes the type each
	// bound pod of a multi-type or generic profile got on the pod.
	RecordTypes bool `json:"recordTypes"`
	// TLS serves HTTPS with the certificate in a Secret; nil: HTTP.
	TLS *CatalogServiceTLS `json:"tls,omitempty"`
	// LiveDescriptions runs it with --live-descriptions: it keeps each
	// HardwareProfile's opendatahub.io/description current with the
	// profile's availability and wait, and render leaves that annotation
	// out of the HardwareProfiles.
	LiveDescriptions bool `json:"liveDescriptions"`
}

// CatalogServiceTLS is where the catalog service's certificate comes from.
type CatalogServiceTLS struct {
	// SecretName is a kubernetes.io/tls Secret in the service's namespace.
	SecretName string `json:"secretName"`
	// OpenShiftServiceCA has OpenShift's service CA write it.
	OpenShiftServiceCA bool `json:"openshiftServiceCA"`
}

// Configuration is the cluster's configuration as CUE evaluated it, with
// every default filled in and every reference resolved: a CUE file of
// the cluster's package that compiles, on its own, to this model. It is
// what accelc serve compiles in the cluster, where the CUE module is not.
func (m *Model) Configuration() ([]byte, error) {
	if m.src == nil || !m.src.built {
		return nil, fmt.Errorf("the model was not compiled from CUE")
	}
	var b strings.Builder
	b.WriteString("// The cluster's configuration, evaluated: defaults filled in and\n")
	b.WriteString("// references resolved. Rendered by accelc; change the CUE it came from.\n")
	b.WriteString("package " + m.src.pkg + "\n\n")
	for _, field := range []string{"cluster", "accelerators", "profiles", "teams"} {
		v := m.src.cfg.LookupPath(cue.ParsePath(field))
		if !v.Exists() {
			continue
		}
		data, err := v.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("exporting %s: %w", field, err)
		}
		var indented bytes.Buffer
		if err := json.Indent(&indented, data, "", "\t"); err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s: %s\n", field, indented.Bytes())
	}
	return []byte(b.String()), nil
}

// TypeLabel is the normalized node label every profile, flavor and policy
// targets.
func (c Cluster) TypeLabel() string { return c.LabelPrefix + "/type" }

// Profile is a hardware profile.
type Profile struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName"`
	Description string `json:"description"`
	Enabled     bool   `json:"enabled"`
	// Retired is set for a profile that takes no new pods while its
	// running ones finish; nil for one in service.
	Retired          *Retirement       `json:"retired,omitempty"`
	AcceleratorTypes []string          `json:"acceleratorTypes"`
	ResourceName     string            `json:"resourceName"`
	GPU              GPURange          `json:"gpu"`
	CPU              Range             `json:"cpu"`
	Memory           Range             `json:"memory"`
	Tolerations      []Toleration      `json:"tolerations"`
	NodeSelector     map[string]string `json:"nodeSelector"`
	Visibility       []string          `json:"visibility"`
	// PriorityClassName is injected into the profile's pods; "" for none.
	PriorityClassName string `json:"priorityClassName,omitempty"`
	// MIG is the MIG slice the profile targets ("3g.40gb"), or "".
	MIG string `json:"mig,omitempty"`
	// Pool is the shared pool the profile targets, or "";
	// FallbackPools are the pools it may fall back to, in order.
	Pool          string   `json:"pool,omitempty"`
	FallbackPools []string `json:"fallbackPools"`
	// DRA is nil for a profile that hands out an extended resource.
	DRA *ProfileDRA `json:"dra,omitempty"`
	// Topology is the level of its types' topology the profile's pods
	// are kept in; nil for none.
	Topology *ProfileTopology `json:"topology,omitempty"`
	// Provisioning: Kueue admits the profile's workloads on autoscaled
	// flavors only once a ProvisioningRequest succeeds (provisioning.go).
	Provisioning bool `json:"provisioning,omitempty"`
	// FairShare weighs each team's queue of the profile against its
	// queues of other profiles; nil: 1.
	FairShare *FairShare `json:"fairShare,omitempty"`

	// Pools are the node pools (NodePool names) the profile's pods must
	// run in, in order of preference: its pool and fallback pools, or the
	// MIG configs that cut its type into its slice. Empty for a profile
	// of whole GPUs.
	Pools []string `json:"-"`
	// Sharing is ShareMIG, ShareTimeSlicing or ShareMPS for a profile
	// over shared GPUs (of its first pool), "" for whole GPUs.
	Sharing string `json:"-"`
	// SliceMemoryGB is a MIG profile's memory per slice.
	SliceMemoryGB int `json:"-"`
	// Replicas is the pools' replicas per GPU (time-slicing, MPS); 0
	// when they differ.
	Replicas int `json:"-"`

	// Classes are AcceleratorTypes resolved, in preference order.
	Classes []*catalog.Class `json:"-"`

	// path is profiles.<name>; types is where each of AcceleratorTypes
	// comes from (its pool, for types a pool profile takes from its
	// pools).
	path  Path
	types []Path
}

// Retirement is how a profile is retired: the profile its users move to
// ("" for none).
type Retirement struct {
	Replacement string `json:"replacement,omitempty"`
}

// Offered reports whether new pods may use the profile: enabled and not
// retired. A retired profile keeps everything its running pods need
// (queues, NodePools, its HardwareProfile); only new pods are refused.
func (p *Profile) Offered() bool { return p.Enabled && p.Retired == nil }

// Generic reports whether the profile names no accelerator type.
func (p *Profile) Generic() bool { return len(p.AcceleratorTypes) == 0 }

// GPURange is the accelerator count a profile allows.
type GPURange struct {
	Min     int  `json:"min"`
	Default int  `json:"default"`
	Max     *int `json:"max,omitempty"`
}

// Range is a min/default/max of resource quantities.
type Range struct {
	Min     Quantity  `json:"min"`
	Default Quantity  `json:"default"`
	Max     *Quantity `json:"max,omitempty"`
}

// Quantity is a Kubernetes int-or-string quantity: 2 or "16Gi".
type Quantity struct {
	Int    int64
	Str    string
	IsText bool
}

func (q Quantity) MarshalJSON() ([]byte, error) {
	if q.IsText {
		return json.Marshal(q.Str)
	}
	return []byte(strconv.FormatInt(q.Int, 10)), nil
}

func (q *Quantity) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		q.IsText = true
		return json.Unmarshal(b, &q.Str)
	}
	if err := json.Unmarshal(b, &q.Int); err != nil {
		return fmt.Errorf("quantity %s: want an integer or a string like \"16Gi\"", b)
	}
	return nil
}

// Parse reads the quantity as Kubernetes does.
func (q Quantity) Parse() (resource.Quantity, error) {
	if !q.IsText {
		return *resource.NewQuantity(q.Int, resource.DecimalSI), nil
	}
	v, err := resource.ParseQuantity(q.Str)
	if err != nil {
		return v, fmt.Errorf("%q is not a Kubernetes quantity (like 2, 500m or 16Gi)", q.Str)
	}
	return v, nil
}

func (q Quantity) String() string {
	if q.IsText {
		return q.Str
	}
	return strconv.FormatInt(q.Int, 10)
}

// Toleration mirrors a core/v1 Toleration.
type Toleration struct {
	Key               string `json:"key,omitempty"`
	Operator          string `json:"operator,omitempty"`
	Value             string `json:"value,omitempty"`
	Effect            string `json:"effect,omitempty"`
	TolerationSeconds *int64 `json:"tolerationSeconds,omitempty"`
}

// Team is a set of namespaces entitled to accelerator types.
type Team struct {
	Name             string   `json:"name"`
	DisplayName      string   `json:"displayName"`
	Namespaces       []string `json:"namespaces"`
	AcceleratorTypes []string `json:"acceleratorTypes"`
	// Profiles are the profiles the team may use; nil: every profile of
	// its types.
	Profiles []string `json:"profiles,omitempty"`
	// Quota is devices per quota key (accelerator type, pool or MIG
	// config); nil when the team has none. A MIG config cut into several
	// profiles counts all its slices here and has them per profile in
	// SliceQuota.
	Quota map[string]int `json:"quota,omitempty"`
	// SliceQuota is, per MIG config cut into several profiles under the
	// mixed strategy, the team's slices of each profile (each its own
	// resource, nvidia.com/mig-<profile>).
	SliceQuota     map[string]map[string]int `json:"sliceQuota,omitempty"`
	Cohort         string                    `json:"cohort,omitempty"`
	BorrowingLimit map[string]int            `json:"borrowingLimit,omitempty"`
	LendingLimit   map[string]int            `json:"lendingLimit,omitempty"`
	// Preemption is what Kueue may evict for the team's workloads.
	Preemption Preemption `json:"preemption"`
	// FairShare is the team's weight in Kueue's fair sharing; nil: 1.
	FairShare *FairShare `json:"fairShare,omitempty"`
	// AdmissionFairSharing orders the team's waiting workloads by its
	// namespaces' recent use; nil: by arrival.
	AdmissionFairSharing *AdmissionFairSharing `json:"admissionFairSharing,omitempty"`
	Priority             string                `json:"priority,omitempty"`
	MonthlyBudget        float64               `json:"monthlyBudget,omitempty"`
	// Enforcement is the team's stage: its own, else the cluster's.
	Enforcement string `json:"enforcement,omitempty"`
	// NamespaceEnforcement are the stages of those of its namespaces at
	// their own.
	NamespaceEnforcement map[string]string `json:"namespaceEnforcement,omitempty"`

	path Path // teams.<name>
}

// Preemption is a team's Kueue preemption policy (ClusterQueue
// spec.preemption).
type Preemption struct {
	WithinClusterQueue  string `json:"withinClusterQueue"`
	ReclaimWithinCohort string `json:"reclaimWithinCohort"`
	BorrowWithinCohort  string `json:"borrowWithinCohort"`
}

// PriorityClass is a scheduling tier.
type PriorityClass struct {
	Value            int    `json:"value"`
	Description      string `json:"description,omitempty"`
	GlobalDefault    bool   `json:"globalDefault,omitempty"`
	PreemptionPolicy string `json:"preemptionPolicy,omitempty"`
}

// Profile returns the profile of that name, or nil.
func (m *Model) Profile(name string) *Profile {
	i, ok := slices.BinarySearchFunc(m.Profiles, name, func(p Profile, name string) int { return strings.Compare(p.Name, name) })
	if !ok {
		return nil
	}
	return &m.Profiles[i]
}

// MayUse reports whether the team may use the profile: it lists it, or,
// listing none, may use every type of it.
func (t *Team) MayUse(p *Profile) bool {
	if t.Profiles != nil {
		return slices.Contains(t.Profiles, p.Name)
	}
	for _, id := range p.AcceleratorTypes {
		if !slices.Contains(t.AcceleratorTypes, id) {
			return false
		}
	}
	return true
}
