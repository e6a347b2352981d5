//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/internal/nodegen"
)

// The cluster benchmark's size: $ACCELC_BENCH_SCALE times the hetero-prod
// example's 29 nodes (35: 1,015 nodes), and $ACCELC_BENCH_PODS GPU pods
// (3,000), a fifth of them made by Jobs of five.
const (
	benchScaleEnv = "ACCELC_BENCH_SCALE"
	benchPodsEnv  = "ACCELC_BENCH_PODS"
	stormTimeout  = 15 * time.Minute
)

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
	pods          int
	wall          time.Duration
	bound         []time.Duration // create → bound, per pod
	admitted      []time.Duration // Workload made → quota reserved (Kueue)
	cpu           map[string]time.Duration
	rss           map[string]int64 // peak resident set, bytes
	wrongType     []string
	perSecond     float64
	kueueWorkload int
}

// BenchmarkCluster runs a storm of GPU pods and Jobs on the whole stack
// at 1,000 nodes, twice: bare (etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and KWOK's kubelets, the pods
// written with their type's node selector as a team would without
// accelc) and with accelc (the same, plus Gatekeeper and Kueue with the
// hetero-prod tree applied, its quotas scaled to the fleet, the pods
// naming their profile by ODH's annotation). It reports create→bound
// latency p50/p99 and pods bound per second for each and their ratio,
// Kueue's admission latency, the API server's and Gatekeeper's CPU and
// peak memory, and fails when any pod is bound to a type its profile does
// not allow. One iteration is one storm: run it with -benchtime=1x
// (`make bench-cluster`).
func BenchmarkCluster(b *testing.B) {
	scale := envInt(b, benchScaleEnv, 35)
	pods := envInt(b, benchPodsEnv, 3000)
	var bare, withAccelc clusterRun
	b.Run("bare", func(b *testing.B) {
		for range b.N {
			bare = runStorm(b, scale, pods, false)
		}
		bare.report(b)
	})
	b.Run("accelc", func(b *testing.B) {
		for range b.N {
			withAccelc = runStorm(b, scale, pods, true)
		}
		withAccelc.report(b)
		if bare.perSecond > 0 {
			ratio := withAccelc.perSecond / bare.perSecond
			b.ReportMetric(ratio, "throughput-ratio")
			b.ReportMetric(float64(pct(withAccelc.bound, 50))/float64(pct(bare.bound, 50)), "p50-ratio")
			b.Logf("with accelc / bare: %.2f× the pods bound per second, p50 %.2f×, p99 %.2f×", ratio,
				float64(pct(withAccelc.bound, 50))/float64(pct(bare.bound, 50)), float64(pct(withAccelc.bound, 99))/float64(pct(bare.bound, 99)))
		}
	})
}

func (r clusterRun) report(b *testing.B) {
	b.ReportMetric(float64(pct(r.bound, 50).Milliseconds()), "p50-bound-ms")
	b.ReportMetric(float64(pct(r.bound, 99).Milliseconds()), "p99-bound-ms")
	b.ReportMetric(r.perSecond, "pods-bound/s")
	if len(r.admitted) > 0 {
		b.ReportMetric(float64(pct(r.admitted, 50).Milliseconds()), "p50-kueue-admit-ms")
		b.ReportMetric(float64(pct(r.admitted, 99).Milliseconds()), "p99-kueue-admit-ms")
	}
	for _, name := range []string{"kube-apiserver", "gatekeeper"} {
		if cpu, ok := r.cpu[name]; ok {
			b.ReportMetric(cpu.Seconds(), name+"-cpu-s")
			b.ReportMetric(float64(r.rss[name])/(1<<20), name+"-peak-MiB")
		}
	}
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(r.cpu)) {
		parts = append(parts, fmt.Sprintf("%s %.1fs CPU, %d MiB peak", name, r.cpu[name].Seconds(), r.rss[name]>>20))
	}
	b.Logf("%d pods in %s: %.1f bound/s, create→bound p50 %s p99 %s; Kueue %d Workloads, admission p50 %s p99 %s; %s",
		r.pods, r.wall.Round(time.Millisecond), r.perSecond, pct(r.bound, 50), pct(r.bound, 99),
		r.kueueWorkload, pct(r.admitted, 50), pct(r.admitted, 99), strings.Join(parts, "; "))
}

// pct is the p-th percentile of ds, 0 when empty.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	if i > 0 {
		i--
	}
	return s[min(i, len(s)-1)]
}

// runStorm starts a stack, fills it with nodes, runs the storm and
// measures it.
func runStorm(b *testing.B, scale, pods int, accelc bool) clusterRun {
	b.StopTimer()
	s := newSuite(b)
	s.cp = controlplane.Start(b, controlplane.WithScheduler(), controlplane.WithControllerManager())
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
	// Rendered for both stacks: the bare one takes the type label from it.
	out := s.render(b, cluster, "bench")
	c := &clusterUnderTest{example: cluster, out: out, objs: readTree(b, out), applied: appliedFolders(b, out)}
	c.read(b)
	typeLabel := c.typeLabel
	if accelc {
		s.gk = s.cp.StartGatekeeper(b)
		s.installCRDs(b)
		fragment, namespaces := kueueConfig(b, c.objs)
		s.cp.StartKueue(b, controlplane.KueueOptions{Namespaces: namespaces, Fragment: []byte(fragment)})
	}
	s.kwok = s.cp.StartKWOK(b)
	// The type label nfd-master would stamp (the story proves it does),
	// set on the nodes as they are made.
	extra := nodeTypeLabels(b, s, cluster, typeLabel)
	begin := time.Now()
	names := s.createNodes(b, inv, extra)
	st := &story{s: s}
	st.waitNodesReady(b, names)
	b.Logf("%d nodes Ready under KWOK in %s", len(names), time.Since(begin).Round(time.Millisecond))
	if accelc {
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
		for _, r := range c.objs {
			if r.obj.GetKind() == "ClusterQueue" {
				if err := s.waitActive(b.Context(), r.obj); err != nil {
					b.Fatalf("ClusterQueue %s never Active: %v", r.obj.GetName(), err)
				}
			}
		}
	} else {
		s.ensureNamespaces(b, "ml-research", "serving-prod", "ds-notebooks")
	}
	b.StartTimer()
	r := storm(b, s, pods, accelc, typeLabel, extra)
	b.StopTimer()
	return r
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

// storm creates the pods (four fifths bare, one fifth through Jobs of
// five) from 16 clients, and waits until every one is bound.
func storm(b *testing.B, s *suite, n int, accelc bool, typeLabel string, types map[string]map[string]string) clusterRun {
	ctx, cancel := context.WithTimeout(b.Context(), stormTimeout)
	defer cancel()
	cpu0 := cpuTimes(s.cp.PIDs())

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
	wlTimes := watchWorkloads(ctx, s, accelc)

	// The work: n pods, a fifth of them in Jobs of five.
	type item struct {
		kind stormPod
		name string
		job  bool
	}
	var items []item
	for i, jobs := 0, 0; i < n; {
		k := stormKinds[(i/10)%len(stormKinds)]
		for range k.share {
			if i >= n {
				break
			}
			if i%5 == 0 && jobs*25 < n && i+5 <= n {
				items = append(items, item{kind: k, name: fmt.Sprintf("job-%05d", i), job: true})
				i += 5
				jobs++
				continue
			}
			items = append(items, item{kind: k, name: fmt.Sprintf("pod-%05d", i)})
			i++
		}
	}
	begin := time.Now()
	work := make(chan item)
	var wg sync.WaitGroup
	var errs []error
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				spec := stormSpec(it.kind, accelc, typeLabel)
				meta := metav1.ObjectMeta{Name: it.name, Namespace: it.kind.ns, Labels: map[string]string{"accelc.io/bench": it.kind.profile}}
				if accelc {
					meta.Annotations = map[string]string{hardwareProfileAnnotation: it.kind.profile, hardwareProfileNSAnnotation: "opendatahub"}
				}
				key := it.kind.ns + "/" + it.name
				mu.Lock()
				created[key] = time.Now()
				mu.Unlock()
				var err error
				if it.job {
					spec.RestartPolicy = corev1.RestartPolicyNever
					tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: meta.Labels, Annotations: controlplane.PodCompleteAfter(time.Hour)}, Spec: spec}
					for k, v := range meta.Annotations {
						tmpl.Annotations[k] = v
					}
					_, err = s.client.BatchV1().Jobs(it.kind.ns).Create(ctx, &batchv1.Job{ObjectMeta: meta,
						Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](5), Completions: ptr.To[int32](5), Template: tmpl}}, metav1.CreateOptions{})
				} else {
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
		b.Fatalf("%d of %d creations failed, the first: %v", len(errs), len(items), errs[0])
	}
	for {
		mu.Lock()
		got := len(bound)
		mu.Unlock()
		if got >= n {
			break
		}
		if ctx.Err() != nil {
			b.Fatalf("after %s only %d of %d pods bound", stormTimeout, got, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	r := clusterRun{pods: n, wall: time.Since(begin)}
	r.perSecond = float64(n) / r.wall.Seconds()
	cancel()
	factory.Shutdown()

	mu.Lock()
	defer mu.Unlock()
	for key, d := range bound {
		r.bound = append(r.bound, d)
		k, ok := podKind[key]
		if !ok {
			k = podKind[jobOf[key]] // a Job's pod: its Job's kind
		}
		typ := types[boundNode[key]][typeLabel]
		if len(k.types) == 0 || !slices.Contains(k.types, typ) {
			r.wrongType = append(r.wrongType, fmt.Sprintf("%s (%s) on %s (%q)", key, k.profile, boundNode[key], typ))
		}
	}
	if len(r.wrongType) > 0 {
		b.Errorf("%d pods bound to a type their profile does not allow, e.g. %v", len(r.wrongType), r.wrongType[:min(5, len(r.wrongType))])
	}
	r.admitted = wlTimes()
	r.kueueWorkload = len(r.admitted)
	r.cpu, r.rss = map[string]time.Duration{}, map[string]int64{}
	pids := s.cp.PIDs()
	for name, after := range cpuTimes(pids) {
		r.cpu[name] = after - cpu0[name]
		r.rss[name] = peakRSS(pids[name])
	}
	return r
}

// stormSpec is the pod a team writes: with accelc, one GPU and the
// profile's annotation (the policies do the rest); bare, the type's node
// selector and the GPU taint's toleration, as teams wrote pods before.
func stormSpec(k stormPod, accelc bool, typeLabel string) corev1.PodSpec {
	spec := corev1.PodSpec{Containers: []corev1.Container{{
		Name: "main", Image: "registry.example/bench:1",
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}},
	}}}
	if !accelc {
		spec.NodeSelector = map[string]string{typeLabel: k.types[0]}
		spec.Tolerations = []corev1.Toleration{
			{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			{Key: "accelerator.opendatahub.io/pool", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		}
	}
	return spec
}

// watchWorkloads follows Kueue's Workloads and returns a function that
// gives, per Workload, the time from its creation to its quota
// reservation, both as seen by the watch.
func watchWorkloads(ctx context.Context, s *suite, accelc bool) func() []time.Duration {
	if !accelc {
		return func() []time.Duration { return nil }
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
		return func() []time.Duration { return nil }
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return func() []time.Duration {
		factory.Shutdown()
		mu.Lock()
		defer mu.Unlock()
		var out []time.Duration
		for k, at := range reserved {
			out = append(out, at.Sub(made[k]))
		}
		return out
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

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
