package inventory

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/accelc/accelc/pkg/catalog"
)

// This file reads how a node's accelerators are shared where GPU Feature
// Discovery does not say: GKE's own GPU sharing and MIG, which GKE's
// device plugin runs and its node labels state; AMD GPUs cut into compute
// partitions; and NVIDIA's device plugin offering only the shared resource
// its renameByDefault option names.

// GKE labels a GPU node pool's nodes with how its GPUs are shared
// (cloud.google.com/kubernetes-engine/docs/concepts/timesharing-gpus,
// how-to/gpus-multi): time-sharing or mps with the most containers that
// share a GPU, and the MIG partition each GPU is cut into. Its device
// plugin offers every replica or partition as one nvidia.com/gpu.
const (
	lblGKESharing   = "cloud.google.com/gke-gpu-sharing-strategy"
	lblGKEClients   = "cloud.google.com/gke-max-shared-clients-per-gpu"
	lblGKEPartition = "cloud.google.com/gke-gpu-partition-size"
)

// AMD's device plugin offers partitioned GPUs under its "mixed" naming
// strategy as amd.com/<compute>_<memory> (amd.com/cpx_nps4: 64 for eight
// GPUs in CPX mode), under "single" as amd.com/gpu with one device per
// partition; the ROCm node labeller writes the mode the GPUs are in as
// amd.com/compute-memory-partition (ROCm/k8s-device-plugin,
// docs/user-guide/configuration.md "Resource Naming Strategy").
const lblAMDPartition = "amd.com/compute-memory-partition"

var amdPartitionName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(spx|dpx|tpx|qpx|cpx)_nps[1248]$`)
})

// amdPartitionResource is the partition mode an AMD partition resource
// names ("cpx_nps4" for amd.com/cpx_nps4), or "".
func amdPartitionResource(name string) string {
	mode, ok := strings.CutPrefix(name, "amd.com/")
	if !ok || !amdPartitionName().MatchString(mode) {
		return ""
	}
	return mode
}

// readSharing reads the sharing that labels other than GFD's and the
// capacity state, on a node the GFD and MIG signals leave exclusive.
func (n *Node) readSharing(labels map[string]string, res resources, class *catalog.Class) {
	switch {
	case len(res.partitions) > 0:
		n.readPartitions(res.partitions, res.whole, class, "capacity "+migList(res.partitions))
	case n.Vendor == "amd" && amdPartitionName().MatchString(strings.ToLower(strings.TrimSpace(labels[lblAMDPartition]))) && res.whole > 0:
		mode := strings.ToLower(strings.TrimSpace(labels[lblAMDPartition]))
		n.readPartitions(map[string]int{mode: res.whole}, 0, class, fmt.Sprintf("%s=%s, each partition offered as %s", lblAMDPartition, mode, n.Resource))
	case strings.TrimSpace(labels[lblGKEPartition]) != "" || strings.TrimSpace(labels[lblGKESharing]) != "":
		n.readGKE(labels, res)
	case res.resource == resIntelI915 || res.resource == resIntelXe:
		n.readIntelShared(labels, res)
	case res.gcuShares > 0 && res.capacity > 0:
		n.Sharing = TimeSliced
		n.Replicas = res.gcuShares / res.capacity
		n.Notes = append(n.Notes, fmt.Sprintf("shared by Enflame's gcushare: %s %d GCUs offered as up to %d shares (%s) or DRS instances (%s)",
			resEnflameCount, res.capacity, res.gcuShares, resEnflameShared, resEnflameDRS))
	case res.gpuShare != nil:
		n.readGPUShare(labels, res)
	case len(res.shares) > 0 || (res.cores != "" && res.capacity == 0):
		n.readVendorShares(res)
	case res.shared > 0 && res.shared == res.capacity:
		n.Sharing = TimeSliced
		n.Count = 0
		n.Notes = append(n.Notes, "renameByDefault: GPUs advertised only as nvidia.com/gpu.shared, shared replicas (time-slicing or MPS); how many GPUs they share is not known without GPU Feature Discovery's nvidia.com/gpu.count")
	}
}

// readPartitions counts the GPUs that partitions make: whole GPUs beside
// them, and per mode the partitions over how many one GPU makes (SPX 1,
// DPX 2, QPX 4, CPX one per XCD).
func (n *Node) readPartitions(parts map[string]int, whole int, class *catalog.Class, why string) {
	n.Partitions = parts
	gpus, shared := whole, false
	var uncounted []string
	for _, mode := range slices.Sorted(maps.Keys(parts)) {
		per := partitionsPerGPU(mode, class)
		switch {
		case per == 0:
			uncounted = append(uncounted, mode)
		default:
			gpus += (parts[mode] + per - 1) / per
		}
		if per != 1 {
			shared = true
		}
	}
	n.Count = gpus
	if shared {
		n.Sharing = Partitioned
	}
	note := fmt.Sprintf("AMD GPU partitions from %s: %d GPUs", why, gpus)
	if len(uncounted) > 0 {
		note += fmt.Sprintf("; the %s partitions' GPUs are not counted: the type does not say how many partitions make a GPU", strings.Join(uncounted, ", "))
	}
	n.Notes = append(n.Notes, note)
}

// readGKE reads GKE's sharing labels. MIG partitions are GKE's MIG single:
// every device is a partition, time-shared on top when the pool also
// shares.
func (n *Node) readGKE(labels map[string]string, res resources) {
	strategy := strings.ToLower(strings.TrimSpace(labels[lblGKESharing]))
	clients, _ := atoi(labels[lblGKEClients])
	partition := strings.TrimSpace(labels[lblGKEPartition])
	devices := res.capacity
	if strategy != "" && clients > 1 && devices%clients == 0 {
		devices /= clients
	}
	if partition != "" {
		n.Vendor = "nvidia"
		n.Sharing = MIGSingle
		n.Count = devices
		if devices > 0 {
			n.MIGDevices = map[string]int{partition: devices}
		}
		note := fmt.Sprintf("MIG single from %s=%s: GKE's device plugin offers each partition as nvidia.com/gpu", lblGKEPartition, partition)
		if strategy != "" && clients > 1 {
			n.Replicas = clients
			note += fmt.Sprintf(", each shared by up to %d containers (%s=%s)", clients, lblGKESharing, strategy)
		}
		n.Notes = append(n.Notes, note)
		return
	}
	switch strategy {
	case "time-sharing":
		n.Sharing = TimeSliced
	case "mps":
		n.Sharing = MPS
	default:
		n.Notes = append(n.Notes, fmt.Sprintf("%s=%s is not a strategy GKE documents (time-sharing, mps): counted as whole GPUs", lblGKESharing, labels[lblGKESharing]))
		return
	}
	note := fmt.Sprintf("%s from %s=%s", n.Sharing, lblGKESharing, strategy)
	if clients > 1 {
		n.Replicas = clients
		note += fmt.Sprintf(", up to %d containers a GPU (%s)", clients, lblGKEClients)
		if res.capacity > 0 && res.capacity%clients == 0 {
			n.Count = res.capacity / clients
		}
	}
	n.Notes = append(n.Notes, note)
}

// Intel's GPU plugin offers each GPU -shared-dev-num times (its default 1)
// as gpu.intel.com/i915 or gpu.intel.com/xe, for that many containers to
// share it (intel-device-plugins-for-kubernetes cmd/gpu_plugin/README.md,
// "Modes and Configuration Options"); the GPUs themselves are counted by
// its NFD rules' gpu.intel.com/device.count and
// gpu.intel.com/device-id.<class>-<id>.count, and by its labeller's
// gpu.intel.com/millicores, 1000 a GPU (cmd/gpu_plugin/labels.md).
const (
	lblIntelMillicores = "gpu.intel.com/millicores"
	intelCountSuffix   = ".count"
)

// intelGPUs is how many GPUs the node's Intel labels count, and the label
// that says so; 0 when none does.
func intelGPUs(labels map[string]string) (int, string) {
	if n, ok := atoi(labels[lblIntelCount]); ok && n > 0 {
		return n, lblIntelCount
	}
	sum, from := 0, ""
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if strings.HasPrefix(k, intelDevicePfx) && strings.HasSuffix(k, intelCountSuffix) {
			if n, ok := atoi(labels[k]); ok && n > 0 {
				sum += n
				if from == "" {
					from = k
				}
			}
		}
	}
	if sum > 0 {
		return sum, from
	}
	if m, ok := atoi(labels[lblIntelMillicores]); ok && m >= 1000 && m%1000 == 0 {
		return m / 1000, lblIntelMillicores
	}
	return 0, ""
}

// readIntelShared reads an Intel node whose plugin offers each GPU to
// several containers: more of its resource than its labels count GPUs.
func (n *Node) readIntelShared(labels map[string]string, res resources) {
	gpus, from := intelGPUs(labels)
	if gpus == 0 || res.resourceQty <= gpus || res.resourceQty%gpus != 0 {
		return
	}
	n.Sharing = TimeSliced
	n.Replicas = res.resourceQty / gpus
	n.Count = gpus
	n.Notes = append(n.Notes, fmt.Sprintf("shared by Intel's GPU plugin: %s %d over %d GPUs (%s), each offered to up to %d containers (-shared-dev-num)",
		res.resource, res.resourceQty, gpus, from, n.Replicas))
}
