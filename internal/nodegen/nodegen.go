// Package nodegen writes realistic Kubernetes node lists, label for label
// what GPU Feature Discovery, NFD and the kubelet put on real nodes, for
// the example clusters and for benchmarks. Output is deterministic.
package nodegen

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// GPU is the hardware GFD would report for one model.
type GPU struct {
	Product   string // nvidia.com/gpu.product, before sharing suffixes
	MemoryMiB int
	Compute   string // "8.0"
	Family    string // "ampere"
}

// Common GPUs, with the values their drivers report.
var (
	H200     = GPU{"NVIDIA-H200", 143771, "9.0", "hopper"}
	H100     = GPU{"NVIDIA-H100-80GB-HBM3", 81559, "9.0", "hopper"}
	A100x80  = GPU{"NVIDIA-A100-SXM4-80GB", 81920, "8.0", "ampere"}
	A100x40  = GPU{"NVIDIA-A100-SXM4-40GB", 40960, "8.0", "ampere"}
	V100x16  = GPU{"Tesla-V100-SXM2-16GB", 16160, "7.0", "volta"}
	L40S     = GPU{"NVIDIA-L40S", 46068, "8.9", "ada-lovelace"}
	T4       = GPU{"Tesla-T4", 15360, "7.5", "turing"}
	NoLabels = GPU{}
)

// Group is a set of identical nodes.
type Group struct {
	Prefix       string // node names are Prefix + two-digit index
	Start, Count int
	GPU          GPU
	GPUs         int    // physical GPUs per node
	Replicas     int    // time-slicing replicas (0 or 1: none)
	MIGProfile   string // MIG single profile, e.g. "1g.10gb"
	MIGDevices   int    // MIG devices per node under MIG single
	MIGMemoryMiB int
	CPU          int
	MemoryGi     int
	InstanceType string
	Zone         string
	// Cordoned and NotReady list indexes (Start-based) of nodes in that
	// state.
	Cordoned, NotReady []int
}

// Node is the subset of a core/v1 Node that a snapshot holds.
type Node struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       Spec     `json:"spec"`
	Status     Status   `json:"status"`
}

type Metadata struct {
	Name              string            `json:"name"`
	CreationTimestamp string            `json:"creationTimestamp"`
	Labels            map[string]string `json:"labels"`
}

type Spec struct {
	Unschedulable bool    `json:"unschedulable,omitempty"`
	Taints        []Taint `json:"taints,omitempty"`
}

type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

type Status struct {
	Capacity    map[string]string `json:"capacity"`
	Allocatable map[string]string `json:"allocatable"`
	Conditions  []Condition       `json:"conditions"`
}

type Condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// Nodes expands groups into nodes, in group order.
func Nodes(groups ...Group) []Node {
	var out []Node
	for _, g := range groups {
		for i := g.Start; i < g.Start+g.Count; i++ {
			out = append(out, g.node(i))
		}
	}
	return out
}

// List marshals nodes as `kubectl get nodes -o json` prints them.
func List(nodes []Node) []byte {
	b, err := json.MarshalIndent(map[string]any{
		"apiVersion": "v1",
		"kind":       "List",
		"metadata":   map[string]string{"resourceVersion": ""},
		"items":      nodes,
	}, "", "    ")
	if err != nil {
		panic(err) // only plain data above
	}
	return append(b, '\n')
}

func (g Group) node(i int) Node {
	name := fmt.Sprintf("%s%02d", g.Prefix, i)
	labels := map[string]string{
		"beta.kubernetes.io/arch":          "amd64",
		"beta.kubernetes.io/os":            "linux",
		"kubernetes.io/arch":               "amd64",
		"kubernetes.io/hostname":           name,
		"kubernetes.io/os":                 "linux",
		"node-role.kubernetes.io/worker":   "",
		"node.kubernetes.io/instance-type": g.InstanceType,
		"topology.kubernetes.io/zone":      g.Zone,
		"topology.kubernetes.io/region":    strings.TrimRight(strings.TrimRight(g.Zone, "abcdef"), "-"),
	}
	capacity := map[string]string{
		"cpu":               strconv.Itoa(g.CPU),
		"memory":            strconv.Itoa(g.MemoryGi*1024*1024) + "Ki",
		"pods":              "250",
		"ephemeral-storage": "937416204Ki",
	}
	allocatable := map[string]string{
		"cpu":               strconv.Itoa(g.CPU*1000-500) + "m",
		"memory":            strconv.Itoa(g.MemoryGi*1024*1024-4*1024*1024) + "Ki",
		"pods":              "250",
		"ephemeral-storage": "863909703246",
	}
	var taints []Taint
	if g.GPUs > 0 {
		devices := g.GPUs
		taints = append(taints, Taint{Key: "nvidia.com/gpu", Effect: "NoSchedule"})
		labels["feature.node.kubernetes.io/pci-10de.present"] = "true"
		if g.GPU != NoLabels {
			g.gfdLabels(labels)
			switch {
			case g.MIGProfile != "":
				devices = g.MIGDevices
			case g.Replicas > 1:
				devices = g.GPUs * g.Replicas
			}
		}
		capacity["nvidia.com/gpu"] = strconv.Itoa(devices)
		allocatable["nvidia.com/gpu"] = strconv.Itoa(devices)
	}
	ready := Condition{Type: "Ready", Status: "True", Reason: "KubeletReady"}
	if slices.Contains(g.NotReady, i) {
		ready = Condition{Type: "Ready", Status: "Unknown", Reason: "NodeStatusUnknown"}
	}
	return Node{
		APIVersion: "v1",
		Kind:       "Node",
		Metadata:   Metadata{Name: name, CreationTimestamp: "2026-09-01T08:00:00Z", Labels: labels},
		Spec:       Spec{Unschedulable: slices.Contains(g.Cordoned, i), Taints: taints},
		Status: Status{
			Capacity:    capacity,
			Allocatable: allocatable,
			Conditions: []Condition{
				{Type: "MemoryPressure", Status: "False", Reason: "KubeletHasSufficientMemory"},
				{Type: "DiskPressure", Status: "False", Reason: "KubeletHasNoDiskPressure"},
				{Type: "PIDPressure", Status: "False", Reason: "KubeletHasSufficientPID"},
				ready,
			},
		},
	}
}

func (g Group) gfdLabels(l map[string]string) {
	major, minor, _ := strings.Cut(g.GPU.Compute, ".")
	product, count, memory := g.GPU.Product, g.GPUs, g.GPU.MemoryMiB
	replicas, strategy := "1", "none"
	switch {
	case g.MIGProfile != "":
		product += "-MIG-" + g.MIGProfile
		count, memory, replicas = g.MIGDevices, g.MIGMemoryMiB, "0"
		l["nvidia.com/mig.strategy"] = "single"
		l["nvidia.com/mig.config"] = "all-" + g.MIGProfile
		l["nvidia.com/mig.config.state"] = "success"
	case g.Replicas > 1:
		product += "-SHARED"
		replicas, strategy = strconv.Itoa(g.Replicas), "time-slicing"
		l["nvidia.com/device-plugin.config"] = "time-sliced"
	}
	for k, v := range map[string]string{
		"nvidia.com/cuda.driver-version.full":         "580.95.05",
		"nvidia.com/cuda.driver-version.major":        "580",
		"nvidia.com/cuda.driver-version.minor":        "95",
		"nvidia.com/cuda.driver-version.revision":     "05",
		"nvidia.com/cuda.runtime-version.full":        "13.0",
		"nvidia.com/cuda.runtime-version.major":       "13",
		"nvidia.com/cuda.runtime-version.minor":       "0",
		"nvidia.com/gfd.timestamp":                    "1756713600",
		"nvidia.com/gpu.compute.major":                major,
		"nvidia.com/gpu.compute.minor":                minor,
		"nvidia.com/gpu.count":                        strconv.Itoa(count),
		"nvidia.com/gpu.deploy.container-toolkit":     "true",
		"nvidia.com/gpu.deploy.dcgm":                  "true",
		"nvidia.com/gpu.deploy.dcgm-exporter":         "true",
		"nvidia.com/gpu.deploy.device-plugin":         "true",
		"nvidia.com/gpu.deploy.driver":                "true",
		"nvidia.com/gpu.deploy.gpu-feature-discovery": "true",
		"nvidia.com/gpu.deploy.node-status-exporter":  "true",
		"nvidia.com/gpu.deploy.operator-validator":    "true",
		"nvidia.com/gpu.family":                       g.GPU.Family,
		"nvidia.com/gpu.machine":                      g.InstanceType,
		"nvidia.com/gpu.memory":                       strconv.Itoa(memory),
		"nvidia.com/gpu.mode":                         "compute",
		"nvidia.com/gpu.present":                      "true",
		"nvidia.com/gpu.product":                      product,
		"nvidia.com/gpu.replicas":                     replicas,
		"nvidia.com/gpu.sharing-strategy":             strategy,
		"nvidia.com/mig.capable":                      strconv.FormatBool(g.GPU.Compute == "8.0" || g.GPU.Compute == "9.0"),
		"nvidia.com/mps.capable":                      "false",
	} {
		l[k] = v
	}
}
