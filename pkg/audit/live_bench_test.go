package audit_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/livetest"
	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/inventory/live"
)

// BenchmarkAuditLive is `accelc audit --live` of hetero-prod's tree on a
// real API server holding 5,000 nodes and 50,000 pods, one GPU each
// (livetest.Fill: a namespace of no team, so every pod is a finding),
// beside `kubectl get pods -A -o json` on the same server in the same run
// (kubectl-pods-s). Each op reads the nodes and every object audit judges
// and judges them. Filling the server takes minutes: make bench-live
// runs it; bench-once leaves it out, as it leaves BenchmarkReadLive.
func BenchmarkAuditLive(b *testing.B) {
	if os.Getenv("ACCELC_BENCH_LIVE") == "" {
		b.Skip("fills an API server for minutes: make bench-live (ACCELC_BENCH_LIVE=1)")
	}
	const nodes, podsPerNode = 5000, 10
	ctx := b.Context()
	cp := controlplane.Start(b)
	cfg := cp.RESTConfig()
	cfg.QPS, cfg.Burst = 5000, 5000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	begin := time.Now()
	livetest.Fill(ctx, b, cs, nodes, podsPerNode)
	b.Logf("created %d nodes and %d pods in %s", nodes, nodes*podsPerNode, time.Since(begin).Round(time.Second))
	kubectl := 0.0
	if path, err := exec.LookPath("kubectl"); err == nil {
		start := time.Now()
		cmd := exec.Command(path, "--kubeconfig", cp.Kubeconfig(), "get", "pods", "-A", "-o", "json")
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		kubectl = time.Since(start).Seconds()
	}
	src := accelc.Source{Live: true, LiveOptions: live.Options{Kubeconfig: cp.Kubeconfig()}}
	b.ResetTimer()
	pods := 0
	for b.Loop() {
		res, err := accelc.Cluster(ctx, "../../examples/clusters/hetero-prod", accelc.Options{Stages: accelc.Rendered, Inventory: src})
		if err != nil {
			b.Fatal(err)
		}
		r, err := accelc.Audit(ctx, res, src, "")
		if err != nil {
			b.Fatal(err)
		}
		pods = r.Totals.Pods
	}
	b.ReportMetric(float64(pods), "pods")
	b.ReportMetric(kubectl, "kubectl-pods-s")
}
