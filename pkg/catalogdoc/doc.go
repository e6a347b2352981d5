// Package catalogdoc is the catalog document accelc publishes
// (schemaVersion accelc.io/catalog/v1): per hardware profile, its
// accelerator types with their metadata, availability, sharing and queues.
// render builds it into the accelc-hardware-catalog ConfigMap and `accelc
// catalog` prints it; estimation and serving tools read it.
//
// It is not pkg/catalog, the built-in catalog of accelerator types that
// accelc compiles against: a document is one cluster's rendering of it.
package catalogdoc

import (
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/compile"
)

// Document is the JSON document in the catalog ConfigMap, under
// key catalog.json: per profile, its accelerator types with their metadata
// and availability at render time.
type Document struct {
	// SchemaVersion names this document's shape; a change that breaks
	// readers gets a new version.
	SchemaVersion string    `json:"schemaVersion"`
	Cluster       string    `json:"cluster"`
	TypeLabel     string    `json:"typeLabel"`
	Profiles      []Profile `json:"profiles"`
	// Part and Parts number the ConfigMaps of a catalog too large for
	// one (MaxConfigMapBytes): part 1 is accelc-hardware-catalog, part N
	// accelc-hardware-catalog-N, each with some of the profiles. Both are
	// absent when one ConfigMap holds it all.
	Part  int `json:"part,omitempty"`
	Parts int `json:"parts,omitempty"`
}

// SchemaVersion is the catalog document's current schema.
const SchemaVersion = "accelc.io/catalog/v1"

// Profile is one profile of the catalog document. AcceleratorType,
// Memory and Architecture describe its first (preferred) type, for
// consumers that show one type per profile; Types lists them all.
type Profile struct {
	Name            string           `json:"name"`
	DisplayName     string           `json:"displayName"`
	Enabled         bool             `json:"enabled"`
	AcceleratorType string           `json:"acceleratorType"`
	Memory          string           `json:"memory,omitempty"`
	Architecture    string           `json:"architecture,omitempty"`
	ResourceName    string           `json:"resourceName"`
	GPU             compile.GPURange `json:"gpu"`
	Types           []Type           `json:"types"`
	// Available sums allocatable devices on Ready nodes of the types (for
	// a generic profile: of every node with the resource; for a profile
	// over shared GPUs: the slices or replicas of its pools).
	Available int `json:"available"`
	// Workers are, on a MultiKueue manager, the workers the profile's
	// jobs are dispatched to: their nodes (from the snapshots beside the
	// manager's) count in Types and Available with the manager's own.
	Workers []string `json:"workers,omitempty"`
	// Sharing says what a pod of a profile over shared GPUs gets; absent
	// for whole GPUs.
	Sharing *Sharing `json:"sharing,omitempty"`
	// Queue is where the profile's pods wait when it schedules through
	// Kueue; absent for scheduling type Node.
	Queue   *Queue `json:"queue,omitempty"`
	Summary string `json:"summary"`
}

// Queue is a profile's Kueue queue: the LocalQueue its
// HardwareProfile names, and per team that may use it, the team's
// ClusterQueue for it and the team's budget over its flavors.
type Queue struct {
	LocalQueue string      `json:"localQueue"`
	Teams      []TeamQueue `json:"teams"`
}

// TeamQueue is one team's queue for a profile.
type TeamQueue struct {
	Team         string `json:"team"`
	ClusterQueue string `json:"clusterQueue"`
	// Cohort holds the team's quota, shared by all its profiles.
	Cohort  string        `json:"cohort"`
	Flavors []FlavorQuota `json:"flavors"`
}

// FlavorQuota is a team's quota of one flavor (a type, pool or MIG
// config), in the order the queue tries them. Used and Left are there
// when the inventory counted pods: what the team's pods (of any of its
// profiles: the budget is one) hold on the flavor's nodes, and the quota
// less that (negative: the team borrows).
type FlavorQuota struct {
	Flavor string `json:"flavor"`
	Quota  int    `json:"quota"`
	Used   *int   `json:"used,omitempty"`
	Left   *int   `json:"left,omitempty"`
}

// Sharing is what one device of a profile over shared GPUs is: a
// MIG slice, or a time-sliced or MPS replica, which is not a whole GPU
// (a quota of 8 replicas may be under 3 GPUs).
type Sharing struct {
	// Mode is "mig", "time-slicing" or "mps".
	Mode       string `json:"mode"`
	MIGProfile string `json:"migProfile,omitempty"`
	// MemoryGB is one slice's memory, or for a replica the GPU's memory
	// over the replicas (shared: time-slicing does not isolate memory).
	MemoryGB int `json:"memoryGB"`
	// Replicas is the devices each GPU is advertised as (time-slicing,
	// MPS) or the slices of this profile on each GPU (MIG, first pool).
	Replicas int `json:"replicas"`
	// Pools are the node pools, in order of preference.
	Pools []string `json:"pools"`
	// Devices, GPUs and Available count the pools' devices on the
	// inventory (compile.Capacity); Pending those not yet configured.
	compile.Capacity
	// CostPerHour is one device's share of its GPU's hourly cost.
	CostPerHour *float64 `json:"costPerHour,omitempty"`
}

// Type is an accelerator class as estimation and serving tools
// need it, with its availability.
type Type struct {
	ID                  string  `json:"id"`
	DisplayName         string  `json:"displayName"`
	Vendor              string  `json:"vendor"`
	Architecture        string  `json:"architecture"`
	Memory              string  `json:"memory"`
	MemoryGB            int     `json:"memoryGB"`
	ComputeCapability   string  `json:"computeCapability,omitempty"`
	FP16TFLOPS          float64 `json:"fp16TFLOPS,omitempty"`
	BF16TFLOPS          float64 `json:"bf16TFLOPS,omitempty"`
	MemoryBandwidthGBps float64 `json:"memoryBandwidthGBps,omitempty"`
	// CostPerHour is one device's hourly cost, when the admin set one.
	CostPerHour *float64 `json:"costPerHour,omitempty"`
	// Performance is what models measured on the type, by model name.
	Performance map[string]catalog.Performance `json:"performance,omitempty"`
	Nodes       int                            `json:"nodes"`
	GPUs        int                            `json:"gpus"`
	// Available is allocatable on Ready nodes, less what pods use when
	// the inventory counted them; for a profile over shared GPUs, the
	// slices or replicas of the profile's pools of this type.
	Available int `json:"available"`
	// Unlabelled counts the devices, left out of Available, on nodes of
	// the type that the profile's pods cannot reach until the nodes carry
	// the type label: no NodeFeatureRule labels the type, and they are
	// neither pinned nor labelled by their pool. Labelling says why and
	// what gives them the label, as vet does. Both absent when none is.
	Unlabelled int    `json:"unlabelled,omitempty"`
	Labelling  string `json:"labelling,omitempty"`
	// Device is what one device of a profile over shared GPUs is on this
	// type; absent for whole GPUs.
	Device *Device `json:"device,omitempty"`
	// Autoscaling says how the type's capacity grows: the Karpenter
	// NodePools that launch it; absent where none does.
	Autoscaling *Growth `json:"autoscaling,omitempty"`
}

// Growth is how a type's capacity grows.
type Growth struct {
	NodePools []string `json:"nodePools"`
	// Limit is the most devices the pools may add together; absent when
	// one of them has no limit.
	Limit         *int     `json:"limit,omitempty"`
	CapacityTypes []string `json:"capacityTypes"`
}

// Device is one MIG slice or one time-sliced or MPS replica.
type Device struct {
	// Name says what a pod gets: "3g.40gb slice", "1/3 of a GPU
	// (time-sliced)".
	Name string `json:"name"`
	// MemoryGB is the slice's memory, or the GPU's over its replicas
	// (time-slicing does not isolate memory: a share, not a limit).
	MemoryGB int `json:"memoryGB"`
	// ComputeShare is the device's share of its GPU's compute: a MIG
	// slice's compute slices over the GPU's (3/7 for a 3g.40gb of an
	// A100); a replica's 1/replicas, what it gets when every replica is
	// busy. Estimates scale the GPU's throughput by it.
	ComputeShare float64 `json:"computeShare"`
	// CostPerHour is the device's share of its GPU's hourly cost: by
	// compute slices for MIG, by replicas otherwise.
	CostPerHour *float64 `json:"costPerHour,omitempty"`
}
