package audit_test

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/internal/nodegen"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/audit"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/workloads"
)

// BenchmarkAudit audits hetero-prod's tree against a cluster of its mix
// at ACCELC_BENCH_NODES nodes (default 500) running ACCELC_BENCH_PODS
// pods (default 5,000) in Deployments of ten replicas, each with its
// ReplicaSet, spread over the teams' namespaces, a namespace of no team
// and a generic one; a fifth of them without a profile. make bench runs it
// at 5,000 nodes and 50,000 pods.
func BenchmarkAudit(b *testing.B) {
	nodesN, podsN := envInt(b, "ACCELC_BENCH_NODES", 500), envInt(b, "ACCELC_BENCH_PODS", 5000)
	res, err := accelc.Cluster(b.Context(), "../../examples/clusters/hetero-prod", accelc.Options{Stages: accelc.CheckConfig | accelc.RenderTree})
	require.NoError(b, err)
	m := res.Model
	snap, err := inventory.DecodeSnapshot(nodegen.List(nodegen.HeteroProd(max(nodesN/29, 1))))
	require.NoError(b, err)
	inv := snap.Classify(m.Catalog, inventory.Options{Pins: m.Pins, TypeLabel: m.Cluster.TypeLabel()})
	res.Inventory = inv
	tree, err := res.EnforcedTree()
	require.NoError(b, err)
	byType := map[string][]string{}
	for _, n := range inv.Nodes {
		byType[n.AcceleratorType] = append(byType[n.AcceleratorType], n.Name)
	}
	type place struct{ ns, profile, typ string }
	places := []place{
		{"ml-research", "premium-gpu", "nvidia-h200-141gb"},
		{"ml-research", "large-gpu", "nvidia-a100-80gb"},
		{"serving-prod", "large-memory", "nvidia-a100-80gb"},
		{"ds-notebooks", "standard-gpu", "nvidia-v100-16gb"},
		{"legacy-batch", "", "nvidia-a100-80gb"},
		{"default", "", "nvidia-v100-16gb"},
	}
	set := &workloads.Set{}
	for d := 0; d < podsN/10; d++ {
		p := places[d%len(places)]
		name := fmt.Sprintf("app-%d", d)
		tmpl := map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": name}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "main", "image": "registry.example/app:1",
				"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": "1"}}}}},
		}
		if p.profile != "" {
			tmpl["metadata"].(map[string]any)["annotations"] = map[string]any{"opendatahub.io/hardware-profile-name": p.profile}
		}
		owner := func(kind, name string) []any {
			return []any{map[string]any{"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": "u-" + name, "controller": true}}
		}
		set.Objects = append(set.Objects,
			&unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": name, "namespace": p.ns}, "spec": map[string]any{"replicas": int64(10), "template": tmpl}}},
			&unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet",
				"metadata": map[string]any{"name": name + "-rs", "namespace": p.ns, "ownerReferences": owner("Deployment", name)},
				"spec":     map[string]any{"replicas": int64(10), "template": tmpl}}})
		nodes := byType[p.typ]
		for r := 0; r < 10; r++ {
			pod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": fmt.Sprintf("%s-rs-%d", name, r), "namespace": p.ns,
					"labels": tmpl["metadata"].(map[string]any)["labels"], "ownerReferences": owner("ReplicaSet", name+"-rs")},
				"spec":   map[string]any{"nodeName": nodes[(d*10+r)%len(nodes)], "containers": tmpl["spec"].(map[string]any)["containers"]},
				"status": map[string]any{"phase": "Running"}}}
			if a, ok := tmpl["metadata"].(map[string]any)["annotations"]; ok {
				pod.Object["metadata"].(map[string]any)["annotations"] = a
			}
			set.Objects = append(set.Objects, pod)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	var r *audit.Report
	for b.Loop() {
		r, err = audit.Run(b.Context(), audit.Input{Model: m, Inventory: inv, Tree: tree, Workloads: set})
		require.NoError(b, err)
	}
	b.ReportMetric(float64(len(inv.Nodes)), "nodes")
	b.ReportMetric(float64(r.Totals.Pods), "pods")
	b.ReportMetric(float64(r.Totals.Workloads), "workloads")
}

func envInt(b *testing.B, name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(b, err, name)
		return n
	}
	return def
}
