package inventory

// GPU sharing run by a cloud's or a scheduler's own device plugin:
// reading a node's GPUs from the shares of memory and compute it offers.

import (
	"fmt"
	"slices"
	"strings"
)

// GPU sharing that a cloud's or a scheduler's own device plugin runs
// offers a node's NVIDIA GPUs under resources of its own, shares of their
// memory and compute, not nvidia.com/gpu:
//
//   - Alibaba Cloud's GPU sharing (the open-source gpushare device plugin
//     and ACK's cGPU) offers aliyun.com/gpu-mem, GiB of GPU memory, and
//     counts the GPUs in aliyun.com/gpu-count; ACK labels the node
//     ack.node.gpu.schedule=share or cgpu, gpushare's own gpushare=true
//     (AliyunContainerService/gpushare-device-plugin, ResourceName and
//     CountName; the scheduler framework's GPUShareNodeLabels);
//   - Tencent Cloud's qGPU offers tke.cloud.tencent.com/qgpu-core, 100 a
//     GPU, and qgpu-memory in GiB (TKE's qGPU docs: "qgpu-core: 100,
//     qgpu-memory: 48" on a one-GPU node);
//   - Volcengine's mGPU offers vke.volcengine.com/mgpu-core, 100 a GPU,
//     and mgpu-memory in MiB (VKE's mgpu-share: "gpuCount is
//     mgpu-core / 100");
//   - Volcano's GPU sharing offers volcano.sh/gpu-memory in MiB beside
//     volcano.sh/gpu-number, the GPUs (Volcano's GPU sharing user guide);
//     its vGPU device plugin (HAMi's, for Volcano) offers
//     volcano.sh/vgpu-number, each GPU several times, with vgpu-memory and
//     vgpu-cores, 100 a GPU.
//
// Counted as devices, a node's GiB would be GPUs; left out, a node of
// shares only would not be listed at all.
type gpuShare struct {
	by string
	// gpus is the resource that counts the GPUs; cores, the one whose
	// count is 100 a GPU; shares, those a pod asks a share of a GPU by.
	gpus, cores string
	shares      []string
}

var gpuShares = []gpuShare{
	{by: "Alibaba Cloud's GPU sharing (gpushare, cGPU)", gpus: "aliyun.com/gpu-count", shares: []string{"aliyun.com/gpu-mem"}},
	{by: "Tencent Cloud's qGPU", cores: "tke.cloud.tencent.com/qgpu-core", shares: []string{"tke.cloud.tencent.com/qgpu-memory", "tke.cloud.tencent.com/qgpu-core"}},
	{by: "Volcengine's mGPU", cores: "vke.volcengine.com/mgpu-core", shares: []string{"vke.volcengine.com/mgpu-memory", "vke.volcengine.com/mgpu-core"}},
	{by: "Volcano's GPU sharing", gpus: "volcano.sh/gpu-number", shares: []string{"volcano.sh/gpu-memory"}},
	{by: "Volcano's vGPU (HAMi)", cores: "volcano.sh/vgpu-cores", shares: []string{"volcano.sh/vgpu-number", "volcano.sh/vgpu-memory", "volcano.sh/vgpu-cores"}},
}

// gpuShareOf is the sharing scheme a resource is one of, or nil.
func gpuShareOf(name string) *gpuShare {
	for i := range gpuShares {
		s := &gpuShares[i]
		if name == s.gpus || name == s.cores || slices.Contains(s.shares, name) {
			return s
		}
	}
	return nil
}

// gpusOf is how many GPUs the scheme's resources in list count: its GPU
// count, or its cores over 100; ok is false when neither says.
func (s *gpuShare) gpusOf(list map[string]string) (int, bool) {
	if s.gpus != "" {
		if q, ok := quantity(list[s.gpus]); ok {
			return q, true
		}
	}
	if s.cores != "" {
		if q, ok := quantity(list[s.cores]); ok && q%100 == 0 {
			return q / 100, true
		}
	}
	return 0, false
}

// sharing is what the node offers as shares: each share resource with
// some capacity, "name qty", sorted; none when the GPUs are offered whole
// only (volcano.sh/gpu-memory 0).
func (s *gpuShare) sharing(capacity map[string]string) []string {
	var out []string
	for _, k := range s.shares {
		if q, ok := quantity(capacity[k]); ok && q > 0 {
			out = append(out, fmt.Sprintf("%s %d", k, q))
		}
	}
	slices.Sort(out)
	return out
}

// readGPUShare counts the GPUs a sharing scheme's resources count, where
// no nvidia.com/gpu does, and notes the scheme: its resources are not
// devices.
func (r *resources) readGPUShare(s *gpuShare, capacity, allocatable map[string]string) {
	r.gpuShare = s
	r.gpuShares = s.sharing(capacity)
	if r.vendor == "" {
		r.vendor = "nvidia"
	}
	if r.resource == "" {
		r.resource = s.shares[0]
	}
	if q, _ := quantity(capacity[resNVIDIA]); q > 0 {
		// The GPUs are counted whole; the shares are offered beside.
		return
	}
	if n, ok := s.gpusOf(capacity); ok {
		r.capacity += n
		r.whole += n
		r.resourceQty = max(r.resourceQty, n)
	}
	if n, ok := s.gpusOf(allocatable); ok && r.allocatable >= 0 {
		r.allocatable += n
	}
}

// readGPUShare reads a node whose GPUs a sharing scheme offers as shares.
func (n *Node) readGPUShare(labels map[string]string, res resources) {
	shares := res.gpuShares
	if len(shares) == 0 {
		return
	}
	n.Sharing = TimeSliced
	note := fmt.Sprintf("time-sliced by %s: the node offers %s, shares of its GPUs a pod asks some of", res.gpuShare.by, strings.Join(shares, ", "))
	if n.Count > 0 {
		note += fmt.Sprintf(", of %d GPUs", n.Count)
	} else {
		note += "; how many GPUs it shares is not said"
	}
	for _, k := range []string{"ack.node.gpu.schedule", "gpushare"} {
		if v := strings.TrimSpace(labels[k]); v != "" {
			note += fmt.Sprintf(" (%s=%s)", k, v)
		}
	}
	n.Notes = append(n.Notes, note)
}
