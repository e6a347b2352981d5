package karpenter

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/fake"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/test"
)

const (
	golden    = "../../testdata/golden/hetero-prod"
	typeLabel = "accelerator.opendatahub.io/type"
)

// gpuInstances are AWS GPU instance types of several classes, as the
// cloud offers them (spot and on-demand in three zones): those of
// hetero-prod's pools, and others a NodePool must never pick.
var gpuInstances = map[string]int64{ // name → GPUs
	"p5e.48xlarge":  8, // H200
	"p5en.48xlarge": 8, // H200
	"p4de.24xlarge": 8, // A100 80GB
	"p4d.24xlarge":  8, // A100 40GB
	"p5.48xlarge":   8, // H100
	"p3.16xlarge":   8, // V100 16GB
	"g6e.12xlarge":  4, // L40S
	"g5.12xlarge":   4, // A10G
}

// nodePools reads the NodePools accelc rendered for hetero-prod.
func nodePools(t *testing.T) []*v1.NodePool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(golden, "autoscaling", "nodepool-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rendered NodePool under %s/autoscaling (%v): run from tools/karpenter", golden, err)
	}
	var out []*v1.NodePool
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		np := &v1.NodePool{}
		if err := yaml.UnmarshalStrict(data, np); err != nil {
			t.Fatalf("%s is not Karpenter's NodePool: %v", f, err)
		}
		np.UID = types.UID("uid-" + np.Name)
		out = append(out, np)
	}
	return out
}

// profile is what a pod of a hardware profile carries once ODH, accelc's
// mutation and Kueue's flavor have made it: the type label's node
// selector and the profile's tolerations.
type profile struct {
	name        string
	types       []string
	tolerations []corev1.Toleration
}

func profiles(t *testing.T) map[string]profile {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(golden, "profiles", "hardwareprofile-*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]profile{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var hp struct {
			Metadata struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(data, &hp); err != nil {
			t.Fatal(err)
		}
		p := profile{name: hp.Metadata.Name}
		if ts := hp.Metadata.Annotations["accelerator.opendatahub.io/types"]; ts != "" {
			p.types = strings.Split(ts, ",")
		}
		if tol := hp.Metadata.Annotations["accelerator.opendatahub.io/tolerations"]; tol != "" {
			if err := json.Unmarshal([]byte(tol), &p.tolerations); err != nil {
				t.Fatalf("%s: tolerations: %v", f, err)
			}
		}
		out[p.name] = p
	}
	return out
}

func pod(name string, gpus int64, nodeSelector map[string]string, affinityTypes []string, tols []corev1.Toleration) *corev1.Pod {
	p := test.UnschedulablePod(test.PodOptions{
		// Karpenter keys pods by UID.
		ObjectMeta:   metav1.ObjectMeta{Name: name, Namespace: "ml-research", UID: types.UID("uid-" + name)},
		NodeSelector: nodeSelector,
		Tolerations:  tols,
		ResourceRequirements: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("32Gi"), "nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)},
			Limits:   corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)},
		},
	})
	if len(affinityTypes) > 0 {
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: typeLabel, Operator: corev1.NodeSelectorOpIn, Values: affinityTypes}}}},
		}}}
	}
	return p
}

// solve runs Karpenter's scheduler over the NodePools and the fake cloud's
// GPU instances, as its provisioner does for pending pods.
func solve(t *testing.T, pools []*v1.NodePool, pods []*corev1.Pod) scheduling.Results {
	t.Helper()
	ctx := options.ToContext(injection.WithControllerName(context.Background(), "provisioner"), test.Options())
	var its []*cloudprovider.InstanceType
	for _, name := range slices.Sorted(mapsKeys(gpuInstances)) {
		its = append(its, fake.NewInstanceType(name, fake.WithResources(corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("96"),
			corev1.ResourceMemory: resource.MustParse("1024Gi"),
			corev1.ResourcePods:   resource.MustParse("110"),
			"nvidia.com/gpu":      *resource.NewQuantity(gpuInstances[name], resource.DecimalSI),
		})))
	}
	cp := fake.NewCloudProvider()
	cp.InstanceTypes = its
	client := fakecr.NewFakeClient()
	clk := &clock.RealClock{}
	cluster := state.NewCluster(clk, client, cp)
	byPool := map[string][]*cloudprovider.InstanceType{}
	for _, np := range pools {
		// The provisioner asks the cloud provider for every pool's
		// instance types; the pool's requirements then narrow them.
		byPool[np.Name] = its
	}
	topology, err := scheduling.NewTopology(ctx, client, cluster, nil, pools, byPool, pods)
	if err != nil {
		t.Fatal(err)
	}
	s := scheduling.NewScheduler(ctx, client, pools, cluster, nil, topology, byPool, nil, events.NewRecorder(&record.FakeRecorder{}), clk, nil, nil)
	res, err := s.Solve(ctx, pods)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// claims maps each scheduled pod to the NodeClaim Karpenter would launch.
func claims(res scheduling.Results) map[string]*scheduling.NodeClaim {
	out := map[string]*scheduling.NodeClaim{}
	for _, nc := range res.NewNodeClaims {
		for _, p := range nc.Pods {
			out[p.Name] = nc
		}
	}
	return out
}

func instanceNames(nc *scheduling.NodeClaim) []string {
	var out []string
	for _, it := range nc.InstanceTypeOptions {
		out = append(out, it.Name)
	}
	sort.Strings(out)
	return out
}

// TestEachProfileGetsItsClass: a pending pod of each of hetero-prod's
// typed profiles makes Karpenter launch from the NodePool of its class,
// only instance types of that class, and spot only where the CUE allows
// it (A100: the spot pool first, by weight; H200: on demand only).
func TestEachProfileGetsItsClass(t *testing.T) {
	pools := nodePools(t)
	byType := map[string][]string{}
	for _, np := range pools {
		byType[np.Spec.Template.Labels[typeLabel]] = append(byType[np.Spec.Template.Labels[typeLabel]], np.Name)
	}
	want := map[string]struct{ pool, capacity string }{
		"nvidia-h200-141gb": {"accelc-h200", "on-demand"},
		"nvidia-a100-80gb":  {"accelc-a100-spot", "spot"},
	}
	instances := map[string][]string{
		"nvidia-h200-141gb": {"p5e.48xlarge", "p5en.48xlarge"},
		"nvidia-a100-80gb":  {"p4de.24xlarge"},
	}
	var pods []*corev1.Pod
	expect := map[string]string{} // pod → class
	for _, p := range profiles(t) {
		if len(p.types) != 1 || byType[p.types[0]] == nil {
			continue
		}
		name := "pod-" + p.name
		pods = append(pods, pod(name, 4, map[string]string{typeLabel: p.types[0]}, nil, p.tolerations))
		expect[name] = p.types[0]
	}
	if len(expect) < 2 {
		t.Fatalf("want pods of profiles of at least two classes with a NodePool, got %v", expect)
	}
	res := solve(t, pools, pods)
	for p, err := range res.PodErrors {
		t.Errorf("Karpenter cannot place %s: %v", p.Name, err)
	}
	got := claims(res)
	for name, class := range expect {
		nc := got[name]
		if nc == nil {
			t.Errorf("%s: no NodeClaim", name)
			continue
		}
		w := want[class]
		if nc.NodePoolName != w.pool {
			t.Errorf("%s (%s): NodePool %s, want %s", name, class, nc.NodePoolName, w.pool)
		}
		if its := instanceNames(nc); !slices.Equal(its, instances[class]) {
			t.Errorf("%s (%s): instance types %v, want only %v", name, class, its, instances[class])
		}
		if ct := nc.Requirements.Get(v1.CapacityTypeLabelKey).Values(); !slices.Equal(ct, []string{w.capacity}) {
			t.Errorf("%s (%s): capacity types %v, want %s only", name, class, ct, w.capacity)
		}
		if nc.Labels[typeLabel] != class && !nc.Requirements.Get(typeLabel).Has(class) {
			t.Errorf("%s: the NodeClaim is not born with %s=%s", name, typeLabel, class)
		}
		t.Logf("%s (%s) → NodePool %s, %v, %v", name, class, nc.NodePoolName, instanceNames(nc), nc.Requirements.Get(v1.CapacityTypeLabelKey).Values())
	}
}

// TestNoPoolForWhatIsNotAllowed: a pod confined to types no NodePool
// launches (a team's V100s), or to a class whose nodes are tainted for the
// profiles that target it (H200: the premium pool) without their
// toleration (a generic profile's pod), makes Karpenter launch nothing;
// a generic profile's pod confined to its team's types gets A100s, never
// an H200.
func TestNoPoolForWhatIsNotAllowed(t *testing.T) {
	pools := nodePools(t)
	gpuTol := []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	pods := []*corev1.Pod{
		pod("v100-only", 1, map[string]string{typeLabel: "nvidia-v100-16gb"}, nil, gpuTol),
		pod("h200-untolerated", 1, map[string]string{typeLabel: "nvidia-h200-141gb"}, nil, gpuTol),
		pod("generic-team-types", 1, nil, []string{"nvidia-v100-16gb", "nvidia-a100-80gb"}, gpuTol),
		pod("generic-any-type", 1, nil, []string{"nvidia-h200-141gb", "nvidia-a100-80gb", "nvidia-v100-16gb"}, gpuTol),
	}
	res := solve(t, pools, pods)
	failed := map[string]string{}
	for p, err := range res.PodErrors {
		failed[p.Name] = fmt.Sprint(err)
	}
	for _, name := range []string{"v100-only", "h200-untolerated"} {
		if _, ok := failed[name]; !ok {
			t.Errorf("%s: Karpenter would launch a node for it from NodePool %s", name, claims(res)[name].NodePoolName)
			continue
		}
		t.Logf("%s: no NodePool: %s", name, firstLine(failed[name]))
	}
	got := claims(res)
	for _, name := range []string{"generic-team-types", "generic-any-type"} {
		nc := got[name]
		if nc == nil {
			t.Errorf("%s: not placed: %s", name, failed[name])
			continue
		}
		if !strings.HasPrefix(nc.NodePoolName, "accelc-a100") {
			t.Errorf("%s: NodePool %s, want an A100 pool (the H200 pool's premium taint keeps untolerating pods off)", name, nc.NodePoolName)
		}
		t.Logf("%s → NodePool %s, %v", name, nc.NodePoolName, instanceNames(nc))
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > 200 {
		line = line[:200] + "…"
	}
	return line
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestLimitsThenFallback: A100 pods past the spot pool's limit (32 GPUs:
// four p4de.24xlarge) go to the on-demand pool, and past both limits
// (48) launch nothing.
func TestLimitsThenFallback(t *testing.T) {
	pools := nodePools(t)
	p := profiles(t)["large-gpu"]
	var pods []*corev1.Pod
	for i := range 7 {
		pods = append(pods, pod(fmt.Sprintf("train-%d", i), 8, map[string]string{typeLabel: "nvidia-a100-80gb"}, nil, p.tolerations))
	}
	res := solve(t, pools, pods)
	count := map[string]int{}
	for _, nc := range res.NewNodeClaims {
		count[nc.NodePoolName] += len(nc.Pods)
	}
	if count["accelc-a100-spot"] != 4 || count["accelc-a100"] != 2 || len(res.PodErrors) != 1 {
		t.Fatalf("7 pods of 8 A100s: %v placed by pool and %d not placed, want 4 on spot (limit 32), 2 on demand (limit 16) and 1 not placed", count, len(res.PodErrors))
	}
	for p, err := range res.PodErrors {
		t.Logf("%s: not placed: %s", p.Name, firstLine(fmt.Sprint(err)))
	}
	t.Logf("7 pods of 8 A100s: %v, 1 past both limits", count)
}
