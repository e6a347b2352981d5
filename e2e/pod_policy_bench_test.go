//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/render"
)

// benchPodPolicyFleetsEnv names the clusters BenchmarkPodProfilePolicy
// renders, TEAMSxPROFILES comma-separated (5x5,100x20,500x100,1000x200).
const benchPodPolicyFleetsEnv = "ACCELC_BENCH_POLICY_FLEETS"

// BenchmarkPodProfilePolicy: what accelc-pod-profile costs the API server
// as a cluster grows. For each generated cluster (fleetModel) it applies
// the rendered policy to a real 1.36 API server, waits until a pod of
// the middle team and profile comes back with the team's annotation (the
// policy compiled and in force: how long, and the API server's CPU for
// it), then makes pods of that team and profile by server-side dry run
// from one client: the API server's CPU a pod (api-cpu-ms/pod), which
// the mutation's CEL grows with the policy's size. docs/scale.md.
func BenchmarkPodProfilePolicy(b *testing.B) {
	fleets := os.Getenv(benchPodPolicyFleetsEnv)
	if fleets == "" {
		fleets = "5x5,100x20,500x100,1000x200"
	}
	s := newSuite(b)
	if s.older() {
		b.Skipf("Kubernetes %s serves no MutatingAdmissionPolicy", s.k8sVersion)
	}
	s.cp = controlplane.Start(b)
	s.connect(b)
	for _, f := range strings.Split(fleets, ",") {
		t, p, ok := strings.Cut(f, "x")
		teams, err1 := strconv.Atoi(t)
		profiles, err2 := strconv.Atoi(p)
		if !ok || err1 != nil || err2 != nil || teams < 1 || profiles < 1 {
			b.Fatalf("$%s=%q: want TEAMSxPROFILES, comma-separated (500x100)", benchPodPolicyFleetsEnv, fleets)
		}
		b.Run(fmt.Sprintf("teams=%d,profiles=%d", teams, profiles), func(b *testing.B) {
			m := fleetModel(b, teams, profiles)
			tree, err := render.Cluster(m, &inventory.Inventory{})
			if err != nil {
				b.Fatal(err)
			}
			// Not b.TempDir: its name holds the sub-benchmark's comma,
			// and kubectl splits -f at commas.
			out, err := os.MkdirTemp("", "pod-policy-")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { os.RemoveAll(out) })
			if err := tree.Write(out); err != nil {
				b.Fatal(err)
			}
			policy := filepath.Join(out, "mutations", "mutatingadmissionpolicy-"+render.PodProfilePolicyName+".yaml")
			binding := filepath.Join(out, "mutations", "mutatingadmissionpolicybinding-"+render.PodProfilePolicyName+".yaml")
			team, profile := m.Teams[len(m.Teams)/2], m.Profiles[len(m.Profiles)/2].Name
			ns := team.Namespaces[0]
			s.ensureNamespaces(b, ns)
			pod := func(i int) *corev1.Pod {
				return &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%d", i), Namespace: ns, Annotations: map[string]string{render.ProfileAnnotation: profile}},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "registry.example/bench:1",
						Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}}}},
				}
			}
			pids := s.cp.PIDs()
			applied, cpu0 := time.Now(), cpuTimes(pids)["kube-apiserver"]
			s.mustKubectl(b, "apply", "--server-side", "--force-conflicts", "-f", policy, "-f", binding)
			for {
				got, err := s.client.CoreV1().Pods(ns).Create(b.Context(), pod(0), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				if err == nil && got.Annotations[m.Cluster.LabelPrefix+"/team"] == team.Name {
					break
				}
				if time.Since(applied) > 5*time.Minute {
					b.Fatalf("the policy did not take effect in 5 minutes: %v", err)
				}
				time.Sleep(100 * time.Millisecond)
			}
			effective, compiled := time.Since(applied), cpuTimes(pids)["kube-apiserver"]-cpu0
			start, n := cpuTimes(pids)["kube-apiserver"], 0
			for b.Loop() {
				if _, err := s.client.CoreV1().Pods(ns).Create(b.Context(), pod(n), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(cpuTimes(pids)["kube-apiserver"]-start)/float64(time.Millisecond)/float64(n), "api-cpu-ms/pod")
			// b.Loop resets the timer and the metrics reported before it.
			b.ReportMetric(effective.Seconds(), "effective-s")
			b.ReportMetric(compiled.Seconds(), "compile-cpu-s")
		})
	}
}
