package serve

// Recording the type each bound pod got (accelc serve --record-types):
// its node's type written in the pod's type annotation, for cost
// attribution.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"

	"github.com/accelc/accelc/pkg/compile"
)

// profileAnnotation is how a pod names its Open Data Hub HardwareProfile.
const profileAnnotation = "opendatahub.io/hardware-profile-name"

// Recorder writes on a pod the accelerator type it got (accelc serve
// --record-types). A pod of a single-type profile carries its type from
// accelc's mutation; a pod of a multi-type or generic profile can only
// learn it once kube-scheduler has bound it. The Recorder follows the
// Watcher's pods and, for each bound pod of such a profile, in a team's
// namespace, that asks for accelerators, sets its <labelPrefix>/type
// annotation to its node's type label, so that cost attribution reads the
// type from the pod.
//
// It works off the informer's events, not the catalog's debounce: an
// event only queues the pod (a work queue, never a call to the API server
// in the informer's handler), and workers patch it, at once. The patch is
// a JSON merge patch that carries the resourceVersion the recorder saw the
// pod without the annotation at, so a replica that raced it, or any other
// change since, makes it a conflict: the pod is looked at again, as it is
// now. Every failure is retried with backoff, a few times (Retries), then
// counted and reported: a conflict, a transient error, and a patch the
// API server refuses (RBAC, the ValidatingAdmissionPolicy, Gatekeeper,
// whose copy of the node may lag). A pod whose annotation disagrees with
// its node is reported, never overwritten. Pods on nodes without a type
// label are left alone.
type Recorder struct {
	w     *Watcher
	core  *rest.RESTClient
	model atomic.Pointer[compile.Model]
	opts  RecordOptions
	queue workqueue.TypedRateLimitingInterface[string]

	mu   sync.Mutex
	pods map[string]*recordPod // namespace/name → what the recorder knows of it

	recorded   prometheus.Counter
	errors     *prometheus.CounterVec
	mismatches prometheus.Counter
	latency    prometheus.Histogram
}

// recordPod is what the recorder keeps of a pod it may have to record.
type recordPod struct {
	uid     types.UID
	rv      string // its resourceVersion when last seen
	node    string
	typ     string    // its <labelPrefix>/type annotation
	unbound bool      // seen before it was bound
	bound   time.Time // when it was first seen bound
	done    bool      // recorded, right already, or reported
}

// RecordOptions shape a Recorder.
type RecordOptions struct {
	// Workers patch pods at once (default 2).
	Workers int
	// Retries is how often a failed patch is tried again, with backoff
	// (default 10).
	Retries int
	// Log receives a line per pod the recorder cannot record or finds
	// recorded with another type than its node's.
	Log io.Writer
	// Leader, when set, is the replicas' election: the recorder patches
	// only while this replica leads, and otherwise keeps following the
	// pods, queued, for the moment it takes over. Nil: it always writes.
	Leader *Leader
}

// NewRecorder records the types of the pods w watches, for the profiles,
// team namespaces and type label of m. It must be made before w runs.
func NewRecorder(w *Watcher, m *compile.Model, opts RecordOptions) (*Recorder, error) {
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Retries <= 0 {
		opts.Retries = 10
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c := rest.CopyConfig(w.cfg)
	c.APIPath, c.GroupVersion = "/api", &corev1.SchemeGroupVersion
	c.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	core, err := rest.RESTClientFor(c)
	if err != nil {
		return nil, w.redact(err)
	}
	r := &Recorder{
		w:    w,
		core: core,
		opts: opts,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](50*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "accelc-record-types"}),
		pods: map[string]*recordPod{},
		recorded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "accelc_record_types_recorded_total",
			Help: "Pods of multi-type or generic profiles on which accelc serve --record-types wrote their node's accelerator type.",
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "accelc_record_types_errors_total",
			Help: "Patches that failed, by reason: conflict, transient, denied (by RBAC or admission), each tried again with backoff; gave_up: a pod whose retries were spent.",
		}, []string{"reason"}),
		mismatches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "accelc_record_types_mismatches_total",
			Help: "Pods whose type annotation names another type than their node's label: reported, left as they are.",
		}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "accelc_record_types_latency_seconds",
			Help:    "From when the recorder saw a pod bound to when its type was recorded, for pods it saw before they were bound.",
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
		}),
	}
	r.model.Store(m)
	w.recorder = r
	return r, nil
}

// SetModel replaces the profiles and team namespaces the recorder goes by
// (the cluster's CUE changed).
func (r *Recorder) SetModel(m *compile.Model) { r.model.Store(m) }

// Collectors are the recorder's metrics, for a server's /metrics.
func (r *Recorder) Collectors() []prometheus.Collector {
	return []prometheus.Collector{r.recorded, r.errors, r.mismatches, r.latency}
}

// Register adds collectors to the server's /metrics.
func (s *Server) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := s.metrics.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Run patches queued pods until ctx ends.
func (r *Recorder) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range r.opts.Workers {
		wg.Go(func() {
			for r.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	r.queue.ShutDown()
	wg.Wait()
}

// keep is what the recorder reads of a pod besides what the watcher
// keeps (trimPod): its profile (annotation, or accelc's label) and its
// type annotation.
func (r *Recorder) keep(p *corev1.Pod) (annotations, labels map[string]string) {
	prefix := r.model.Load().Cluster.LabelPrefix
	pick := func(in map[string]string, keys ...string) map[string]string {
		var kept map[string]string
		for _, k := range keys {
			if v, ok := in[k]; ok {
				if kept == nil {
					kept = map[string]string{}
				}
				kept[k] = v
			}
		}
		return kept
	}
	return pick(p.Annotations, profileAnnotation, prefix+"/type"), pick(p.Labels, prefix+"/profile")
}

// profileName is the hardware profile a pod names, as the policies read
// it: ODH's annotation, else accelc's label.
func profileName(p *metav1.ObjectMeta, prefix string) string {
	if n, ok := p.Annotations[profileAnnotation]; ok {
		return n
	}
	return p.Labels[prefix+"/profile"]
}

// wants says whether the pod is one to record: in a team's namespace, of
// a profile with several types or none.
func wants(m *compile.Model, p *metav1.ObjectMeta) bool {
	if m.TeamOf(p.Namespace) == nil {
		return false
	}
	prof := m.Profile(profileName(p, m.Cluster.LabelPrefix))
	return prof != nil && len(prof.AcceleratorTypes) != 1
}

// pod is told of each pod the watcher sees (added or changed), with the
// accelerators it asks for. It runs in the informer's handler: it only
// notes the pod and queues it.
func (r *Recorder) pod(p *podState) {
	key := p.Namespace + "/" + p.Name
	m := r.model.Load()
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.Devices == 0 || !wants(m, &p.ObjectMeta) {
		delete(r.pods, key)
		return
	}
	e := r.pods[key]
	if e == nil || e.uid != p.UID {
		e = &recordPod{uid: p.UID}
		r.pods[key] = e
	}
	typ := p.Annotations[m.Cluster.TypeLabel()]
	if e.done && e.typ == typ && e.node == p.Node {
		e.rv = p.ResourceVersion
		return
	}
	e.rv, e.node, e.typ, e.done = p.ResourceVersion, p.Node, typ, false
	if e.node == "" {
		e.unbound = true
		return
	}
	if e.bound.IsZero() {
		e.bound = time.Now()
	}
	r.queue.Add(key)
}

// gone is told of each pod deleted.
func (r *Recorder) gone(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.pods, key)
}

// nodeType is the node's type label as the watcher has it; "" when it
// has none, or the node is unknown.
func (w *Watcher) nodeType(node, label string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.nodes[node].Metadata.Labels[label]
}

// next records one queued pod, once this replica leads; false once the
// queue is shut down.
func (r *Recorder) next(ctx context.Context) bool {
	if !r.opts.Leader.Wait(ctx) {
		return false
	}
	key, quit := r.queue.Get()
	if quit {
		return false
	}
	defer r.queue.Done(key)
	if !r.opts.Leader.Leading() {
		// Lost the lease while waiting for a pod: the pod waits for the
		// next leader, which follows it from its own informer.
		r.queue.Add(key)
		return true
	}
	if err := r.record(ctx, key); err != nil {
		if r.queue.NumRequeues(key) < r.opts.Retries {
			r.queue.AddRateLimited(key)
			return true
		}
		r.errors.WithLabelValues("gave_up").Inc()
		fmt.Fprintf(r.opts.Log, "record-types: gave up on pod %s after %d tries: %v\n", key, r.opts.Retries+1, r.w.redact(err))
	}
	r.queue.Forget(key)
	return true
}

// record patches the pod's type if it needs it; an error says why to try
// again.
func (r *Recorder) record(ctx context.Context, key string) error {
	label := r.model.Load().Cluster.TypeLabel()
	r.mu.Lock()
	e, ok := r.pods[key]
	var pod recordPod
	if ok {
		pod = *e
	}
	r.mu.Unlock()
	if !ok || pod.done || pod.node == "" {
		return nil
	}
	want := r.w.nodeType(pod.node, label)
	finish := func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if e := r.pods[key]; e != nil && e.uid == pod.uid && e.rv == pod.rv {
			e.done = true
		}
	}
	switch {
	case want == "":
		// A node without a type label: nothing to record.
		return nil
	case pod.typ == want:
		finish()
		return nil
	case pod.typ != "":
		r.mismatches.Inc()
		fmt.Fprintf(r.opts.Log, "record-types: pod %s says %s=%s, its node %s is %s: left as it is\n", key, label, pod.typ, pod.node, want)
		finish()
		return nil
	}
	ns, name, _ := strings.Cut(key, "/")
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": pod.rv,
		"annotations":     map[string]string{label: want},
	}})
	if err != nil {
		return nil
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = r.core.Patch(types.MergePatchType).Namespace(ns).Resource("pods").Name(name).Body(patch).Do(pctx).Error()
	switch {
	case err == nil:
		r.recorded.Inc()
		if pod.unbound {
			r.latency.Observe(time.Since(pod.bound).Seconds())
		}
		finish()
		return nil
	case apierrors.IsNotFound(err), ctx.Err() != nil:
		return nil
	case apierrors.IsConflict(err):
		// Changed since: the informer brings the pod as it is now.
		r.errors.WithLabelValues("conflict").Inc()
		return err
	case apierrors.IsForbidden(err), apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		// Refused by RBAC or admission. Gatekeeper may not have synced
		// the node yet: tried again, a few times, then reported.
		r.errors.WithLabelValues("denied").Inc()
		return fmt.Errorf("recording %s=%s was refused: %w", label, want, err)
	default:
		r.errors.WithLabelValues("transient").Inc()
		return err
	}
}
