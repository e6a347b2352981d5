package serve

// Live descriptions: each HardwareProfile's description written with what
// it offers now and how long a job waits.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/accelc/accelc/pkg/catalogdoc"
	"github.com/accelc/accelc/pkg/compile"
	"github.com/accelc/accelc/pkg/render"
)

// hardwareProfilesGVR is Open Data Hub's HardwareProfiles, the version
// accelc renders.
var hardwareProfilesGVR = schema.GroupVersionResource{Group: "infrastructure.opendatahub.io", Version: "v1", Resource: "hardwareprofiles"}

// managedByLabel marks the objects accelc renders; the describer writes
// only on those, never on a HardwareProfile of the same name someone
// else made.
const managedByLabel = "app.kubernetes.io/managed-by"

// Description is the text a profile's HardwareProfile shows in Open Data
// Hub's profile picker (its opendatahub.io/description): its devices, what
// it has available and, for a profile that schedules through Kueue, what
// is pending in its queue and about how long a workload queued now waits,
// then the profile's own description from the CUE: "NVIDIA H200 141GB ·
// 32 available · 2 pending · about 15 min wait — Eight H200s for
// training". The figures come first: the picker shows one line of it,
// cut, and the whole in a tooltip. They are the page's and the API's,
// from the same count. It holds no time, so it changes only when a figure
// does.
func Description(static string, p catalogdoc.Profile, w *Waiting) string {
	var parts []string
	if what := devicesText(p); what != "" {
		parts = append(parts, what)
	}
	parts = append(parts, fmt.Sprintf("%d available", p.Available))
	if w != nil {
		if w.Pending != nil {
			parts = append(parts, fmt.Sprintf("%d pending", *w.Pending))
		}
		switch e := w.Estimate; {
		case e.Minutes == nil:
			// Why is on the page and in the API; the picker has a line.
			parts = append(parts, "wait unknown")
		case *e.Minutes == 0:
			parts = append(parts, "no wait")
		default:
			parts = append(parts, fmt.Sprintf("about %d min wait", *e.Minutes))
		}
	}
	live := strings.Join(parts, " · ")
	if static = strings.TrimSpace(static); static != "" {
		live += " — " + static
	}
	return live
}

// devicesText names what a pod of the profile gets: its types in order
// of preference, and on shared GPUs what one device is; "" for a generic
// profile.
func devicesText(p catalogdoc.Profile) string {
	var names []string
	for _, t := range p.Types {
		names = append(names, t.DisplayName)
	}
	out := strings.Join(names, " or ")
	if p.Sharing != nil && len(p.Types) > 0 && p.Types[0].Device != nil {
		out += ", " + p.Types[0].Device.Name
	}
	return out
}

// DescribeOptions shape a Describer.
type DescribeOptions struct {
	// Interval is the least time between two writes of one profile's
	// description (default 30s): a change within it waits, and only the
	// text as it is when the interval is over is written, so a burst of
	// changes is one write and a figure that goes and comes back is none.
	Interval time.Duration
	// Tick is how often the latest count is looked at (default 1s).
	Tick time.Duration
	// Log receives a line per write that failed.
	Log io.Writer
	// Now is the clock the interval is measured by (default time.Now).
	Now func() time.Time
	// Leader, when set, is the replicas' election: the describer writes
	// only while this replica leads, and otherwise keeps following the
	// profiles for the moment it takes over. Nil: it always writes.
	Leader *Leader
}

// Describer keeps each HardwareProfile accelc renders described with its
// availability and wait (Description, from the server's latest count), by
// server-side apply under its own field manager (render's
// DescriptionFieldManager) that owns that one annotation: Flux's
// kustomize-controller applies the rest of the object under its own, and
// since the rendered profile leaves the annotation out
// (cluster.catalogService.liveDescriptions), neither takes the other's
// field. It writes only what changed, at most once per profile per
// Interval, and only at the resourceVersion it last saw the profile at:
// it never creates one.
type Describer struct {
	srv  *Server
	w    *Watcher
	ns   string
	opts DescribeOptions

	res dynamic.ResourceInterface

	mu    sync.Mutex
	shown map[string]*shownProfile // by name: as the cluster holds it
	poke  chan struct{}

	writes prometheus.Counter
	errors *prometheus.CounterVec
}

// shownProfile is what the describer keeps of a HardwareProfile.
type shownProfile struct {
	rv      string
	text    string
	has     bool // it has the annotation
	managed bool // accelc renders it
	// written is when the describer last tried to write it;
	// conflictAt, the resourceVersion at which a write found it changed
	// (the next waits for a newer one).
	written    time.Time
	conflictAt string
}

// NewDescriber describes the HardwareProfiles in m's profile namespace
// from srv's counts, writing with w's connection.
func NewDescriber(w *Watcher, srv *Server, m *compile.Model, opts DescribeOptions) (*Describer, error) {
	if opts.Interval <= 0 {
		opts.Interval = 30 * time.Second
	}
	if opts.Tick <= 0 {
		opts.Tick = time.Second
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := rest.CopyConfig(w.cfg)
	// A watch lasts: no client timeout (the server ends it).
	c.Timeout = 0
	dyn, err := dynamic.NewForConfig(c)
	if err != nil {
		return nil, w.redact(err)
	}
	ns := m.Cluster.ProfileNamespace
	return &Describer{
		srv: srv, w: w, ns: ns, opts: opts,
		res:   dyn.Resource(hardwareProfilesGVR).Namespace(ns),
		shown: map[string]*shownProfile{},
		poke:  make(chan struct{}, 1),
		writes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "accelc_profile_description_writes_total",
			Help: "HardwareProfile descriptions accelc serve --live-descriptions wrote (server-side apply, field manager " + render.DescriptionFieldManager + ").",
		}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "accelc_profile_description_errors_total",
			Help: "Description writes that failed, by reason: conflict (the profile changed since it was seen: written again at the newer version), owned (another field manager owns the annotation), denied (RBAC or admission), transient.",
		}, []string{"reason"}),
	}, nil
}

// Collectors are the describer's metrics, for the server to expose.
func (d *Describer) Collectors() []prometheus.Collector {
	return []prometheus.Collector{d.writes, d.errors}
}

// Run watches the profile namespace's HardwareProfiles and keeps their
// descriptions current until ctx ends. Where HardwareProfiles are not
// served or may not be read it says so on the log and writes nothing;
// serving goes on.
func (d *Describer) Run(ctx context.Context) {
	switch _, err := d.res.List(ctx, metav1.ListOptions{Limit: 1}); {
	case err == nil:
	case apierrors.IsNotFound(err):
		fmt.Fprintf(d.opts.Log, "live descriptions: the API server does not serve Open Data Hub's HardwareProfiles (%s/%s): nothing to describe\n", hardwareProfilesGVR.Group, hardwareProfilesGVR.Version)
		return
	case apierrors.IsForbidden(err):
		fmt.Fprintf(d.opts.Log, "live descriptions: may not list hardwareprofiles in %s (RBAC: get, list and watch, and patch, on hardwareprofiles in %s, as catalogService.liveDescriptions renders): nothing is described\n", d.ns, hardwareProfilesGVR.Group)
		return
	default:
		if ctx.Err() == nil {
			fmt.Fprintf(d.opts.Log, "live descriptions: listing hardwareprofiles in %s: %v: nothing is described\n", d.ns, d.w.redact(err))
		}
		return
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return d.res.List(ctx, o) },
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return d.res.Watch(ctx, o)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	if err := inf.SetTransform(trimProfile); err != nil {
		fmt.Fprintf(d.opts.Log, "live descriptions: %v\n", err)
		return
	}
	if _, err := inf.AddEventHandler(handler(d.setProfile, d.deleteProfile)); err != nil {
		fmt.Fprintf(d.opts.Log, "live descriptions: %v\n", err)
		return
	}
	go inf.RunWithContext(ctx)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return
	}
	tick := time.NewTicker(d.opts.Tick)
	defer tick.Stop()
	for {
		d.pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-d.poke:
		}
	}
}

// trimProfile keeps of a HardwareProfile its name, resourceVersion,
// whether accelc renders it and its description.
func trimProfile(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(u.GetAPIVersion())
	out.SetKind(u.GetKind())
	out.SetNamespace(u.GetNamespace())
	out.SetName(u.GetName())
	out.SetResourceVersion(u.GetResourceVersion())
	if v, ok := u.GetLabels()[managedByLabel]; ok {
		out.SetLabels(map[string]string{managedByLabel: v})
	}
	if v, ok := u.GetAnnotations()[render.DescriptionAnnotation]; ok {
		out.SetAnnotations(map[string]string{render.DescriptionAnnotation: v})
	}
	return out, nil
}

func (d *Describer) setProfile(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	d.mu.Lock()
	sh := d.shown[u.GetName()]
	if sh == nil {
		sh = &shownProfile{}
		d.shown[u.GetName()] = sh
	}
	sh.rv = u.GetResourceVersion()
	sh.text, sh.has = u.GetAnnotations()[render.DescriptionAnnotation]
	sh.managed = u.GetLabels()[managedByLabel] == "accelc"
	d.mu.Unlock()
	d.wake()
}

func (d *Describer) deleteProfile(key string) {
	_, name, _ := cache.SplitMetaNamespaceKey(key)
	d.mu.Lock()
	delete(d.shown, name)
	d.mu.Unlock()
}

func (d *Describer) wake() {
	select {
	case d.poke <- struct{}{}:
	default:
	}
}

// described is one write to make.
type described struct {
	name, rv, text string
}

// pass writes every description that differs from the latest count's
// and whose profile's interval is over.
func (d *Describer) pass(ctx context.Context) {
	v := d.srv.cur.Load()
	if v == nil || !d.opts.Leader.Leading() {
		return
	}
	m := d.srv.model.Load()
	static := map[string]string{}
	for i := range m.Profiles {
		static[m.Profiles[i].Name] = m.Profiles[i].Description
	}
	now := d.opts.Now()
	var todo []described
	d.mu.Lock()
	for _, p := range v.doc.Profiles {
		sh := d.shown[p.Name]
		if sh == nil || !sh.managed || sh.conflictAt == sh.rv {
			continue
		}
		want := Description(static[p.Name], p, v.waiting[p.Name])
		if sh.has && sh.text == want {
			continue
		}
		if !sh.written.IsZero() && now.Sub(sh.written) < d.opts.Interval {
			// Written a moment ago: this waits, and the text as it is
			// then is written.
			continue
		}
		sh.written = now
		todo = append(todo, described{name: p.Name, rv: sh.rv, text: want})
	}
	d.mu.Unlock()
	for _, w := range todo {
		if ctx.Err() != nil {
			return
		}
		d.write(ctx, w)
	}
}

// write applies one description at the resourceVersion it was seen at.
func (d *Describer) write(ctx context.Context, w described) {
	body, err := json.Marshal(map[string]any{
		"apiVersion": hardwareProfilesGVR.GroupVersion().String(),
		"kind":       "HardwareProfile",
		"metadata": map[string]any{
			"name": w.name, "namespace": d.ns,
			// A precondition: the profile as seen, never a new one.
			"resourceVersion": w.rv,
			"annotations":     map[string]string{render.DescriptionAnnotation: w.text},
		},
	})
	if err != nil {
		panic(err) // plain strings: a bug
	}
	out, err := d.res.Patch(ctx, w.name, types.ApplyPatchType, body, metav1.PatchOptions{FieldManager: render.DescriptionFieldManager})
	d.mu.Lock()
	defer d.mu.Unlock()
	sh := d.shown[w.name]
	if err == nil {
		d.writes.Inc()
		if sh != nil && out != nil {
			sh.rv, sh.text, sh.has = out.GetResourceVersion(), w.text, true
		}
		return
	}
	if ctx.Err() != nil {
		return
	}
	reason := "transient"
	var status apierrors.APIStatus
	switch {
	case apierrors.IsConflict(err) && errors.As(err, &status) && fieldManagerConflict(status.Status()):
		reason = "owned"
		fmt.Fprintf(d.opts.Log, "live descriptions: HardwareProfile %s/%s: another field manager owns %s (%v): render with cluster.catalogService.liveDescriptions, so that the rendered profile leaves it to accelc serve\n",
			d.ns, w.name, render.DescriptionAnnotation, err)
	case apierrors.IsConflict(err):
		// Changed since seen (Flux applied it): written again once the
		// watch has the newer version, interval or not.
		reason = "conflict"
		if sh != nil {
			sh.conflictAt, sh.written = w.rv, time.Time{}
		}
	case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
		reason = "denied"
		fmt.Fprintf(d.opts.Log, "live descriptions: HardwareProfile %s/%s: %v\n", d.ns, w.name, d.w.redact(err))
	default:
		fmt.Fprintf(d.opts.Log, "live descriptions: HardwareProfile %s/%s: %v (tried again in %s)\n", d.ns, w.name, d.w.redact(err), d.opts.Interval)
	}
	d.errors.WithLabelValues(reason).Inc()
}

// fieldManagerConflict says whether a 409 is server-side apply's: a
// field another manager owns.
func fieldManagerConflict(s metav1.Status) bool {
	if s.Details == nil {
		return false
	}
	for _, c := range s.Details.Causes {
		if c.Type == metav1.CauseTypeFieldManagerConflict {
			return true
		}
	}
	return false
}
