package live_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/nodegen"
	"github.com/accelc/accelc/pkg/catalog"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/inventory/live"
)

// BenchmarkReadLive lists and classifies 5,000 nodes and 50,000 pods on a
// real API server (NFR-001: under 2 s), and reports beside it what
// `kubectl get nodes -o json` takes on the same server (kubectl-s) and
// what accelc takes for the nodes alone (nodes-only-s), the same work.
// Filling the server takes a few minutes: make bench-live.
func BenchmarkReadLive(b *testing.B) {
	const nodes, podsPerNode = 5000, 10
	cp := controlplane.Start(b)
	ctx := b.Context()
	cfg := cp.RESTConfig()
	cfg.QPS, cfg.Burst = 5000, 5000
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	begin := time.Now()
	fill(ctx, b, cs, nodes, podsPerNode)
	b.Logf("created %d nodes and %d pods in %s", nodes, nodes*podsPerNode, time.Since(begin).Round(time.Second))

	cat, err := catalog.Builtin()
	if err != nil {
		b.Fatal(err)
	}
	kubectl := kubectlSeconds(b, cp.Kubeconfig())
	nodesOnly := time.Now()
	if _, err := live.Read(ctx, live.Options{Kubeconfig: cp.Kubeconfig(), SkipPods: true}); err != nil {
		b.Fatal(err)
	}
	nodesOnlySec := time.Since(nodesOnly).Seconds()
	// The same server read with kubectl's page size and larger ones.
	for _, page := range []int64{500, 2000, 5000} {
		b.Run(fmt.Sprintf("page=%d", page), func(b *testing.B) {
			for b.Loop() {
				snap, err := live.Read(ctx, live.Options{Kubeconfig: cp.Kubeconfig(), PageSize: page})
				if err != nil {
					b.Fatal(err)
				}
				inv := snap.Classify(cat, inventory.Options{})
				if len(inv.Nodes)+inv.OtherNodes != nodes || !inv.UsageKnown() {
					b.Fatalf("read %d accelerator nodes, usage known %v", len(inv.Nodes), inv.UsageKnown())
				}
			}
			b.ReportMetric(kubectl, "kubectl-s")
			b.ReportMetric(nodesOnlySec, "nodes-only-s")
		})
	}
}

// fill creates the generated nodes (status through the status subresource)
// and podsPerNode pods bound to each, half of them asking for a GPU.
func fill(ctx context.Context, b *testing.B, cs kubernetes.Interface, nodes, podsPerNode int) {
	var list corev1.NodeList
	if err := json.Unmarshal(nodegen.List(nodegen.Generated(nodes)), &list); err != nil {
		b.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "load"}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	work := make(chan func() error)
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for range 48 {
		wg.Go(func() {
			for f := range work {
				if err := f(); err != nil {
					once.Do(func() { firstErr = err })
				}
			}
		})
	}
	for i := range list.Items {
		n := list.Items[i]
		work <- func() error {
			status := n.Status
			created, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: n.Labels}}, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			created.Status = status
			_, err = cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
			return err
		}
		for p := range podsPerNode {
			work <- func() error {
				c := corev1.Container{Name: "app", Image: "app"}
				if p%2 == 0 {
					c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
				}
				_, err := cs.CoreV1().Pods("load").Create(ctx, &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", n.Name, p)},
					Spec:       corev1.PodSpec{NodeName: n.Name, Containers: []corev1.Container{c}},
				}, metav1.CreateOptions{})
				return err
			}
		}
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}

// kubectlSeconds is the best of three `kubectl get nodes -o json` runs.
func kubectlSeconds(b *testing.B, kubeconfig string) float64 {
	path, err := exec.LookPath("kubectl")
	if err != nil {
		b.Logf("no kubectl on PATH: kubectl-s is 0")
		return 0
	}
	best := 0.0
	for range 3 {
		cmd := exec.Command(path, "--kubeconfig", kubeconfig, "get", "nodes", "-o", "json")
		devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		cmd.Stdout = devnull
		start := time.Now()
		err = cmd.Run()
		devnull.Close()
		if err != nil {
			b.Fatal(err)
		}
		if s := time.Since(start).Seconds(); best == 0 || s < best {
			best = s
		}
	}
	return best
}
