package serve

// The Watcher: the cluster's nodes, pods, ResourceSlices and Workloads
// from informers, trimmed to what the catalog counts.

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/inventory/live"
)

// Watcher keeps a cluster's nodes, the accelerators its pods hold and the
// ResourceSlices of its accelerator drivers current through informers
// (list, then watch), and gives a snapshot of them on demand. It reads each
// object with the decoders `accelc inventory snapshot --live` uses
// (live.DecodeNode, live.PodDevices, live.DecodeSlice), so a node counts
// the same in both. The informers' transforms decode each object as it
// arrives, before it is kept or queued, and keep only what the count
// reads (nodeState, podState, sliceState): no images, addresses, managed
// fields, environments or volumes, and of a pod that holds no
// accelerators its name alone; pod names never leave the watcher. Lists
// are read a page at a time (pagedList).
type Watcher struct {
	cfg     *rest.Config
	cluster string
	redact  func(error) error

	mu      sync.Mutex
	nodes   map[string]inventory.RawNode
	pods    map[string]podUse // namespace/name → what it holds, pods bound to a node with accelerators only
	slices  map[string]inventory.ResourceSlice
	pending time.Time // the first change not yet in a snapshot
	errs    []string  // objects that could not be read, by kind/name
	// workloads are Kueue's Workloads (queue.go), namespace/name →
	// Workload; kueueWhy says why they cannot be read.
	workloads map[string]Workload
	kueueWhy  string

	changed  chan struct{}
	synced   []cache.InformerSynced
	warnings []string

	// recorder is told of every pod and of pods gone (accelc serve
	// --record-types, record.go); nil: off.
	recorder *Recorder
}

type podUse struct {
	node, namespace string
	devices         int
}

// WatchOptions say which cluster to watch.
type WatchOptions struct {
	live.Options
	// Resync is how often the informers replay their caches; 0: never.
	Resync time.Duration
}

// NewWatcher connects to the cluster of the kubeconfig context. Its
// informers start with Run.
func NewWatcher(opts WatchOptions) (*Watcher, error) {
	cfg, cluster, redact, err := live.Config(opts.Options)
	if err != nil {
		return nil, err
	}
	return newWatcher(cfg, cluster, redact)
}

func newWatcher(cfg *rest.Config, cluster string, redact func(error) error) (*Watcher, error) {
	return &Watcher{
		cfg:     cfg,
		cluster: cluster,
		redact:  redact,
		nodes:   map[string]inventory.RawNode{},
		pods:    map[string]podUse{},
		slices:  map[string]inventory.ResourceSlice{},
		changed: make(chan struct{}, 1),
	}, nil
}

// Changed receives when something changed since the last Snapshot.
func (w *Watcher) Changed() <-chan struct{} { return w.changed }

// Run starts the informers and blocks until ctx ends. It fails when the
// cluster cannot be reached or may not be read (nodes, pods); ResourceSlices
// that are not served, or may not be listed, become a warning, and Kueue's
// Workloads that cannot be read the reason the waits are unknown.
func (w *Watcher) Run(ctx context.Context) error {
	cfg := w.cfg
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, resourcev1.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	codecs := serializer.NewCodecFactory(scheme).WithoutConversion()
	client := func(apiPath string, gv schema.GroupVersion) (*rest.RESTClient, error) {
		c := rest.CopyConfig(cfg)
		c.APIPath, c.GroupVersion, c.NegotiatedSerializer = apiPath, &gv, codecs
		// A watch lasts: no client timeout (the server ends it).
		c.Timeout = 0
		return rest.RESTClientFor(c)
	}
	core, err := client("/api", corev1.SchemeGroupVersion)
	if err != nil {
		return w.redact(err)
	}
	// Nodes and pods must be readable: check before informers retry
	// forever behind the scenes.
	for _, r := range []string{"nodes", "pods"} {
		if err := core.Get().Resource(r).Param("limit", "1").Do(ctx).Error(); err != nil {
			return w.redact(fmt.Errorf("listing %s: %w", r, err))
		}
	}
	var keep func(*corev1.Pod) (map[string]string, map[string]string)
	if w.recorder != nil {
		keep = w.recorder.keep
	}
	trimPods := trimPod(keep)
	nodes := cache.NewSharedIndexInformer(pagedList(cache.NewListWatchFromClient(core, "nodes", "", fields.Everything()), trimNode), &corev1.Node{}, 0, cache.Indexers{})
	pods := cache.NewSharedIndexInformer(pagedList(cache.NewListWatchFromClient(core, "pods", "", fields.ParseSelectorOrDie(live.UnfinishedPods)), trimPods), &corev1.Pod{}, 0, cache.Indexers{})
	if err := nodes.SetTransform(trimNode); err != nil {
		return err
	}
	if err := pods.SetTransform(trimPods); err != nil {
		return err
	}
	if _, err := nodes.AddEventHandler(handler(w.setNode, w.deleteNode)); err != nil {
		return err
	}
	if _, err := pods.AddEventHandler(handler(w.setPod, w.deletePod)); err != nil {
		return err
	}
	informers := []cache.SharedIndexInformer{nodes, pods}

	res, err := client("/apis", resourcev1.SchemeGroupVersion)
	if err != nil {
		return w.redact(err)
	}
	switch err := res.Get().Resource("resourceslices").Param("limit", "1").Do(ctx).Error(); {
	case err == nil:
		sl := cache.NewSharedIndexInformer(pagedList(cache.NewListWatchFromClient(res, "resourceslices", "", fields.Everything()), trimSlice), &resourcev1.ResourceSlice{}, 0, cache.Indexers{})
		if err := sl.SetTransform(trimSlice); err != nil {
			return err
		}
		if _, err := sl.AddEventHandler(handler(w.setSlice, w.deleteSlice)); err != nil {
			return err
		}
		informers = append(informers, sl)
	case apierrors.IsNotFound(err):
		w.warnings = append(w.warnings, "the API server does not serve resource.k8s.io/v1 ResourceSlices: nodes are classified by their labels")
	case apierrors.IsForbidden(err):
		w.warnings = append(w.warnings, "may not list resourceslices (RBAC: get, list and watch on resourceslices in resource.k8s.io): nodes are classified by their labels")
	default:
		return w.redact(err)
	}
	workloads, kueueWhy := w.watchWorkloads(ctx)
	if workloads != nil {
		informers = append(informers, workloads)
	}
	w.mu.Lock()
	w.kueueWhy = kueueWhy
	for _, inf := range informers {
		w.synced = append(w.synced, inf.HasSynced)
	}
	w.mu.Unlock()
	var wg sync.WaitGroup
	for _, inf := range informers {
		wg.Go(func() { inf.RunWithContext(ctx) })
	}
	wg.Wait()
	return nil
}

// Synced says whether every informer has listed its objects once.
func (w *Watcher) Synced() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.synced) == 0 {
		return false
	}
	for _, s := range w.synced {
		if !s() {
			return false
		}
	}
	return true
}

// Warnings are what the watcher works around: ResourceSlices it cannot
// read, and objects it could not decode.
func (w *Watcher) Warnings() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append(slices.Clone(w.warnings), w.errs...)
}

// Snapshot is the cluster as the watcher last saw it, with the
// accelerators pods hold on each node (Source.PodsCounted), and since
// when changes have waited for it (zero when none).
func (w *Watcher) Snapshot() (*inventory.Snapshot, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	since := w.pending
	w.pending = time.Time{}
	snap := &inventory.Snapshot{
		Source:   &inventory.Source{Cluster: w.cluster, TakenAt: time.Now().UTC().Truncate(time.Second), PodsCounted: true},
		Nodes:    make([]inventory.RawNode, 0, len(w.nodes)),
		Warnings: slices.Clone(w.warnings),
	}
	inUse := map[string]map[string]int{}
	for _, p := range w.pods {
		if inUse[p.node] == nil {
			inUse[p.node] = map[string]int{}
		}
		inUse[p.node][p.namespace] += p.devices
	}
	for name, n := range w.nodes {
		if byNS := inUse[name]; len(byNS) > 0 {
			// The stored node is shared: annotate a copy.
			n.Metadata.Annotations = cloneMap(n.Metadata.Annotations)
			inventory.SetInUse(&n, byNS)
		}
		snap.Nodes = append(snap.Nodes, n)
	}
	sort.Slice(snap.Nodes, func(i, j int) bool { return snap.Nodes[i].Metadata.Name < snap.Nodes[j].Metadata.Name })
	all := make([]inventory.ResourceSlice, 0, len(w.slices))
	for _, s := range w.slices {
		all = append(all, s)
	}
	snap.Slices = inventory.AcceleratorSlices(all)
	return snap, since
}

func (w *Watcher) touch() {
	if w.pending.IsZero() {
		w.pending = time.Now()
	}
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

func (w *Watcher) fail(kind, name string, err error) {
	msg := fmt.Sprintf("%s %s could not be read, and is left out: %v", kind, name, err)
	if !slices.Contains(w.errs, msg) && len(w.errs) < 100 {
		w.errs = append(w.errs, msg)
	}
}

func (w *Watcher) setNode(obj any) {
	n, ok := obj.(*nodeState)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if n.err != nil {
		w.fail("node", n.Name, n.err)
		return
	}
	w.nodes[n.Name] = n.raw
	w.touch()
}

func (w *Watcher) deleteNode(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.nodes, key)
	w.touch()
}

func (w *Watcher) setPod(obj any) {
	p, ok := obj.(*podState)
	if !ok {
		return
	}
	key := p.Namespace + "/" + p.Name
	if p.err == nil && w.recorder != nil {
		w.recorder.pod(p)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if p.err != nil {
		// The message names the namespace, never the pod.
		w.fail("a pod in namespace", p.Namespace, p.err)
		return
	}
	u := podUse{node: p.Node, namespace: p.Namespace, devices: p.Devices}
	old, had := w.pods[key]
	if u.node == "" || u.devices == 0 {
		if had {
			delete(w.pods, key)
			w.touch()
		}
		return
	}
	if !had || old != u {
		w.pods[key] = u
		w.touch()
	}
}

func (w *Watcher) deletePod(key string) {
	if w.recorder != nil {
		w.recorder.gone(key)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, had := w.pods[key]; had {
		delete(w.pods, key)
		w.touch()
	}
}

func (w *Watcher) setSlice(obj any) {
	s, ok := obj.(*sliceState)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if s.err != nil {
		w.fail("ResourceSlice", s.Name, s.err)
		return
	}
	if !s.keep {
		if _, had := w.slices[s.Name]; had {
			delete(w.slices, s.Name)
			w.touch()
		}
		return
	}
	w.slices[s.Name] = s.slice
	w.touch()
}

func (w *Watcher) deleteSlice(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, had := w.slices[key]; had {
		delete(w.slices, key)
		w.touch()
	}
}

// handler calls set for adds and updates and remove, with the object's
// cache key (namespace/name, or name), for deletes.
func handler(set func(any), remove func(string)) cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { set(obj) },
		UpdateFunc: func(_, obj any) { set(obj) },
		DeleteFunc: func(obj any) {
			key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
			if err == nil {
				remove(key)
			}
		},
	}
}

// nodeState is what the node informer keeps of a node: the node as
// classification reads it (live.DecodeNode), decoded as it arrives
// (trimNode), which the watcher's map shares rather than copies.
type nodeState struct {
	metav1.ObjectMeta
	raw inventory.RawNode
	// err is why the node could not be read; setNode reports it.
	err error
}

func (n *nodeState) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (n *nodeState) DeepCopyObject() runtime.Object {
	c := *n
	n.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// trimNode is the node informer's transform: of a node it keeps what
// classification reads, decoded, so the informer's cache holds no images,
// addresses or managed fields, and no second copy of the node.
func trimNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	t := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: n.Name, Labels: n.Labels, Annotations: acceleratorAnnotations(n.Annotations),
	}}
	t.Spec.Unschedulable, t.Spec.Taints = n.Spec.Unschedulable, n.Spec.Taints
	t.Status.Capacity, t.Status.Allocatable = n.Status.Capacity, n.Status.Allocatable
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			t.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status}}
		}
	}
	out := &nodeState{ObjectMeta: metav1.ObjectMeta{Name: n.Name}}
	out.raw, out.err = marshalDecode(t, live.DecodeNode)
	return out, nil
}

// sliceState is what the ResourceSlice informer keeps of a slice: its
// accelerator devices as live.DecodeSlice reads them, nothing of another
// driver's slice.
type sliceState struct {
	metav1.ObjectMeta
	slice inventory.ResourceSlice
	keep  bool
	// err is why the slice could not be read; setSlice reports it.
	err error
}

func (s *sliceState) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (s *sliceState) DeepCopyObject() runtime.Object {
	c := *s
	s.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// trimSlice is the ResourceSlice informer's transform.
func trimSlice(obj any) (any, error) {
	s, ok := obj.(*resourcev1.ResourceSlice)
	if !ok {
		return obj, nil
	}
	out := &sliceState{ObjectMeta: metav1.ObjectMeta{Name: s.Name}}
	b, err := s.Marshal()
	if err == nil {
		out.slice, out.keep, err = live.DecodeSlice(b)
	}
	if err != nil || !out.keep {
		out.slice, out.err = inventory.ResourceSlice{}, err
	}
	return out, nil
}

// acceleratorAnnotations keeps the annotations a node's classification
// may read (accelc's own), none of the rest.
func acceleratorAnnotations(in map[string]string) map[string]string {
	var out map[string]string
	for k, v := range in {
		if strings.HasPrefix(k, "accelc.io/") {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// podState is what the pod informer keeps of a pod: the node it is bound
// to and the accelerators it holds, counted as it arrives (trimPod), and
// for the recorder its UID, resourceVersion and the annotations and label
// it reads. A pod that holds no accelerators keeps its name alone, which
// the informer needs to see it go: most of a cluster's pods cost a few
// hundred bytes each.
type podState struct {
	metav1.ObjectMeta
	Node    string
	Devices int
	// err is why the pod could not be read; setPod reports it.
	err error
}

func (p *podState) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

func (p *podState) DeepCopyObject() runtime.Object {
	c := *p
	p.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// trimPod is the pod informer's transform: it turns the pod as decoded
// into its podState before the informer keeps it, or queues it, so the
// informer's cache and the watch-list's holding store keep only that.
// keep, when not nil, says which of the pod's annotations and labels to
// keep besides (the recorder's).
func trimPod(keep func(*corev1.Pod) (annotations, labels map[string]string)) cache.TransformFunc {
	return func(obj any) (any, error) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return obj, nil
		}
		out := &podState{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}
		// What live.PodDevices reads: the containers' requests and limits.
		t := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace}}
		t.Spec.NodeName = p.Spec.NodeName
		trim := func(cs []corev1.Container) []corev1.Container {
			var kept []corev1.Container
			for _, c := range cs {
				kept = append(kept, corev1.Container{Resources: corev1.ResourceRequirements{Limits: c.Resources.Limits, Requests: c.Resources.Requests}, RestartPolicy: c.RestartPolicy})
			}
			return kept
		}
		t.Spec.Containers, t.Spec.InitContainers = trim(p.Spec.Containers), trim(p.Spec.InitContainers)
		b, err := t.Marshal()
		if err == nil {
			out.Node, _, out.Devices, err = live.PodDevices(b)
		}
		if err != nil || out.Devices == 0 {
			out.err = err
			return out, nil
		}
		out.UID, out.ResourceVersion = p.UID, p.ResourceVersion
		if keep != nil {
			out.Annotations, out.Labels = keep(p)
		}
		return out, nil
	}
}

// listPage is how many objects pagedList asks for at once.
const listPage = 500

// pagedList is lw, whose list reads page by page and turns each page's
// objects into what the informer keeps (transform) before it reads the
// next, so that a list holds one page of whole objects at a time.
//
// An informer first asks for a watch that streams the objects one by one
// (client-go's WatchListClient, on by default), each transformed as it
// comes; where the API server cannot (it needs etcd's watch progress
// requests, etcd 3.4.31 or 3.5.13 and later), it lists, and client-go's
// own pager gathers every page of whole objects before the first is
// transformed: 50,000 pods are then hundreds of megabytes at once.
// A list from the watch cache (resourceVersion "0") may ignore the limit
// and come whole, so the pages are asked at the latest resourceVersion,
// which API servers since 1.34 serve from the watch cache in pages too.
func pagedList(lw *cache.ListWatch, transform cache.TransformFunc) *cache.ListWatch {
	list := lw.ListWithContextFunc
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			opts.Limit, opts.Continue = listPage, ""
			if opts.ResourceVersion == "0" {
				opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
			}
			out := &objectList{}
			for {
				page, err := list(ctx, opts)
				if err != nil {
					return nil, err
				}
				lm, err := meta.ListAccessor(page)
				if err != nil {
					return nil, err
				}
				err = meta.EachListItem(page, func(obj runtime.Object) error {
					kept, err := transform(obj)
					if err != nil {
						return err
					}
					out.Items = append(out.Items, kept.(runtime.Object))
					return nil
				})
				if err != nil {
					return nil, err
				}
				out.ResourceVersion = lm.GetResourceVersion()
				if lm.GetContinue() == "" {
					return out, nil
				}
				opts.Continue, opts.ResourceVersion = lm.GetContinue(), ""
			}
		},
		WatchFuncWithContext: lw.WatchFuncWithContext,
		// The pages are pagedList's: client-go's pager would gather them.
		DisableChunking: true,
	}
}

// objectList is a list of what informers keep (pagedList).
type objectList struct {
	metav1.TypeMeta
	metav1.ListMeta
	Items []runtime.Object
}

func (l *objectList) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = slices.Clone(l.Items)
	return &c
}

// marshalDecode reads an API object with one of live's protobuf decoders.
func marshalDecode[T any](obj interface{ Marshal() ([]byte, error) }, decode func([]byte) (T, error)) (T, error) {
	b, err := obj.Marshal()
	if err != nil {
		var zero T
		return zero, err
	}
	return decode(b)
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m)+2)
	for k, v := range m {
		out[k] = v
	}
	return out
}
