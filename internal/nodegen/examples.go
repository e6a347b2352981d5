package nodegen

import "fmt"

// Examples returns the node inventories of the example clusters under
// examples/clusters, by cluster directory name.
func Examples() map[string][]Node {
	return map[string][]Node{
		// The seed's use case 2: 16 A100, 4 H200 and 4 V100 nodes of 8
		// GPUs each; two GPU nodes without GFD labels; three CPU nodes.
		"hetero-prod": HeteroProd(1),
		// Seed 004's pools: A100 80GB time-sliced ×3, H100 time-sliced
		// ×2, and A100 80GB nodes cut into 3g.40gb, 2g.20gb and 1g.10gb
		// MIG slices (single strategy: one profile per node).
		"gpu-pools": Nodes(
			Group{Prefix: "a100-ts-", Start: 1, Count: 2, GPU: A100x80, GPUs: 8, Replicas: 3, CPU: 96, MemoryGi: 1152,
				InstanceType: "p4de.24xlarge", Zone: "us-west-2a"},
			Group{Prefix: "h100-ts-", Start: 1, Count: 2, GPU: H100, GPUs: 8, Replicas: 2, CPU: 192, MemoryGi: 2048,
				InstanceType: "p5.48xlarge", Zone: "us-west-2b"},
			Group{Prefix: "a100-mig3g-", Start: 1, Count: 1, GPU: A100x80, GPUs: 8, MIGProfile: "3g.40gb", MIGDevices: 16,
				MIGMemoryMiB: 40192, CPU: 96, MemoryGi: 1152, InstanceType: "p4de.24xlarge", Zone: "us-west-2a"},
			Group{Prefix: "a100-mig2g-", Start: 1, Count: 1, GPU: A100x80, GPUs: 8, MIGProfile: "2g.20gb", MIGDevices: 24,
				MIGMemoryMiB: 19968, CPU: 96, MemoryGi: 1152, InstanceType: "p4de.24xlarge", Zone: "us-west-2a"},
			Group{Prefix: "a100-mig1g-", Start: 1, Count: 1, GPU: A100x80, GPUs: 8, MIGProfile: "1g.10gb", MIGDevices: 56,
				MIGMemoryMiB: 9728, CPU: 96, MemoryGi: 1152, InstanceType: "p4de.24xlarge", Zone: "us-west-2a"},
			Group{Prefix: "infra-", Start: 1, Count: 1, CPU: 16, MemoryGi: 64, InstanceType: "m6i.4xlarge", Zone: "us-west-2a"},
		),
		"small-lab": Nodes(
			Group{Prefix: "lab-l40s-", Start: 1, Count: 2, GPU: L40S, GPUs: 4, CPU: 48, MemoryGi: 384,
				InstanceType: "PowerEdge-R760xa", Zone: "lab-a"},
			Group{Prefix: "lab-t4-", Start: 1, Count: 1, GPU: T4, GPUs: 1, Replicas: 4, CPU: 16, MemoryGi: 128,
				InstanceType: "PowerEdge-R740", Zone: "lab-a"},
			Group{Prefix: "lab-a100-", Start: 1, Count: 1, GPU: A100x40, GPUs: 1, MIGProfile: "1g.5gb", MIGDevices: 7,
				MIGMemoryMiB: 4864, CPU: 32, MemoryGi: 256, InstanceType: "PowerEdge-R750xa", Zone: "lab-a"},
			Group{Prefix: "lab-cpu-", Start: 1, Count: 1, CPU: 16, MemoryGi: 64,
				InstanceType: "PowerEdge-R650", Zone: "lab-a"},
		),
	}
}

// HeteroProd returns the hetero-prod example's nodes, each group k times
// over (k = 1: the example's 29 nodes, the seed's use case 2: 16 A100, 4
// H200 and 4 V100 nodes of 8 GPUs each, two GPU nodes without GFD labels,
// three CPU nodes), numbered on: the mix of the example at k× its size,
// for the cluster benchmark.
func HeteroProd(k int) []Node {
	return Nodes(
		Group{Prefix: "worker-node-", Start: 1, Count: 16 * k, GPU: A100x80, GPUs: 8, CPU: 96, MemoryGi: 512,
			InstanceType: "p4de.24xlarge", Zone: "us-east-1a", Cordoned: []int{5}, NotReady: []int{9}},
		Group{Prefix: "worker-node-", Start: 16*k + 1, Count: 4 * k, GPU: H200, GPUs: 8, CPU: 192, MemoryGi: 1024,
			InstanceType: "p5e.48xlarge", Zone: "us-east-1b"},
		Group{Prefix: "worker-node-", Start: 20*k + 1, Count: 4 * k, GPU: V100x16, GPUs: 8, CPU: 64, MemoryGi: 256,
			InstanceType: "p3.16xlarge", Zone: "us-east-1a"},
		Group{Prefix: "gpu-unlabelled-", Start: 1, Count: 2 * k, GPU: NoLabels, GPUs: 4, CPU: 64, MemoryGi: 512,
			InstanceType: "PowerEdge-XE8545", Zone: "us-east-1c"},
		Group{Prefix: "infra-", Start: 1, Count: 3 * k, CPU: 16, MemoryGi: 64,
			InstanceType: "m6i.4xlarge", Zone: "us-east-1a"},
	)
}

// Generated returns n nodes in the proportions of a large mixed cluster:
// 40% A100 80GB, 15% H100, 10% H200, 10% L40S, 10% V100, 5% time-sliced
// T4, 5% MIG A100 40GB, 2% without labels, the rest CPU-only. Every 50th
// GPU node is cordoned.
func Generated(n int) []Node {
	type share struct {
		g   Group
		pct int
	}
	shares := []share{
		{Group{Prefix: "a100-", GPU: A100x80, GPUs: 8, CPU: 96, MemoryGi: 1152, InstanceType: "p4de.24xlarge", Zone: "us-east-1a"}, 40},
		{Group{Prefix: "h100-", GPU: H100, GPUs: 8, CPU: 192, MemoryGi: 2048, InstanceType: "p5.48xlarge", Zone: "us-east-1b"}, 15},
		{Group{Prefix: "h200-", GPU: H200, GPUs: 8, CPU: 192, MemoryGi: 2048, InstanceType: "p5e.48xlarge", Zone: "us-east-1b"}, 10},
		{Group{Prefix: "l40s-", GPU: L40S, GPUs: 4, CPU: 48, MemoryGi: 384, InstanceType: "g6e.12xlarge", Zone: "us-east-1c"}, 10},
		{Group{Prefix: "v100-", GPU: V100x16, GPUs: 8, CPU: 64, MemoryGi: 488, InstanceType: "p3.16xlarge", Zone: "us-east-1a"}, 10},
		{Group{Prefix: "t4-", GPU: T4, GPUs: 1, Replicas: 4, CPU: 4, MemoryGi: 16, InstanceType: "g4dn.xlarge", Zone: "us-east-1a"}, 5},
		{Group{Prefix: "mig-", GPU: A100x40, GPUs: 8, MIGProfile: "1g.5gb", MIGDevices: 56, MIGMemoryMiB: 4864, CPU: 96, MemoryGi: 1152, InstanceType: "p4d.24xlarge", Zone: "us-east-1a"}, 5},
		{Group{Prefix: "unlabelled-", GPU: NoLabels, GPUs: 4, CPU: 64, MemoryGi: 512, InstanceType: "custom", Zone: "us-east-1c"}, 2},
		{Group{Prefix: "cpu-", CPU: 16, MemoryGi: 64, InstanceType: "m6i.4xlarge", Zone: "us-east-1a"}, 3},
	}
	out := make([]Node, 0, n)
	for i := 0; len(out) < n; i++ {
		s := shares[i%len(shares)]
		// Weighted round robin: a share appears pct times per 100 slots.
		for k := 0; k < s.pct && len(out) < n; k++ {
			g := s.g
			idx := len(out)
			g.Prefix = fmt.Sprintf("%s%05d-", g.Prefix, idx)
			g.Start, g.Count = 0, 1
			if g.GPUs > 0 && idx%50 == 0 {
				g.Cordoned = []int{0}
			}
			out = append(out, g.node(0))
		}
	}
	return out
}
