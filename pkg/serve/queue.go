package serve

// What waits in each profile's Kueue queue, and for about how long, from
// Kueue's Workloads.

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/accelc/accelc/internal/words"
	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
)

// Workload is a Kueue Workload as serve keeps it: where it queues and
// when it was admitted and finished, nothing of what it runs.
type Workload struct {
	Namespace, Name string
	// Queue is its spec.queueName: the LocalQueue, which accelc names
	// after the profile.
	Queue string
	// Inactive: spec.active is false, so it waits for nobody.
	Inactive bool
	// Admitted and Finished are when the conditions of those types became
	// True; zero while they are not.
	Admitted, Finished time.Time
}

// Queues is a Source that also gives the cluster's Kueue Workloads; a
// server over one says, per profile that schedules through Kueue, what
// waits and for about how long.
type Queues interface {
	// Workloads are the Workloads now, and why they cannot be read (""
	// when they can).
	Workloads() ([]Workload, string)
}

// Waiting is what waits for a profile in Kueue's queues, beside what it
// has available.
type Waiting struct {
	// Pending and Running count the Workloads of the profile's LocalQueue
	// in its teams' namespaces: not admitted (nor finished nor
	// deactivated), and admitted and not finished. Absent when Kueue's
	// Workloads cannot be read.
	Pending *int `json:"pending,omitempty"`
	Running *int `json:"running,omitempty"`
	// Estimate is how long a workload queued now would wait before it is
	// admitted.
	Estimate WaitEstimate `json:"estimate"`
}

// WaitEstimate is a number of minutes and the method that gave it, or
// why there is none.
type WaitEstimate struct {
	Minutes *int   `json:"minutes,omitempty"`
	Method  string `json:"method,omitempty"`
	Unknown string `json:"unknown,omitempty"`
}

// maxRuns bounds the finished runs the estimate reads: the most recent.
const maxRuns = 20

// waiting says, for each profile that schedules through Kueue, what is
// pending and running in its LocalQueue and how long a workload queued
// now would wait. It reads every workload once.
//
// The estimate: a profile's finished runs (Admitted to Finished, the
// last maxRuns) give a typical run, their median D; each running workload
// frees its place after D less its age (at least 0), each place then runs
// the pending workloads one after another, D each, in order; a workload
// queued now gets the place that frees after all of those. Every
// workload counts as one run, whatever it asks for.
func waiting(doc *catalogdoc.Document, m *compile.Model, wls []Workload, why string, now time.Time) map[string]*Waiting {
	// namespace and queue → profile
	profileOf := map[[2]string]string{}
	namespaces := map[string][]string{}
	for i := range m.Teams {
		namespaces[m.Teams[i].Name] = m.Teams[i].Namespaces
	}
	out := map[string]*Waiting{}
	for _, p := range doc.Profiles {
		if p.Queue == nil {
			continue
		}
		out[p.Name] = &Waiting{}
		for _, t := range p.Queue.Teams {
			for _, ns := range namespaces[t.Team] {
				profileOf[[2]string{ns, p.Queue.LocalQueue}] = p.Name
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	if why != "" {
		for _, w := range out {
			w.Estimate.Unknown = why
		}
		return out
	}
	type counts struct {
		pending int
		running []time.Duration // ages
		runs    []Workload
	}
	by := map[string]*counts{}
	for name := range out {
		by[name] = &counts{}
	}
	for _, wl := range wls {
		c := by[profileOf[[2]string{wl.Namespace, wl.Queue}]]
		switch {
		case c == nil:
		case !wl.Finished.IsZero():
			if !wl.Admitted.IsZero() && !wl.Finished.Before(wl.Admitted) {
				c.runs = append(c.runs, wl)
			}
		case !wl.Admitted.IsZero():
			c.running = append(c.running, max(now.Sub(wl.Admitted), 0))
		case !wl.Inactive:
			c.pending++
		}
	}
	for _, p := range doc.Profiles {
		w, c := out[p.Name], by[p.Name]
		if w == nil {
			continue
		}
		w.Pending, w.Running = new(c.pending), new(len(c.running))
		w.Estimate = estimateWait(recentRuns(c.runs), c.running, c.pending, p.Available)
	}
	return out
}

// recentRuns are the durations of the last maxRuns finished runs, by
// when they finished (then namespace and name, for a tie).
func recentRuns(runs []Workload) []time.Duration {
	slices.SortFunc(runs, func(a, b Workload) int {
		if c := b.Finished.Compare(a.Finished); c != 0 {
			return c
		}
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	out := make([]time.Duration, 0, min(len(runs), maxRuns))
	for _, r := range runs[:min(len(runs), maxRuns)] {
		out = append(out, r.Finished.Sub(r.Admitted))
	}
	return out
}

func estimateWait(runs, running []time.Duration, pending, available int) WaitEstimate {
	if pending == 0 && available > 0 {
		return WaitEstimate{Minutes: new(0), Method: fmt.Sprintf("nothing pending and %d available", available)}
	}
	if len(runs) == 0 {
		return WaitEstimate{Unknown: "no finished run of this profile observed yet"}
	}
	if len(running) == 0 {
		return WaitEstimate{Unknown: "none of its workloads is running, so no run's end to wait for: they wait on something else (quota, a flavor that fits, an admission check)"}
	}
	sorted := slices.Clone(runs)
	slices.Sort(sorted)
	typical := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		typical = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	free := make(durationHeap, 0, len(running))
	for _, age := range running {
		free = append(free, max(typical-age, 0))
	}
	heap.Init(&free)
	for range pending {
		free[0] += typical
		heap.Fix(&free, 0)
	}
	wait := int(math.Ceil(free[0].Minutes()))
	return WaitEstimate{
		Minutes: &wait,
		Method: fmt.Sprintf("median of %s of this profile, %s; %d running, %d pending ahead",
			words.Plural(len(runs), "finished run"), minutes(typical), len(running), pending),
	}
}

func minutes(d time.Duration) string {
	return fmt.Sprintf("%d min", int(math.Ceil(d.Minutes())))
}

// durationHeap is a min-heap of when each running place frees.
type durationHeap []time.Duration

func (h durationHeap) Len() int           { return len(h) }
func (h durationHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h durationHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *durationHeap) Push(x any)        { *h = append(*h, x.(time.Duration)) }
func (h *durationHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// workloadsGVR is Kueue's Workloads, at the version Kueue v0.15 and
// later serve and store.
var workloadsGVR = schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: "workloads"}

// watchWorkloads gives an informer of Kueue's Workloads, or nil and why
// they cannot be read: not served, or not listable. Serving goes on
// without them.
func (w *Watcher) watchWorkloads(ctx context.Context) (cache.SharedIndexInformer, string) {
	c := rest.CopyConfig(w.cfg)
	c.Timeout = 0
	dyn, err := dynamic.NewForConfig(c)
	if err != nil {
		return nil, "Kueue's Workloads cannot be read: " + w.redact(err).Error()
	}
	ri := dyn.Resource(workloadsGVR)
	switch _, err := ri.List(ctx, metav1.ListOptions{Limit: 1}); {
	case err == nil:
	case apierrors.IsNotFound(err):
		return nil, "the API server does not serve Kueue's Workloads (kueue.x-k8s.io/v1beta2)"
	case apierrors.IsForbidden(err):
		return nil, "may not list Kueue's Workloads (RBAC: get, list and watch on workloads in kueue.x-k8s.io)"
	default:
		return nil, "Kueue's Workloads cannot be read: " + w.redact(err).Error()
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) },
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return ri.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	if err := inf.SetTransform(trimWorkload); err != nil {
		return nil, err.Error()
	}
	if _, err := inf.AddEventHandler(handler(w.setWorkload, w.deleteWorkload)); err != nil {
		return nil, err.Error()
	}
	return inf, ""
}

// trimWorkload keeps of a Workload its queue, whether it is active and
// its conditions' types, statuses and times: no pod templates, no
// messages.
func trimWorkload(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(u.GetAPIVersion())
	out.SetKind(u.GetKind())
	out.SetNamespace(u.GetNamespace())
	out.SetName(u.GetName())
	out.SetUID(u.GetUID())
	out.SetResourceVersion(u.GetResourceVersion())
	spec := map[string]any{}
	if q, ok, _ := unstructured.NestedString(u.Object, "spec", "queueName"); ok {
		spec["queueName"] = q
	}
	if a, ok, _ := unstructured.NestedBool(u.Object, "spec", "active"); ok {
		spec["active"] = a
	}
	out.Object["spec"] = spec
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var kept []any
	for _, c := range conds {
		cm, ok := c.(map[string]any)
		if !ok {
			continue
		}
		switch cm["type"] {
		case "Admitted", "Finished":
			kept = append(kept, map[string]any{"type": cm["type"], "status": cm["status"], "lastTransitionTime": cm["lastTransitionTime"]})
		}
	}
	if kept != nil {
		out.Object["status"] = map[string]any{"conditions": kept}
	}
	return out, nil
}

// decodeWorkload reads a trimmed Workload.
func decodeWorkload(u *unstructured.Unstructured) (Workload, error) {
	wl := Workload{Namespace: u.GetNamespace(), Name: u.GetName()}
	wl.Queue, _, _ = unstructured.NestedString(u.Object, "spec", "queueName")
	if a, ok, _ := unstructured.NestedBool(u.Object, "spec", "active"); ok && !a {
		wl.Inactive = true
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm["status"] != "True" {
			continue
		}
		s, _ := cm["lastTransitionTime"].(string)
		at, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return wl, fmt.Errorf("condition %v: lastTransitionTime %q: %w", cm["type"], s, err)
		}
		switch cm["type"] {
		case "Admitted":
			wl.Admitted = at
		case "Finished":
			wl.Finished = at
		}
	}
	return wl, nil
}

func (w *Watcher) setWorkload(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	wl, err := decodeWorkload(u)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.fail("a Kueue Workload in namespace", wl.Namespace, err)
		return
	}
	key := wl.Namespace + "/" + wl.Name
	if old, had := w.workloads[key]; had && old == wl {
		return
	}
	if w.workloads == nil {
		w.workloads = map[string]Workload{}
	}
	w.workloads[key] = wl
	w.touch()
}

func (w *Watcher) deleteWorkload(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, had := w.workloads[key]; had {
		delete(w.workloads, key)
		w.touch()
	}
}

// Workloads are Kueue's Workloads as the watcher last saw them, and why
// it cannot read them ("" when it can).
func (w *Watcher) Workloads() ([]Workload, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.kueueWhy != "" {
		return nil, w.kueueWhy
	}
	out := make([]Workload, 0, len(w.workloads))
	for _, wl := range w.workloads {
		out = append(out, wl)
	}
	return out, ""
}
