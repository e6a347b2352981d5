//go:build e2e

package e2e

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// stackComponents are the processes whose CPU a pod costs, in the order
// the tables list them; KWOK's simulated kubelets are the load, not the
// stack, and are listed apart.
var stackComponents = []string{"etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kueue", "gatekeeper"}

const loadComponent = "kwok"

// readVerbs are the API server's request verbs that write nothing.
var readVerbs = []string{"GET", "LIST", "WATCH", "CONNECT"}

// apiMetrics are the API server's counters this benchmark reads from its
// /metrics, keyed as the tables print them.
type apiMetrics struct {
	// requests: "VERB resource[.group][/subresource]" → requests
	// (apiserver_request_total).
	requests map[string]float64
	// refused: "VERB resource[.group][/subresource] CODE" → requests
	// answered with a code of 400 or more (a conflict, a throttle), which
	// a client retries: the same request paid twice.
	refused map[string]float64
	// etcd: "operation resource[.group]" → the API server's requests to
	// etcd (etcd_requests_total): an update is one per attempt, so more
	// updates than the writes that made them are conflicts inside the
	// API server (a stale cached object, tried again), which
	// apiserver_request_total does not show.
	etcd map[string]float64
	// webhooks: "webhook OPERATION" → calls
	// (apiserver_admission_webhook_admission_duration_seconds_count).
	webhooks map[string]float64
	// excluded: "webhook OPERATION" → requests the webhook's
	// matchConditions kept from it
	// (apiserver_admission_match_condition_exclusions_total).
	excluded map[string]float64
	// webhookSeconds: webhook → seconds spent calling it (the
	// histogram's _sum), and webhookBuckets its cumulative buckets: upper
	// bound in seconds → calls at most that long.
	webhookSeconds map[string]float64
	webhookBuckets map[string]map[float64]float64
}

// scrapeAPIMetrics reads the API server's /metrics as the admin.
func scrapeAPIMetrics(b *testing.B, s *suite) apiMetrics {
	raw, err := s.client.CoreV1().RESTClient().Get().AbsPath("/metrics").SetHeader("Accept", "text/plain").DoRaw(b.Context())
	if err != nil {
		b.Fatalf("reading the API server's /metrics: %v", err)
	}
	m, err := parseAPIMetrics(bytes.NewReader(raw))
	if err != nil {
		b.Fatalf("the API server's /metrics: %v", err)
	}
	return m
}

// parseAPIMetrics reads the counters apiMetrics holds from the text
// exposition format.
func parseAPIMetrics(in io.Reader) (apiMetrics, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(in)
	if err != nil {
		return apiMetrics{}, err
	}
	m := apiMetrics{
		requests: map[string]float64{}, refused: map[string]float64{}, etcd: map[string]float64{}, webhooks: map[string]float64{}, excluded: map[string]float64{},
		webhookSeconds: map[string]float64{}, webhookBuckets: map[string]map[float64]float64{},
	}
	for _, s := range families["apiserver_request_total"].GetMetric() {
		l := map[string]string{}
		for _, p := range s.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		res := l["resource"]
		if res == "" {
			continue // a non-resource URL: /metrics, /healthz
		}
		if l["group"] != "" {
			res += "." + l["group"]
		}
		if l["subresource"] != "" {
			res += "/" + l["subresource"]
		}
		m.requests[l["verb"]+" "+res] += s.GetCounter().GetValue()
		if code, err := strconv.Atoi(l["code"]); err == nil && code >= 400 {
			m.refused[l["verb"]+" "+res+" "+l["code"]] += s.GetCounter().GetValue()
		}
	}
	for _, s := range families["etcd_requests_total"].GetMetric() {
		l := map[string]string{}
		for _, p := range s.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		res := l["resource"]
		if l["group"] != "" {
			res += "." + l["group"]
		}
		m.etcd[l["operation"]+" "+res] += s.GetCounter().GetValue()
	}
	for _, s := range families["apiserver_admission_webhook_admission_duration_seconds"].GetMetric() {
		l := map[string]string{}
		for _, p := range s.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		h := s.GetHistogram()
		m.webhooks[l["name"]+" "+l["operation"]] += float64(h.GetSampleCount())
		m.webhookSeconds[l["name"]] += h.GetSampleSum()
		if m.webhookBuckets[l["name"]] == nil {
			m.webhookBuckets[l["name"]] = map[float64]float64{}
		}
		for _, bk := range h.GetBucket() {
			m.webhookBuckets[l["name"]][bk.GetUpperBound()] += float64(bk.GetCumulativeCount())
		}
	}
	for _, s := range families["apiserver_admission_match_condition_exclusions_total"].GetMetric() {
		l := map[string]string{}
		for _, p := range s.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		if l["kind"] != "" && l["kind"] != "webhook" {
			continue // a ValidatingAdmissionPolicy's
		}
		m.excluded[l["name"]+" "+l["operation"]] += s.GetCounter().GetValue()
	}
	return m, nil
}

// minus is what the counters grew by since before.
func (m apiMetrics) minus(before apiMetrics) apiMetrics {
	sub := func(a, b map[string]float64) map[string]float64 {
		out := map[string]float64{}
		for k, v := range a {
			if d := v - b[k]; d > 0 {
				out[k] = d
			}
		}
		return out
	}
	out := apiMetrics{
		requests: sub(m.requests, before.requests), refused: sub(m.refused, before.refused), etcd: sub(m.etcd, before.etcd), webhooks: sub(m.webhooks, before.webhooks),
		excluded: sub(m.excluded, before.excluded), webhookSeconds: sub(m.webhookSeconds, before.webhookSeconds),
		webhookBuckets: map[string]map[float64]float64{},
	}
	for name, buckets := range m.webhookBuckets {
		out.webhookBuckets[name] = map[float64]float64{}
		for le, n := range buckets {
			out.webhookBuckets[name][le] = n - before.webhookBuckets[name][le]
		}
	}
	return out
}

// writes are the requests that write (every verb but readVerbs).
func (m apiMetrics) writes() map[string]float64 {
	out := map[string]float64{}
	for k, v := range m.requests {
		verb, _, _ := strings.Cut(k, " ")
		if !slices.Contains(readVerbs, verb) {
			out[k] = v
		}
	}
	return out
}

// lists are the LISTs and WATCHes the API server answered, by resource:
// a client that falls behind a watch under load is cut off and lists
// again (its informer's relist), which costs the API server the whole
// collection.
func (m apiMetrics) lists() map[string]float64 {
	out := map[string]float64{}
	for k, v := range m.requests {
		if verb, _, _ := strings.Cut(k, " "); verb == "LIST" || verb == "WATCH" {
			out[k] = v
		}
	}
	return out
}

// webhookCalls are the webhook's calls, every operation.
func (m apiMetrics) webhookCalls(name string) float64 {
	var n float64
	for k, v := range m.webhooks {
		if w, _, _ := strings.Cut(k, " "); w == name {
			n += v
		}
	}
	return n
}

// webhookP99 is the upper bound of the histogram bucket holding the
// webhook's 99th percentile call, in seconds (+Inf past the last).
func (m apiMetrics) webhookP99(name string) float64 {
	total := m.webhookCalls(name)
	bounds := slices.Sorted(maps.Keys(m.webhookBuckets[name]))
	for _, le := range bounds {
		if m.webhookBuckets[name][le] >= 0.99*total {
			return le
		}
	}
	return math.Inf(1)
}

func sum(m map[string]float64) float64 {
	var n float64
	for _, v := range m {
		n += v
	}
	return n
}

// stackCPU is the CPU every component of the stack spent, KWOK aside.
func (r clusterRun) stackCPU() time.Duration {
	var d time.Duration
	for _, name := range stackComponents {
		d += r.cpu[name]
	}
	return d
}

// busyCPU is stackCPU less what each component would have spent at rest
// over the storm's length (its idle rate times the wall time; none below
// zero): the CPU the pods cost, not the clock.
func (r clusterRun) busyCPU() time.Duration {
	var d time.Duration
	for _, name := range stackComponents {
		d += max(0, r.cpu[name]-time.Duration(r.idle[name]*float64(r.wall)))
	}
	return d
}

// wokenCPU is busyCPU with the storm's wake: each component's CPU over
// the storm and the wake after it, less its idle rate times both (none
// below zero): all the work the pods cost, whenever the stack did it.
func (r clusterRun) wokenCPU() time.Duration {
	var d time.Duration
	for _, name := range stackComponents {
		d += max(0, r.cpu[name]+r.wakeCPU[name]-time.Duration(r.idle[name]*float64(r.wall+r.wake)))
	}
	return d
}

// perPod is CPU time per pod, in milliseconds.
func (r clusterRun) perPod(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000 / float64(r.pods)
}

func (r clusterRun) report(b *testing.B) {
	b.ReportMetric(r.perSecond, "pods-bound/s")
	b.ReportMetric(float64(pct(r.bound, 50).Milliseconds()), "p50-bound-ms")
	b.ReportMetric(float64(pct(r.bound, 99).Milliseconds()), "p99-bound-ms")
	b.ReportMetric(r.perPod(r.stackCPU()), "cpu-ms/pod")
	b.ReportMetric(r.perPod(r.busyCPU()), "cpu-ms/pod-over-idle")
	b.ReportMetric(r.perPod(r.wokenCPU()), "cpu-ms/pod-over-idle-with-wake")
	b.ReportMetric(r.wake.Seconds(), "wake-s")
	b.ReportMetric(sum(r.api.writes())/float64(r.pods), "api-writes/pod")
	b.ReportMetric(sum(r.api.webhooks)/float64(r.pods), "webhook-calls/pod")
	b.ReportMetric(float64(r.rss["kube-apiserver"])/(1<<20), "apiserver-peak-MiB")
	b.ReportMetric(float64(r.setupPeak["kube-apiserver"])/(1<<20), "apiserver-setup-peak-MiB")
	b.ReportMetric(r.probe[1].Seconds()*1000, "pace-ms")
	b.ReportMetric(r.load[1], "load1")
	b.ReportMetric(float64(r.stored.pod), "pod-bytes")
	if r.workloads >= 0 {
		b.ReportMetric(float64(r.stored.workload), "workload-bytes")
		b.ReportMetric(float64(r.workloads), "workloads")
		b.ReportMetric(float64(pct(r.admitted, 50).Milliseconds()), "p50-kueue-admit-ms")
		b.ReportMetric(float64(pct(r.admitted, 99).Milliseconds()), "p99-kueue-admit-ms")
	}
	var parts []string
	for _, name := range append(slices.Clone(stackComponents), loadComponent) {
		if cpu, ok := r.cpu[name]; ok {
			parts = append(parts, fmt.Sprintf("%s %.1f ms/pod, %d MiB peak (set-up %d)", name, r.perPod(cpu), r.rss[name]>>20, r.setupPeak[name]>>20))
		}
	}
	b.Logf("%s: %d pods (%d alone, %d Jobs of five) on %d nodes in %s, load %.2f→%.2f: %.1f bound/s, create→bound p50 %s p99 %s; %.1f ms CPU/pod (%.1f over the idle stack's; %.1f with the %s wake after the last binding); %.1f API writes/pod, %.1f webhook calls/pod; Workloads %d; stored as JSON: a pod %d bytes, a Workload %d; %s",
		r.variant, r.pods, r.solo, r.jobs, r.nodes, r.wall.Round(time.Millisecond), r.load[0], r.load[1], r.perSecond,
		pct(r.bound, 50).Round(time.Millisecond), pct(r.bound, 99).Round(time.Millisecond), r.perPod(r.stackCPU()), r.perPod(r.busyCPU()),
		r.perPod(r.wokenCPU()), r.wake.Round(time.Second), sum(r.api.writes())/float64(r.pods), sum(r.api.webhooks)/float64(r.pods), r.workloads, r.stored.pod, r.stored.workload, strings.Join(parts, "; "))
	// Every request this storm's API server answered, reads too, by verb
	// and resource, and every request it made to etcd: the tables give
	// medians, and two storms of one variant can differ in what they made
	// the API server do.
	b.Logf("%s: API requests a pod (apiserver_request_total, rows of 0.01 or more): %s", r.variant, r.perPodRows(r.api.requests))
	b.Logf("%s: the API server's requests to etcd a pod (etcd_requests_total: an update per attempt, a get per object read past the watch cache; rows of 0.01 or more): %s", r.variant, r.perPodRows(r.api.etcd))
	var refused []string
	for _, k := range slices.Sorted(maps.Keys(r.api.refused)) {
		refused = append(refused, fmt.Sprintf("%s %.0f", k, r.api.refused[k]))
	}
	if len(refused) > 0 {
		b.Logf("%s: API requests refused (code 400 or more; a client retries them): %s", r.variant, strings.Join(refused, ", "))
	}
}

// perPodRows lists counts a pod, the largest first, rows of 0.01 a pod
// or more: "KEY 1.23, …".
func (r clusterRun) perPodRows(counts map[string]float64) string {
	var rows []string
	for _, k := range slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b))
	}) {
		if n := counts[k] / float64(r.pods); n >= 0.01 {
			rows = append(rows, fmt.Sprintf("%s %.2f", k, n))
		}
	}
	return strings.Join(rows, ", ")
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

// median is the middle of vs (the mean of the two middle ones), 0 when
// empty.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printClusterTable writes the benchmark's figures as Markdown tables: one
// row per variant with every round's figure in run order, then where the
// cost goes (medians over the rounds).
func printClusterTable(w io.Writer, variants []variant, rounds int, runs []clusterRun) {
	if len(runs) == 0 {
		return
	}
	byVariant := map[string][]clusterRun{}
	for _, r := range runs {
		byVariant[r.variant] = append(byVariant[r.variant], r)
	}
	var names []string
	for _, v := range variants {
		if len(byVariant[v.name]) > 0 {
			names = append(names, v.name)
		}
	}
	first := runs[0]
	fmt.Fprintf(w, "\nBenchmarkCluster: %d KWOK nodes, %d GPU pods (%d made alone, %d in Jobs of five), %d round(s), the variants interleaved in each; kube-scheduler at its default client rate limit (%s)\n\n",
		first.nodes, first.pods, first.solo, first.jobs, rounds, schedulerClientLimit)
	for _, v := range variants {
		if len(byVariant[v.name]) > 0 {
			fmt.Fprintf(w, "- %s: %s\n", v.name, v.about)
		}
	}
	list := func(rs []clusterRun, f func(clusterRun) string) string {
		var parts []string
		for _, r := range rs {
			parts = append(parts, f(r))
		}
		return strings.Join(parts, ", ")
	}
	secs := func(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }
	fmt.Fprintln(w, "\n| variant | pods bound/s | create→bound p50 (s) | p99 (s) | CPU ms/pod, all components | … over the idle stack's | … with the wake (s) | API writes/pod | webhook calls/pod | API server MiB: set-up's peak; before the storm → the storm's peak | Workloads | load 1 min, start→end |")
	fmt.Fprintln(w, "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
	for _, name := range names {
		rs := byVariant[name]
		label := name
		if name == "bare" {
			label += fmt.Sprintf(" (kube-scheduler's client limit %s)", schedulerClientLimit)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", label,
			list(rs, func(r clusterRun) string { return fmt.Sprintf("%.1f", r.perSecond) }),
			list(rs, func(r clusterRun) string { return secs(pct(r.bound, 50)) }),
			list(rs, func(r clusterRun) string { return secs(pct(r.bound, 99)) }),
			list(rs, func(r clusterRun) string { return fmt.Sprintf("%.0f", r.perPod(r.stackCPU())) }),
			list(rs, func(r clusterRun) string { return fmt.Sprintf("%.0f", r.perPod(r.busyCPU())) }),
			list(rs, func(r clusterRun) string { return fmt.Sprintf("%.0f (%.0f)", r.perPod(r.wokenCPU()), r.wake.Seconds()) }),
			list(rs, func(r clusterRun) string { return fmt.Sprintf("%.1f", sum(r.api.writes())/float64(r.pods)) }),
			list(rs, func(r clusterRun) string { return fmt.Sprintf("%.1f", sum(r.api.webhooks)/float64(r.pods)) }),
			list(rs, func(r clusterRun) string {
				return fmt.Sprintf("%d; %d→%d", r.setupPeak["kube-apiserver"]>>20, r.apiStart>>20, r.rss["kube-apiserver"]>>20)
			}),
			list(rs, func(r clusterRun) string {
				if r.workloads < 0 {
					return "—"
				}
				return fmt.Sprintf("%d of %d", r.workloads, r.jobs+r.solo)
			}),
			list(rs, func(r clusterRun) string { return fmt.Sprintf("%.1f→%.1f", r.load[0], r.load[1]) }))
	}

	// The machine's pace: how long the probe's fixed work took, and the
	// figures each storm would have had at the run's median pace.
	var paces []float64
	for _, r := range runs {
		if r.probe[1] > 0 {
			paces = append(paces, float64(r.probe[1]))
		}
	}
	if ref := median(paces); ref > 0 {
		// A storm's CPU per pod times scale is its figure at the run's
		// median pace (its pods per second, divided by it).
		scale := func(r clusterRun) float64 {
			if r.probe[1] <= 0 {
				return 1
			}
			return ref / float64(r.probe[1])
		}
		fmt.Fprintf(w, "\nThe machine's pace: the CPU time one thread spends on a fixed piece of work (startSpeedProbe, median of one a second), at rest before each storm → during it; and each storm's figures brought to the run's median pace, %.2f ms (CPU per pod times the median over the storm's pace, pods per second times the storm's pace over the median)\n", ref/1e6)
		fmt.Fprintln(w, "\n| variant | pace, ms (at rest → storm) | CPU ms/pod at the median pace | … over the idle stack's | pods bound/s at the median pace |")
		fmt.Fprintln(w, "| --- | --- | --- | --- | --- |")
		for _, name := range names {
			rs := byVariant[name]
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", name,
				list(rs, func(r clusterRun) string {
					return fmt.Sprintf("%.2f→%.2f", r.probe[0].Seconds()*1000, r.probe[1].Seconds()*1000)
				}),
				list(rs, func(r clusterRun) string { return fmt.Sprintf("%.0f", r.perPod(r.stackCPU())*scale(r)) }),
				list(rs, func(r clusterRun) string { return fmt.Sprintf("%.0f", r.perPod(r.busyCPU())*scale(r)) }),
				list(rs, func(r clusterRun) string { return fmt.Sprintf("%.1f", r.perSecond/scale(r)) }))
		}
	}

	// A table of rows by variant, each cell the median over the rounds of
	// f(run, row), rows where some variant's median reaches floor.
	matrix := func(title, rowHead string, rows []string, f func(clusterRun, string) (float64, bool), format string, floor float64) {
		type cell struct {
			v  float64
			ok bool
		}
		cells := map[string]map[string]cell{}
		var kept []string
		for _, row := range rows {
			cells[row] = map[string]cell{}
			keep := false
			for _, name := range names {
				var vs []float64
				for _, r := range byVariant[name] {
					if v, ok := f(r, row); ok {
						vs = append(vs, v)
					}
				}
				c := cell{median(vs), len(vs) > 0}
				cells[row][name] = c
				keep = keep || c.ok && c.v >= floor
			}
			if keep {
				kept = append(kept, row)
			}
		}
		if len(kept) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s\n\n| %s | %s |\n|%s\n", title, rowHead, strings.Join(names, " | "), strings.Repeat(" --- |", len(names)+1))
		for _, row := range kept {
			var vals []string
			for _, name := range names {
				c := cells[row][name]
				if !c.ok {
					vals = append(vals, "—")
					continue
				}
				vals = append(vals, fmt.Sprintf(format, c.v))
			}
			fmt.Fprintf(w, "| %s | %s |\n", row, strings.Join(vals, " | "))
		}
	}

	components := append(slices.Clone(stackComponents), loadComponent)
	matrix("CPU per pod by component, ms (median of the rounds; kwok, the simulated kubelets, is the load and not in the total)", "component", components,
		func(r clusterRun, c string) (float64, bool) {
			d, ok := r.cpu[c]
			return r.perPod(d), ok
		}, "%.1f", 0)
	matrix("CPU at rest by component, ms a second (the stack idle before the storm, nodes Ready; median of the rounds): what a longer storm charges to its pods by the clock alone", "component", components,
		func(r clusterRun, c string) (float64, bool) {
			v, ok := r.idle[c]
			return v * 1000, ok
		}, "%.1f", 0)
	matrix("Peak resident memory during the storm by component, MiB (VmHWM, reset as the storm starts; median of the rounds)", "component", components,
		func(r clusterRun, c string) (float64, bool) {
			n, ok := r.rss[c]
			return float64(n >> 20), ok
		}, "%.0f", 0)
	matrix("Peak resident memory before the storm by component, MiB (VmHWM through start-up, nodes made Ready, the stack installed and settled; median of the rounds)", "component", components,
		func(r clusterRun, c string) (float64, bool) {
			n, ok := r.setupPeak[c]
			return float64(n >> 20), ok
		}, "%.0f", 0)

	keys := func(f func(apiMetrics) map[string]float64) []string {
		set := map[string]bool{}
		for _, r := range runs {
			for k := range f(r.api) {
				set[k] = true
			}
		}
		return slices.Sorted(maps.Keys(set))
	}
	perPodOf := func(f func(apiMetrics) map[string]float64) func(clusterRun, string) (float64, bool) {
		return func(r clusterRun, k string) (float64, bool) { return f(r.api)[k] / float64(r.pods), true }
	}
	writes := func(m apiMetrics) map[string]float64 { return m.writes() }
	matrix("API server writes per pod by verb and resource (apiserver_request_total; the benchmark's own creates included: one per pod, one per Job; rows of 0.01 a pod or more)",
		"verb resource", keys(writes), perPodOf(writes), "%.2f", 0.01)
	lists := func(m apiMetrics) map[string]float64 { return m.lists() }
	matrix("API server LISTs and WATCHes over the storm by resource, counts (apiserver_request_total; an informer cut off from a watch it fell behind lists again; rows of 5 or more)",
		"verb resource", keys(lists), func(r clusterRun, k string) (float64, bool) { return r.api.lists()[k], true }, "%.0f", 5)
	hooks := func(m apiMetrics) map[string]float64 { return m.webhooks }
	matrix("Admission webhook calls per pod by webhook and operation (apiserver_admission_webhook_admission_duration_seconds_count; the metric names no resource)",
		"webhook operation", keys(hooks), perPodOf(hooks), "%.2f", 0.01)
	excluded := func(m apiMetrics) map[string]float64 { return m.excluded }
	matrix("Requests a webhook's matchConditions kept from it, per pod (apiserver_admission_match_condition_exclusions_total)",
		"webhook operation", keys(excluded), perPodOf(excluded), "%.2f", 0.01)
	var webhooks []string
	for _, k := range keys(hooks) {
		name, _, _ := strings.Cut(k, " ")
		if !slices.Contains(webhooks, name) {
			webhooks = append(webhooks, name)
		}
	}
	matrix("Webhook latency, mean ms (the API server's wait for each call)", "webhook", webhooks,
		func(r clusterRun, name string) (float64, bool) {
			n := r.api.webhookCalls(name)
			return 1000 * r.api.webhookSeconds[name] / n, n > 0
		}, "%.1f", 0)
	matrix("Webhook latency, p99 ms (the upper bound of the histogram bucket holding it)", "webhook", webhooks,
		func(r clusterRun, name string) (float64, bool) {
			return 1000 * r.api.webhookP99(name), r.api.webhookCalls(name) > 0
		}, "≤ %.0f", 0)
	fmt.Fprintln(w)
}
