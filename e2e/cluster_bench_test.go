//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/nodegen"
	"github.com/accelc/accelc/pkg/policytest/engine"
	"github.com/accelc/accelc/pkg/render"
)

// The cluster benchmark's size and shape: $ACCELC_BENCH_SCALE times the
// hetero-prod example's 29 nodes (35: 1,015 nodes), $ACCELC_BENCH_PODS
// GPU pods (3,000), a fifth of them made by Jobs of five,
// $ACCELC_BENCH_ROUNDS rounds (1) of $ACCELC_BENCH_VARIANTS (all of
// benchVariants but those marked extra, comma-separated).
const (
	benchScaleEnv    = "ACCELC_BENCH_SCALE"
	benchPodsEnv     = "ACCELC_BENCH_PODS"
	benchRoundsEnv   = "ACCELC_BENCH_ROUNDS"
	benchVariantsEnv = "ACCELC_BENCH_VARIANTS"
	// benchProfileEnv names a folder for CPU profiles of kube-apiserver
	// and Gatekeeper over each storm (profileStorm): where the time goes.
	benchProfileEnv        = "ACCELC_BENCH_PROFILE"
	benchProfileSecondsEnv = "ACCELC_BENCH_PROFILE_SECONDS"
	// benchIdleSecondsEnv is how long the stack is watched at rest before
	// each storm (60 s): what it spends by the clock alone (node leases,
	// controllers' resyncs), charged to no pod. At 1,015 nodes the stack at
	// rest works in bursts some 20-30 s apart (0.3-0.6 of a core for a
	// 5-second window, 0.1 between): a 15-second watch caught one or none,
	// and put one stack's rate at rest at 297 ms a second and the other's
	// at 196 in one run; a minute holds two or three.
	benchIdleSecondsEnv = "ACCELC_BENCH_IDLE_SECONDS"
	// stormTimeout is how long a storm may take before it is taken for
	// stuck: on the shared 2-core machine, under a load of 40, Kueue's
	// variants bind a few pods a second.
	stormTimeout = 30 * time.Minute
)

// schedulerClientLimit is kube-scheduler's client rate limit, its
// KubeSchedulerConfiguration's clientConnection defaults (the harness
// leaves them): the bare stack binds at most about this many pods a
// second, whatever the machine.
const schedulerClientLimit = "50 requests/s, burst 100"

func envInt(b *testing.B, name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("$%s=%q: want a positive number", name, v)
		}
		return n
	}
	return def
}

// variant is one stack the storm runs on, and how its teams write their
// pods and Jobs.
type variant struct {
	name string
	// kueue runs Kueue's manager with the queues accelc renders; the
	// Configuration fragment accelc renders too, unless kueueDefaults.
	kueue, kueueDefaults bool
	// gatekeeper runs Gatekeeper's manager: alone, with its chart's
	// defaults; with accelc, as accelc's rendered values say.
	gatekeeper bool
	// accelc applies the whole rendered tree (constraints, mutators,
	// profiles, queues) and its pods name only their profile.
	accelc bool
	// premutated writes accelc's pods as Gatekeeper's mutators would
	// leave them (engine.Mutator), all but the profile label, which
	// accelc's MutatingAdmissionPolicy still gives them, and sends
	// Gatekeeper's mutating webhook no pod: what accelc would cost were
	// its pod mutations done in the API server, less the cost of doing
	// them there.
	premutated bool
	// affinity confines a one-type profile's pods written by hand with
	// required node affinity, as accelc's mutators do, not a node
	// selector.
	affinity bool
	// odh writes by hand pods that also carry Open Data Hub's two
	// hardware profile annotations, as ODH's dashboard writes them with
	// or without accelc.
	odh bool
	// extra variants run only when $ACCELC_BENCH_VARIANTS names them.
	extra bool
	about string
}

// benchVariants are the stacks, in the order each round runs them.
var benchVariants = []variant{
	{name: "bare", about: "kube-scheduler alone; pods carry their profile's types (a node selector, or required node affinity for several) and tolerations, written by hand"},
	{name: "kueue", kueue: true, about: "Kueue with accelc's queues and Configuration fragment, no Gatekeeper; queue, priority, the profile's types and tolerations written by hand, Jobs labelled"},
	{name: "gatekeeper", gatekeeper: true, about: "Gatekeeper installed with its chart's defaults (audit every 60 s, webhooks on every resource), no constraints; pods as bare"},
	{name: "accelc", kueue: true, gatekeeper: true, accelc: true, about: "accelc as rendered: the tree applied, Gatekeeper with the values accelc renders; pods and Jobs name only their profile (ODH's annotation)"},
	{name: "kueue-defaults", kueue: true, kueueDefaults: true, extra: true, about: "as kueue, with Kueue's default Configuration (accelc's fragment not merged)"},
	{name: "accelc-premutated", kueue: true, gatekeeper: true, accelc: true, premutated: true, extra: true, about: "as accelc, but its pods and Jobs written as Gatekeeper's mutators would leave them (all but the profile label, which accelc's MutatingAdmissionPolicy gives) and Gatekeeper's mutating webhook sent no pod: the most that moving the pod mutations out of Gatekeeper could save"},
	{name: "kueue-affinity", kueue: true, affinity: true, extra: true, about: "as kueue, but a one-type profile's pods confined by required node affinity (In, one value), as accelc's mutators wrote them until 30 November 2026, not a node selector: what that form costs Kueue and the scheduler"},
	{name: "kueue-odh", kueue: true, odh: true, extra: true, about: "as kueue, the pods and Jobs also carrying Open Data Hub's two hardware profile annotations, which its dashboard writes with or without accelc: what of accelc's larger pods is ODH's"},
	{name: "kueue-gatekeeper", kueue: true, gatekeeper: true, extra: true, about: "as kueue, with Gatekeeper installed as accelc installs it (its rendered values) but none of accelc's tree: what Gatekeeper itself costs beside Kueue"},
}

// pickVariants are the variants $ACCELC_BENCH_VARIANTS names, in
// benchVariants' order, or all but the extra ones.
func pickVariants(b *testing.B) []variant {
	only := os.Getenv(benchVariantsEnv)
	var out []variant
	for _, v := range benchVariants {
		if only == "" && !v.extra || slices.Contains(strings.Split(only, ","), v.name) {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		var names []string
		for _, v := range benchVariants {
			names = append(names, v.name)
		}
		b.Fatalf("$%s=%q names no variant; they are %s", benchVariantsEnv, only, strings.Join(names, ", "))
	}
	return out
}

// stormPod is one kind of pod of the storm: a team's namespace, its
// profile, and the types the profile allows.
type stormPod struct {
	ns, profile string
	types       []string
	share       int // of 10
}

// The storm: each team's pods of its profiles, in the shares of the
// example's quotas.
var stormKinds = []stormPod{
	{"ml-research", "large-gpu", []string{"nvidia-a100-80gb"}, 3},
	{"ml-research", "premium-gpu", []string{"nvidia-h200-141gb"}, 1},
	{"serving-prod", "large-memory", []string{"nvidia-h200-141gb", "nvidia-a100-80gb"}, 2},
	{"serving-prod", "large-gpu", []string{"nvidia-a100-80gb"}, 1},
	{"ds-notebooks", "standard-gpu", []string{"nvidia-v100-16gb"}, 3},
}

// clusterRun is what one storm measured.
type clusterRun struct {
	variant     string
	nodes, pods int
	jobs, solo  int // Jobs of five, and pods made alone
	wall        time.Duration
	bound       []time.Duration // create → bound, per pod
	admitted    []time.Duration // Workload made → quota reserved (Kueue)
	workloads   int             // Workloads Kueue made (-1: no Kueue)
	cpu         map[string]time.Duration
	idle        map[string]float64 // CPU seconds a second each component spends at rest, before the storm
	// wake is how long the stack took, after the last pod was bound, to
	// come back to its rate at rest (at most wakeMost), and wakeCPU what
	// each component spent in it: the storm's work that its last binding
	// leaves still to do (pods marked Running, Kueue and the controllers
	// catching up), which the storm's own figures do not count.
	wake      time.Duration
	wakeCPU   map[string]time.Duration
	rss       map[string]int64 // peak resident set during the storm, bytes
	setupPeak map[string]int64 // peak resident set before it: starting, 1,015 nodes made Ready, the stack installed and settled, bytes
	apiStart  int64            // kube-apiserver's resident set as the storm starts (the cluster, nodes and stack before the first pod), bytes
	api       apiMetrics       // the API server's counters over the storm
	load      [2]float64       // the machine's 1-minute load average at the storm's start and end
	probe     [2]time.Duration // the machine's pace: probeWork's CPU time, at rest before the storm and during it (medians)
	wrongType []string
	perSecond float64
	stored    storedSize
}

// storedSize is the mean size, as JSON, of the storm's pods and Kueue's
// Workloads once bound: what the API server's watch cache holds a copy of
// for every change of each.
type storedSize struct {
	pod, workload int // bytes; workload 0 without Kueue
}

// storedSizes lists the storm's pods and Kueue's Workloads as JSON after
// the storm (outside the measurement) and returns their mean sizes.
func storedSizes(b *testing.B, s *suite, kueue bool) storedSize {
	mean := func(path, selector string) int {
		req := s.client.CoreV1().RESTClient().Get().AbsPath(path)
		if selector != "" {
			req = req.Param("labelSelector", selector)
		}
		data, err := req.DoRaw(b.Context())
		if err != nil {
			b.Fatalf("list %s: %v", path, err)
		}
		var list struct {
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(data, &list); err != nil {
			b.Fatalf("list %s: %v", path, err)
		}
		if len(list.Items) == 0 {
			return 0
		}
		total := 0
		for _, it := range list.Items {
			total += len(it)
		}
		return total / len(list.Items)
	}
	out := storedSize{pod: mean("/api/v1/pods", "accelc.io/bench")}
	if kueue {
		out.workload = mean("/apis/"+workloadGVR.Group+"/"+workloadGVR.Version+"/workloads", "")
	}
	return out
}

// BenchmarkCluster runs a storm of GPU pods and Jobs on the whole stack at
// 1,000 nodes, on each variant (benchVariants: bare, Kueue alone,
// Gatekeeper alone, accelc as rendered), each on a fresh control plane
// (etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
// KWOK's kubelets), the variants interleaved round by round so that a
// busy spell of the shared machine falls on all of them. Per variant and
// round it reports pods bound per second, create→bound p50/p99, CPU per
// pod across every component, API server writes and admission webhook
// calls per pod (from the API server's metrics), webhook latency, each
// component's peak memory and the Workloads Kueue made, then prints a
// table of all rounds. It fails when any pod is bound to a type its
// profile does not allow, and when Kueue made other than one Workload per
// Job and per pod made alone. One iteration is one storm: run it with
// -benchtime=1x (`make bench-cluster`).
func BenchmarkCluster(b *testing.B) {
	scale := envInt(b, benchScaleEnv, 35)
	pods := envInt(b, benchPodsEnv, 3000)
	rounds := envInt(b, benchRoundsEnv, 1)
	variants := pickVariants(b)
	var runs []clusterRun
	for round := 1; round <= rounds; round++ {
		b.Run(fmt.Sprintf("round=%d", round), func(b *testing.B) {
			for _, v := range variants {
				b.Run("variant="+v.name, func(b *testing.B) {
					var r clusterRun
					for range b.N {
						r = runStorm(b, v, scale, pods)
					}
					r.report(b)
					runs = append(runs, r)
				})
			}
		})
	}
	printClusterTable(os.Stdout, variants, rounds, runs)
}

// runStorm starts a stack, fills it with nodes, runs the storm and
// measures it.
func runStorm(b *testing.B, v variant, scale, pods int) clusterRun {
	b.StopTimer()
	s := newSuite(b)
	opts := []controlplane.Option{controlplane.WithScheduler(), controlplane.WithControllerManager()}
	if os.Getenv(benchProfileEnv) != "" {
		opts = append(opts, controlplane.WithProfiling())
	}
	s.cp = controlplane.Start(b, opts...)
	s.connect(b)

	// The example's CUE module with the quotas scaled to the fleet, and
	// its nodes scale times over.
	repo := filepath.Join(s.work, "gitops")
	for _, dir := range []string{"cue.mod", "fleet", storyExample} {
		if err := os.CopyFS(filepath.Join(repo, dir), os.DirFS(filepath.Join(s.root, "examples", "clusters", dir))); err != nil {
			b.Fatal(err)
		}
	}
	cluster := filepath.Join(repo, storyExample)
	scaleQuotas(b, filepath.Join(cluster, "cluster.cue"), scale)
	inv := filepath.Join(cluster, "inventory.json")
	if err := os.WriteFile(inv, nodegen.List(nodegen.HeteroProd(scale)), 0o644); err != nil {
		b.Fatal(err)
	}
	// Rendered for every variant: the others take the type label, the
	// namespaces, the queues and the teams' priorities from it.
	out := s.render(b, cluster, "bench")
	c := &clusterUnderTest{example: cluster, out: out, objs: readTree(b, out), applied: appliedFolders(b, out)}
	c.read(b)
	w := newStormWriter(b, v, c)
	if v.gatekeeper {
		s.gk = startBenchGatekeeper(b, s, v, c)
	}
	// Every variant runs on the same cluster: it serves the API groups of
	// the projects an Open Data Hub cluster runs beside accelc (ODH's
	// HardwareProfile and Notebook, KubeRay, Kubeflow's training kinds,
	// JobSet, LeaderWorkerSet, AppWrapper, Node Feature Discovery, Flux,
	// the Prometheus operator, Karpenter), whether or not accelc is
	// there; Kueue's only with Kueue.
	if v.kueue {
		s.installCRDs(b)
	} else {
		s.installCRDsBut(b, "kueue.x-k8s.io")
	}
	if v.kueue {
		fragment, namespaces := kueueConfig(b, c.objs)
		o := controlplane.KueueOptions{Namespaces: namespaces, Fragment: []byte(fragment)}
		if v.kueueDefaults {
			o.Fragment = nil
		}
		o.Profiling = os.Getenv(benchProfileEnv) != ""
		s.kq = s.cp.StartKueue(b, o)
	}
	s.kwok = s.cp.StartKWOK(b)
	// The type label nfd-master would stamp (the story proves it does),
	// set on the nodes as they are made.
	extra := nodeTypeLabels(b, s, cluster, c.typeLabel)
	begin := time.Now()
	names := s.createNodes(b, inv, extra)
	st := &story{s: s}
	st.waitNodesReady(b, names)
	b.Logf("%s: %d nodes Ready under KWOK in %s", v.name, len(names), time.Since(begin).Round(time.Millisecond))
	if v.accelc {
		s.ensureNamespaces(b, foreignNamespaces(b, out)...)
		// The tree's own CRDs first, established (Flux retries until
		// they are; one kubectl apply does not).
		var crds []string
		for _, r := range c.objs {
			if r.obj.GetKind() == "CustomResourceDefinition" {
				crds = append(crds, filepath.Join(out, r.file))
			}
		}
		if _, err := controlplane.ApplyCRDs(b.Context(), s.dyn, crds...); err != nil {
			b.Fatal(err)
		}
		s.mapper.Reset()
		s.apply(b, c)
		s.waitGatekeeper(b, c)
	} else {
		// The same team namespaces, Pod Security labels and all; with
		// Kueue, the same queues and priorities, as an admin would write
		// them.
		kinds := []string{"Namespace"}
		if v.kueue {
			kinds = append(kinds, kueueQueueKinds...)
		}
		s.mapper.Reset() // Kueue's CRDs came after the suite connected
		b.Logf("created from the tree, without accelc's policies: %s", jsonString(s.createRendered(b, c.objs, kinds...)))
	}
	if v.kueue {
		for _, r := range c.objs {
			if k := r.obj.GetKind(); k == "ClusterQueue" || k == "LocalQueue" {
				if err := s.waitActive(b.Context(), r.obj); err != nil {
					b.Fatalf("%s %s never Active: %v", k, r.obj.GetName(), err)
				}
			}
		}
	}
	// What each component spends at rest, once settled, nodes Ready and
	// the stack idle: the work that runs by the clock, which a longer
	// storm charges to more pods. Outside the timer: no storm's time.
	pids := s.cp.PIDs()
	settle(b, v.name, pids)
	stopProbe := startSpeedProbe()
	idle := idleRates(pids, time.Duration(envInt(b, benchIdleSecondsEnv, 60))*time.Second)
	atRest := stopProbe()
	b.StartTimer()
	r := storm(b, s, v, w, pods, extra, idle)
	b.StopTimer()
	r.nodes, r.probe[0] = len(names), atRest
	return r
}

// gatekeeperChartDefaults are the values that install Gatekeeper alone as
// its chart does by default where the harness's own start differs: the
// audit once a minute, not every 5 s. (Its webhooks stay as the harness
// registers them: every resource, the mutating one on CREATE only.)
const gatekeeperChartDefaults = "auditInterval: 60\n"

// startBenchGatekeeper starts Gatekeeper as the variant installs it: alone,
// with its chart's defaults; with accelc, or beside Kueue, with the values
// accelc renders for Gatekeeper's Helm chart (its
// accelc-gatekeeper-values ConfigMap), which docs/scale.md installs it
// with.
func startBenchGatekeeper(b *testing.B, s *suite, v variant, c *clusterUnderTest) *controlplane.Gatekeeper {
	values := gatekeeperChartDefaults
	if v.accelc || v.kueue {
		values = gatekeeperValues(b, c)
	}
	if v.premutated {
		var hv render.GatekeeperHelmValues
		if err := yaml.UnmarshalStrict([]byte(values), &hv); err != nil {
			b.Fatal(err)
		}
		// A rule no request matches: Gatekeeper runs as installed, its
		// mutators loaded (its expansion of Jobs reads them), but the
		// API server sends it no pod to mutate.
		hv.MutatingWebhookCustomRules = []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{"bench.accelc.io"}, APIVersions: []string{"v1"}, Resources: []string{"nothings"}},
		}}
		data, err := yaml.Marshal(hv)
		if err != nil {
			b.Fatal(err)
		}
		values = string(data)
	}
	opts := []controlplane.GatekeeperOption{controlplane.WithGatekeeperValues([]byte(values))}
	if os.Getenv(benchProfileEnv) != "" {
		opts = append(opts, controlplane.WithGatekeeperProfiling())
	}
	return s.cp.StartGatekeeper(b, opts...)
}

// gatekeeperValues is the values.yaml of the tree's
// accelc-gatekeeper-values ConfigMap.
func gatekeeperValues(b *testing.B, c *clusterUnderTest) string {
	for _, r := range c.objs {
		if r.obj.GetKind() == "ConfigMap" && r.obj.GetName() == render.GatekeeperValuesName {
			values, _, _ := unstructured.NestedString(r.obj.Object, "data", "values.yaml")
			if values == "" {
				b.Fatalf("%s: ConfigMap %s has no data.values.yaml", r, render.GatekeeperValuesName)
			}
			return values
		}
	}
	b.Fatalf("the tree %s has no ConfigMap %s, the values Gatekeeper is installed with", c.out, render.GatekeeperValuesName)
	return ""
}

// scaleQuotas multiplies every quota and borrowing limit of the cluster's
// teams by k.
func scaleQuotas(b *testing.B, file string, k int) {
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	num := regexp.MustCompile(`(": )(\d+)`)
	var lines []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "quota:") || strings.Contains(line, "borrowingLimit:") {
			line = num.ReplaceAllStringFunc(line, func(m string) string {
				sub := num.FindStringSubmatch(m)
				n, _ := strconv.Atoi(sub[2])
				return sub[1] + strconv.Itoa(n*k)
			})
		}
		lines = append(lines, line)
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		b.Fatal(err)
	}
}

// nodeTypeLabels is each node's type, by accelc's own reading of it, as
// the label nfd-master would stamp.
func nodeTypeLabels(b *testing.B, s *suite, cluster, typeLabel string) map[string]map[string]string {
	view, err := s.inventoryView(b, cluster)
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, n := range view.Nodes {
		if known(n.AcceleratorType) {
			out[n.Name] = map[string]string{typeLabel: n.AcceleratorType}
		}
	}
	return out
}

// stormWriter is how a variant's teams write their pods and Jobs.
type stormWriter struct {
	v         variant
	typeLabel string
	queue     map[string]string // profile → its LocalQueue (Kueue alone)
	priority  map[string]string // namespace → its team's WorkloadPriorityClass (Kueue alone)
	// premutated is, by namespace and profile, the pod as accelc's
	// mutators leave it, less the profile label (accelc-premutated).
	premutated map[string]*corev1.Pod
}

// newStormWriter reads from the tree what a team using Kueue without
// accelc writes by hand: each profile's LocalQueue, and each namespace's
// priority, which accelc's mutators would set.
func newStormWriter(b *testing.B, v variant, c *clusterUnderTest) stormWriter {
	w := stormWriter{v: v, typeLabel: c.typeLabel, queue: map[string]string{}, priority: map[string]string{}}
	for _, p := range c.profiles {
		w.queue[p.name] = p.queue
	}
	for _, r := range c.objs {
		if r.obj.GetKind() != "AssignMetadata" {
			continue
		}
		loc, _, _ := unstructured.NestedString(r.obj.Object, "spec", "location")
		if loc != `metadata.labels."kueue.x-k8s.io/priority-class"` {
			continue
		}
		value, _, _ := unstructured.NestedString(r.obj.Object, "spec", "parameters", "assign", "value")
		nss, _, _ := unstructured.NestedStringSlice(r.obj.Object, "spec", "match", "namespaces")
		for _, ns := range nss {
			w.priority[ns] = value
		}
	}
	if v.premutated {
		w.premutated = premutatedPods(b, c)
	}
	if v.kueue && !v.accelc {
		for _, k := range stormKinds {
			if w.queue[k.profile] == "" {
				b.Fatalf("the tree's HardwareProfile %s names no LocalQueue (spec.scheduling.kueue.localQueueName): the Kueue variant has no queue to label its pods with", k.profile)
			}
		}
	}
	return w
}

// premutatedPods are, by "namespace/profile", the storm's accelc pods as
// the tree's admission mutations and Gatekeeper's mutators leave them
// (engine.Mutator, which the admission tests check against the live
// cluster), without the profile label.
func premutatedPods(b *testing.B, c *clusterUnderTest) map[string]*corev1.Pod {
	var namespaces []string
	for _, k := range stormKinds {
		if !slices.Contains(namespaces, k.ns) {
			namespaces = append(namespaces, k.ns)
		}
	}
	mutator, err := engine.NewMutator(c.tree(b), namespaces)
	if err != nil {
		b.Fatal(err)
	}
	if c.labelPrefix == "" {
		b.Fatalf("%s: the tree's constraint has no spec.parameters.labelPrefix: render it again with this accelc", c.out)
	}
	w := stormWriter{v: variant{accelc: true}}
	out := map[string]*corev1.Pod{}
	for _, k := range stormKinds {
		labels, annotations, spec := w.object(k)
		pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: k.ns, Labels: labels, Annotations: annotations}, Spec: spec}
		u, err := apiruntime.DefaultUnstructuredConverter.ToUnstructured(pod)
		if err != nil {
			b.Fatal(err)
		}
		mutated, err := mutator.MutateObject(&unstructured.Unstructured{Object: u})
		if err != nil {
			b.Fatal(err)
		}
		var p corev1.Pod
		if err := apiruntime.DefaultUnstructuredConverter.FromUnstructured(mutated.Object, &p); err != nil {
			b.Fatal(err)
		}
		delete(p.Labels, c.labelPrefix+"/profile")
		out[k.ns+"/"+k.profile] = &p
	}
	return out
}

// object is the labels and annotations of a pod or a Job of kind k, and
// the pod spec: with accelc, one GPU and the profile's annotation (the
// policies do the rest); otherwise the profile's types (a node selector,
// or required node affinity for several) and the GPU taints'
// tolerations, as teams wrote pods before accelc, and with Kueue the
// queue and priority labels too, on the pod or on the Job.
func (w stormWriter) object(k stormPod) (labels, annotations map[string]string, spec corev1.PodSpec) {
	labels = map[string]string{"accelc.io/bench": k.profile}
	spec = corev1.PodSpec{Containers: []corev1.Container{{
		Name: "main", Image: "registry.example/bench:1",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
	}}}
	if w.v.premutated {
		p := w.premutated[k.ns+"/"+k.profile]
		maps.Copy(labels, p.Labels)
		return labels, maps.Clone(p.Annotations), *p.Spec.DeepCopy()
	}
	if w.v.accelc {
		return labels, map[string]string{hardwareProfileAnnotation: k.profile, hardwareProfileNSAnnotation: "opendatahub"}, spec
	}
	// The types the profile allows, as a team would write them by hand:
	// a node selector for one, required node affinity for several (a
	// node selector cannot say "either"). Narrower than the profile, the
	// pods would be a different workload: fewer flavors for Kueue to
	// try, fewer nodes for the scheduler to score.
	if len(k.types) == 1 && !w.v.affinity {
		spec.NodeSelector = map[string]string{w.typeLabel: k.types[0]}
	} else {
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: w.typeLabel, Operator: corev1.NodeSelectorOpIn, Values: k.types}},
			}}},
		}}
	}
	spec.Tolerations = []corev1.Toleration{
		{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "accelerator.opendatahub.io/pool", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
	if w.v.kueue {
		labels["kueue.x-k8s.io/queue-name"] = w.queue[k.profile]
		if p := w.priority[k.ns]; p != "" {
			labels["kueue.x-k8s.io/priority-class"] = p
		}
	}
	if w.v.odh {
		annotations = map[string]string{hardwareProfileAnnotation: k.profile, hardwareProfileNSAnnotation: "opendatahub"}
	}
	return labels, annotations, spec
}

// job is a Job of five pods of kind k, named name: the queue and
// priority labels (by hand) or the profile's annotation (with accelc) on
// the Job as object gives them, its pods carrying only what identifies
// them and the annotations (the profile's, KWOK's completion).
func (w stormWriter) job(k stormPod, name string) *batchv1.Job {
	labels, annotations, spec := w.object(k)
	spec.RestartPolicy = corev1.RestartPolicyNever
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
		Labels:      map[string]string{"accelc.io/bench": k.profile},
		Annotations: controlplane.PodCompleteAfter(time.Hour),
	}, Spec: spec}
	if w.v.premutated {
		// Its pods as the mutators would leave them.
		tmpl.Labels = maps.Clone(labels)
	}
	maps.Copy(tmpl.Annotations, annotations)
	return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns, Labels: labels, Annotations: annotations},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](5), Completions: ptr.To[int32](5), Template: tmpl}}
}

// storm creates the pods (four fifths alone, one fifth through Jobs of
// five) from 16 clients, and waits until every one is bound.
func storm(b *testing.B, s *suite, v variant, w stormWriter, n int, types map[string]map[string]string, idle map[string]float64) clusterRun {
	ctx, cancel := context.WithTimeout(b.Context(), stormTimeout)
	defer cancel()

	var mu sync.Mutex
	created := map[string]time.Time{} // ns/name (a Job's pods: ns/job) → when the client sent it
	bound := map[string]time.Duration{}
	boundNode := map[string]string{}
	jobOf := map[string]string{} // a Job's pod → ns/job
	podKind := map[string]stormPod{}
	// An informer, not a bare watch: under the storm the API server closes
	// watchers that fall behind, and an informer lists and watches again.
	seen := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Spec.NodeName == "" {
			return
		}
		key := p.Namespace + "/" + p.Name
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if _, seen := bound[key]; seen {
			return
		}
		from, ok := created[key]
		if !ok {
			jobOf[key] = p.Namespace + "/" + p.Labels["job-name"]
			from, ok = created[jobOf[key]]
		}
		if ok {
			bound[key] = now.Sub(from)
			boundNode[key] = p.Spec.NodeName
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(s.client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = "accelc.io/bench"
	}))
	podInformer := factory.Core().V1().Pods().Informer()
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    seen,
		UpdateFunc: func(_, obj any) { seen(obj) },
	}); err != nil {
		b.Fatal(err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	workloads := watchWorkloads(ctx, s, v.kueue)

	// The work: n pods, a fifth of them in Jobs of five.
	type item struct {
		kind stormPod
		name string
		job  bool
	}
	var items []item
	r := clusterRun{variant: v.name, pods: n}
	for i := 0; i < n; {
		k := stormKinds[(i/10)%len(stormKinds)]
		for range k.share {
			if i >= n {
				break
			}
			if i%5 == 0 && r.jobs*25 < n && i+5 <= n {
				items = append(items, item{kind: k, name: fmt.Sprintf("job-%05d", i), job: true})
				i += 5
				r.jobs++
				continue
			}
			items = append(items, item{kind: k, name: fmt.Sprintf("pod-%05d", i)})
			i++
			r.solo++
		}
	}

	// What every component has spent and the API server has counted so
	// far, to subtract.
	pids := s.cp.PIDs()
	cpu0 := cpuTimes(pids)
	r.apiStart = residentRSS(pids["kube-apiserver"])
	// Each process's peak so far is its set-up's (CRDs and OpenAPI
	// rebuilt, nodes listed, the tree applied); from here on the peak is
	// the storm's.
	r.setupPeak = map[string]int64{}
	for name, pid := range pids {
		r.setupPeak[name] = peakRSS(pid)
		if err := resetPeakRSS(pid); err != nil {
			b.Fatalf("%s (pid %d): %v: the storm's peak memory cannot be told from its set-up's; resetting VmHWM needs Linux 4.0 or later and the right to write the process's /proc/PID/clear_refs (run the benchmark as the user that started the control plane)", name, pid, err)
		}
	}
	api0 := scrapeAPIMetrics(b, s)
	r.load[0] = loadAverage()
	begin := time.Now()
	profiled := profileStorm(b, s, v)
	stopProbe := startSpeedProbe()
	work := make(chan item)
	var wg sync.WaitGroup
	var errs []error
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				key := it.kind.ns + "/" + it.name
				mu.Lock()
				created[key] = time.Now()
				mu.Unlock()
				var err error
				if it.job {
					_, err = s.client.BatchV1().Jobs(it.kind.ns).Create(ctx, w.job(it.kind, it.name), metav1.CreateOptions{})
				} else {
					labels, annotations, spec := w.object(it.kind)
					meta := metav1.ObjectMeta{Name: it.name, Namespace: it.kind.ns, Labels: labels, Annotations: annotations}
					_, err = s.client.CoreV1().Pods(it.kind.ns).Create(ctx, &corev1.Pod{ObjectMeta: meta, Spec: spec}, metav1.CreateOptions{})
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("%s: %w", key, err))
					mu.Unlock()
				}
			}
		}()
	}
	for _, it := range items {
		podKind[it.kind.ns+"/"+it.name] = it.kind
		work <- it
	}
	close(work)
	wg.Wait()
	if len(errs) > 0 {
		b.Fatalf("%s: %d of %d creations failed, the first: %v", v.name, len(errs), len(items), errs[0])
	}
	for {
		mu.Lock()
		got := len(bound)
		mu.Unlock()
		if got >= n {
			break
		}
		if ctx.Err() != nil {
			b.Fatalf("%s: after %s only %d of %d pods bound", v.name, stormTimeout, got, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	r.wall = time.Since(begin)
	r.perSecond = float64(n) / r.wall.Seconds()
	r.load[1] = loadAverage()
	r.probe[1] = stopProbe()
	r.cpu, r.rss = map[string]time.Duration{}, map[string]int64{}
	for name, after := range cpuTimes(pids) {
		r.cpu[name] = after - cpu0[name]
		r.rss[name] = peakRSS(pids[name])
	}
	r.api = scrapeAPIMetrics(b, s).minus(api0)
	r.idle = idle
	r.wake, r.wakeCPU = wake(pids, idle)
	profiled() // after the counting: the last profile runs on a while
	cancel()   // the informers stop: their factories' Shutdown waits for them
	r.admitted, r.workloads = workloads()
	factory.Shutdown()
	r.stored = storedSizes(b, s, v.kueue)

	mu.Lock()
	defer mu.Unlock()
	for key, d := range bound {
		r.bound = append(r.bound, d)
		k, ok := podKind[key]
		if !ok {
			k = podKind[jobOf[key]] // a Job's pod: its Job's kind
		}
		typ := types[boundNode[key]][w.typeLabel]
		if len(k.types) == 0 || !slices.Contains(k.types, typ) {
			r.wrongType = append(r.wrongType, fmt.Sprintf("%s (%s) on %s (%q)", key, k.profile, boundNode[key], typ))
		}
	}
	if len(r.wrongType) > 0 {
		b.Errorf("%s: %d pods bound to a type their profile does not allow, e.g. %v", v.name, len(r.wrongType), r.wrongType[:min(5, len(r.wrongType))])
	}
	// Kueue admits a Job whole: one Workload for it, none for its pods.
	if v.kueue && r.workloads != r.jobs+r.solo {
		b.Errorf("%s: Kueue made %d Workloads for %d Jobs and %d pods made alone; want one each (%d): a Job whose pods Kueue queues one by one is not admitted as a gang",
			v.name, r.workloads, r.jobs, r.solo, r.jobs+r.solo)
	}
	return r
}

// profileStorm, when $ACCELC_BENCH_PROFILE names a folder, takes CPU
// profiles of kube-apiserver, Gatekeeper and Kueue over the whole storm, back to
// back, $ACCELC_BENCH_PROFILE_SECONDS (10) each, into
// <folder>/<variant>-<n>-<component>-<k>.pprof (n counting the variant's
// storms in this run, k the profile; `go tool pprof` merges them), and a
// heap profile of kube-apiserver as the storm starts
// (<variant>-<n>-kube-apiserver-heap.pprof) and every profile's length
// through it (<variant>-<n>-kube-apiserver-heap-<k>.pprof). The function
// it returns ends them, waiting for the last to finish.
func profileStorm(b *testing.B, s *suite, v variant) (stop func()) {
	dir := os.Getenv(benchProfileEnv)
	if dir == "" {
		return func() {}
	}
	seconds := envInt(b, benchProfileSecondsEnv, 10)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	n := 1
	for {
		if m, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("%s-%d-*.pprof", v.name, n))); len(m) == 0 {
			break
		}
		n++
	}
	timeout := time.Duration(seconds+60) * time.Second
	fetch := map[string]func(ctx context.Context) ([]byte, error){
		"kube-apiserver": func(ctx context.Context) ([]byte, error) {
			return s.client.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").Param("seconds", strconv.Itoa(seconds)).Timeout(timeout).DoRaw(ctx)
		},
	}
	// Gatekeeper's and Kueue's managers serve Go's profiles themselves.
	served := func(url string) func(ctx context.Context) ([]byte, error) {
		return func(ctx context.Context) ([]byte, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", url, seconds), nil)
			if err != nil {
				return nil, err
			}
			resp, err := (&http.Client{Timeout: timeout}).Do(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return nil, fmt.Errorf("%s", resp.Status)
			}
			return io.ReadAll(resp.Body)
		}
	}
	if s.gk != nil && s.gk.ProfilingURL() != "" {
		fetch["gatekeeper"] = served(s.gk.ProfilingURL())
	}
	if s.kq != nil && s.kq.ProfilingURL() != "" {
		fetch["kueue"] = served(s.kq.ProfilingURL())
	}
	// The API server's heap as the storm starts: what the cluster and the
	// stack hold before the first pod.
	if heap, err := s.client.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/heap").Param("gc", "1").DoRaw(b.Context()); err != nil {
		b.Logf("%s: no heap profile of kube-apiserver: %v", v.name, err)
	} else if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d-kube-apiserver-heap.pprof", v.name, n)), heap, 0o644); err != nil {
		b.Error(err)
	}
	// The API server's heap through the storm, one every profile's length,
	// as of its last collection (no forced one): what the peak is made of.
	fetch["kube-apiserver-heap"] = func(ctx context.Context) ([]byte, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(seconds) * time.Second):
		}
		return s.client.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/heap").Timeout(timeout).DoRaw(ctx)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for name, get := range fetch {
		wg.Go(func() {
			for k := 1; ; k++ {
				data, err := get(b.Context())
				if err != nil {
					b.Logf("%s: no CPU profile of %s: %v", v.name, name, err)
					return
				}
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%d-%s-%03d.pprof", v.name, n, name, k)), data, 0o644); err != nil {
					b.Error(err)
					return
				}
				select {
				case <-done:
					b.Logf("%s: %d profiles of %s, %d s apart, over the storm: %s", v.name, k, name, seconds, filepath.Join(dir, fmt.Sprintf("%s-%d-%s-[0-9]*.pprof", v.name, n, name)))
					return
				default:
				}
			}
		})
	}
	return func() {
		close(done)
		wg.Wait()
	}
}

// watchWorkloads follows Kueue's Workloads and returns a function that
// gives, per Workload, the time from its creation to its quota
// reservation, both as seen by the watch, and how many Workloads it saw
// (-1 without Kueue).
func watchWorkloads(ctx context.Context, s *suite, kueue bool) func() ([]time.Duration, int) {
	if !kueue {
		return func() ([]time.Duration, int) { return nil, -1 }
	}
	var mu sync.Mutex
	made, reserved := map[string]time.Time{}, map[string]time.Time{}
	seen := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		key := u.GetNamespace() + "/" + u.GetName()
		now := time.Now()
		mu.Lock()
		defer mu.Unlock()
		if _, ok := made[key]; !ok {
			made[key] = now
		}
		if c := condition(u, "QuotaReserved"); c != nil && c["status"] == "True" {
			if _, ok := reserved[key]; !ok {
				reserved[key] = now
			}
		}
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(s.dyn, 0)
	inf := factory.ForResource(kueueWorkloads).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) }}); err != nil {
		return func() ([]time.Duration, int) { return nil, -1 }
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return func() ([]time.Duration, int) {
		factory.Shutdown()
		mu.Lock()
		defer mu.Unlock()
		var out []time.Duration
		for k, at := range reserved {
			out = append(out, at.Sub(made[k]))
		}
		return out, len(made)
	}
}

// cpuTimes is each process's user and system CPU time so far.
func cpuTimes(pids map[string]int) map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis; utime and
		// stime are the 14th and 15th of the line.
		rest := string(data[strings.LastIndexByte(string(data), ')')+2:])
		f := strings.Fields(rest)
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		out[name] = time.Duration(u+st) * time.Second / 100 // USER_HZ
	}
	return out
}

// settle waits, up to two minutes, until the stack's CPU stops falling
// after its set-up, so that no variant's storm pays for its own
// installation: applying accelc's tree (a CRD Gatekeeper makes from the
// template, some 150 objects, their statuses) leaves the API server and
// the controller manager busy for a while, in a way an admin's cluster,
// set up long before its pods come, is not. It watches 5-second windows
// and stops at the first that is steady with the one before (steady).
func settle(b *testing.B, variant string, pids map[string]int) {
	const window, most = 5 * time.Second, 2 * time.Minute
	var rates []string
	start, prev := time.Now(), -1.0
	for time.Since(start) < most {
		now := stackRate(idleRates(pids, window))
		rates = append(rates, fmt.Sprintf("%.2f", now))
		if prev >= 0 && steady(prev, now) {
			b.Logf("%s: the stack settled %s after its set-up (CPU in cores, 5 s windows: %s)", variant, time.Since(start).Round(time.Second), strings.Join(rates, ", "))
			return
		}
		prev = now
	}
	b.Logf("%s: the stack's CPU was still not steady %s after its set-up (cores, 5 s windows: %s); the storm starts anyway", variant, most, strings.Join(rates, ", "))
}

// steady says two windows' CPU (cores) are alike: the second neither
// below 0.8 of the first (still falling) nor above 1.25 times it (a burst
// starting, which the idle watch that follows would take for the stack at
// rest); within 0.02 of a core of each other, alike whatever the ratio.
func steady(prev, now float64) bool {
	if math.Abs(now-prev) <= 0.02 {
		return true
	}
	return now >= 0.8*prev && now <= 1.25*prev
}

// wakeMost is the longest wake watches the stack after a storm.
const wakeMost = 3 * time.Minute

// wake watches the stack in 5-second windows from the storm's last
// binding until its CPU is back near its rate at rest (idle: within 1.25
// times it and 0.05 of a core), at most wakeMost, and returns how long
// that took and what each process spent.
func wake(pids map[string]int, idle map[string]float64) (time.Duration, map[string]time.Duration) {
	const window = 5 * time.Second
	rest := stackRate(idle)
	before, start := cpuTimes(pids), time.Now()
	for time.Since(start) < wakeMost {
		if stackRate(idleRates(pids, window)) <= 1.25*rest+0.05 {
			break
		}
	}
	after, took := cpuTimes(pids), time.Since(start)
	spent := map[string]time.Duration{}
	for name, c := range after {
		spent[name] = c - before[name]
	}
	return took, spent
}

// stackRate is the stack's rate, the components' summed (KWOK, the load,
// left out): cores.
func stackRate(rates map[string]float64) float64 {
	sum := 0.0
	for _, name := range stackComponents {
		sum += rates[name]
	}
	return sum
}

// idleRates watches the processes for d and returns the CPU each spent a
// second (CPU seconds per second).
func idleRates(pids map[string]int, d time.Duration) map[string]float64 {
	before, start := cpuTimes(pids), time.Now()
	time.Sleep(d)
	after, took := cpuTimes(pids), time.Since(start)
	out := map[string]float64{}
	for name, c := range after {
		out[name] = float64(c-before[name]) / float64(took)
	}
	return out
}

// startSpeedProbe measures the machine's pace until the function it
// returns is called, which returns the median: once a second, the CPU
// time one OS thread spends on probeWork, a fixed piece of work. CPU
// time, not wall time, so waiting for a core does not count; what does
// is how fast a core runs when it is had: a shared virtual machine's
// cores run the same work up to half as fast again from one minute to
// the next, and every component's CPU per pod with them.
func startSpeedProbe() (stop func() time.Duration) {
	done, out := make(chan struct{}), make(chan time.Duration, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var samples []float64
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if d, ok := probeWork(); ok && d > 0 {
				samples = append(samples, float64(d))
			}
			select {
			case <-done:
				out <- time.Duration(median(samples))
				return
			case <-tick.C:
			}
		}
	}()
	return func() time.Duration {
		close(done)
		return <-out
	}
}

// probeSink keeps probeWork's result alive.
var probeSink byte

// probeWork is the calling thread's CPU time for a fixed piece of work
// with no allocation, some of it branchy (sorting), some of it not
// (hashing): about 10 ms on this project's machine. The caller locks its
// goroutine to its thread (runtime.LockOSThread): both readings must be
// of one thread's clock.
func probeWork() (time.Duration, bool) {
	var data [1 << 14]uint32
	before, ok := threadCPU()
	x := uint32(2463534242)
	for range 8 {
		for i := range data {
			x ^= x << 13
			x ^= x >> 17
			x ^= x << 5
			data[i] = x
		}
		slices.Sort(data[:])
	}
	var block [1 << 12]byte
	for i := range block {
		block[i] = byte(data[i])
	}
	sum := sha256.Sum256(block[:])
	for range 255 {
		sum = sha256.Sum256(append(sum[:], block[:]...))
	}
	after, ok2 := threadCPU()
	probeSink ^= sum[0]
	return after - before, ok && ok2
}

// threadCPU is the calling OS thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID: the scheduler's own count, to the
// nanosecond; getrusage's is in clock ticks).
func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS(pid int) int64 { return procStatusKB(pid, "VmHWM:") }

// resetPeakRSS makes a process's peak resident set (VmHWM) its resident
// set now (Linux's clear_refs, value 5), so that what peakRSS reads
// next is the peak from now on.
func resetPeakRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// residentRSS is the process's resident set now (VmRSS), bytes.
func residentRSS(pid int) int64 { return procStatusKB(pid, "VmRSS:") }

// procStatusKB is the field of /proc/PID/status, in kB, as bytes; 0 where
// it cannot be read.
func procStatusKB(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// loadAverage is the machine's 1-minute load average (/proc/loadavg), 0
// where it cannot be read.
func loadAverage() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
