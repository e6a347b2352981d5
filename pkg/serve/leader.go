package serve

// Leader election among replicas: only the leader writes to the cluster
// (descriptions, records).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// LeaderOptions say where the replicas of the catalog service elect the
// one that writes (on a coordination.k8s.io Lease, as client-go's leader
// election does): the others serve reads and wait.
type LeaderOptions struct {
	// Namespace and Name are the Lease's; Namespace defaults to the pod's
	// own (its service account's namespace file).
	Namespace, Name string
	// Identity is this replica's name in the Lease (default its host
	// name, the pod's, and a random suffix).
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's
	// (defaults 15s, 10s and 2s, as Kubernetes' controllers).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// DefaultLeaseName is the Lease the rendered catalog service elects on.
const DefaultLeaseName = "accelc-catalog-writer"

// serviceAccountNamespace is where a pod finds its namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

func (o *LeaderOptions) defaults() error {
	if o.Name == "" {
		o.Name = DefaultLeaseName
	}
	if o.Namespace == "" {
		ns, err := os.ReadFile(serviceAccountNamespace)
		if err != nil || strings.TrimSpace(string(ns)) == "" {
			return errors.New("--leader-elect: not in a pod (no " + serviceAccountNamespace + "): give --leader-elect-namespace")
		}
		o.Namespace = strings.TrimSpace(string(ns))
	}
	if o.Identity == "" {
		host, _ := os.Hostname()
		var b [4]byte
		_, _ = rand.Read(b[:])
		o.Identity = host + "_" + hex.EncodeToString(b[:])
	}
	if o.LeaseDuration <= 0 {
		o.LeaseDuration = 15 * time.Second
	}
	if o.RenewDeadline <= 0 {
		o.RenewDeadline = 10 * time.Second
	}
	if o.RetryPeriod <= 0 {
		o.RetryPeriod = 2 * time.Second
	}
	return nil
}

// Leader says whether this replica may write now: always, without an
// election; with one, while it holds the Lease.
type Leader struct {
	mu      sync.Mutex
	leading bool
	changed chan struct{} // closed when leading changes
	gauge   prometheus.Gauge
}

func newLeader(leading bool) *Leader {
	l := &Leader{leading: leading, changed: make(chan struct{}), gauge: prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "accelc_serve_leader",
		Help: "1 while this replica holds the writers' Lease (or runs without an election) and may write; 0 while it serves reads and waits.",
	})}
	if leading {
		l.gauge.Set(1)
	}
	return l
}

func (l *Leader) set(leading bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.leading == leading {
		return
	}
	l.leading = leading
	close(l.changed)
	l.changed = make(chan struct{})
	if leading {
		l.gauge.Set(1)
	} else {
		l.gauge.Set(0)
	}
}

// Leading says whether this replica may write now.
func (l *Leader) Leading() bool {
	if l == nil {
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leading
}

// Wait returns true once this replica may write, false if ctx ends first.
func (l *Leader) Wait(ctx context.Context) bool {
	if l == nil {
		return ctx.Err() == nil
	}
	for {
		l.mu.Lock()
		leading, changed := l.leading, l.changed
		l.mu.Unlock()
		if leading {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-changed:
		}
	}
}

// elect campaigns for the Lease until ctx ends, as client-go's
// leaderelection does (its algorithm, on a rest client of
// coordination.k8s.io alone: client-go's package links its whole
// clientset, which every accelc command would start with). Every
// RetryPeriod it reads the Lease: it takes one that is free, or whose
// holder has not renewed it for LeaseDuration by this replica's clock
// (the time it saw the holder's last renewal, not the holder's clock);
// the holder renews it. Every write carries the resourceVersion read, so
// of two replicas that try at once one wins. A leader that could not
// renew for RenewDeadline stops writing and campaigns again, serving
// reads meanwhile. When ctx ends it gives the Lease up, so that the other
// replica takes over at once rather than after LeaseDuration.
func (l *Leader) elect(ctx context.Context, cfg *rest.Config, opts LeaderOptions, log io.Writer) error {
	client, err := restClient(cfg, coordinationv1.SchemeGroupVersion, coordinationv1.AddToScheme, 5, 10)
	if err != nil {
		return err
	}
	e := &election{client: client, opts: opts, log: log, leader: l}
	tick := time.NewTicker(opts.RetryPeriod)
	defer tick.Stop()
	for {
		e.try(ctx)
		select {
		case <-ctx.Done():
			e.release()
			return nil
		case <-tick.C:
		}
	}
}

// election is one replica's campaign.
type election struct {
	client *rest.RESTClient
	opts   LeaderOptions
	log    io.Writer
	leader *Leader

	// observed is the holder and renewal last seen, and when this
	// replica saw it change.
	observedHolder, observedRenew string
	observedAt                    time.Time
	// renewed is when this replica last held the Lease.
	renewed time.Time
	holder  string // the holder it last said
}

func (e *election) lease(ctx context.Context) (*coordinationv1.Lease, error) {
	lease := &coordinationv1.Lease{}
	err := e.client.Get().Namespace(e.opts.Namespace).Resource("leases").Name(e.opts.Name).Do(ctx).Into(lease)
	return lease, err
}

// try reads the Lease once and takes, renews or leaves it.
func (e *election) try(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, e.opts.RenewDeadline)
	defer cancel()
	now := time.Now()
	me := e.opts.Identity
	duration := int32(e.opts.LeaseDuration.Seconds())
	held := func() {
		e.renewed = now
		if !e.leader.Leading() {
			fmt.Fprintf(e.log, "leader election: %s holds Lease %s/%s: writing\n", me, e.opts.Namespace, e.opts.Name)
			e.leader.set(true)
		}
	}
	lease, err := e.lease(rctx)
	switch {
	case apierrors.IsNotFound(err):
		fresh := &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.opts.Namespace, Name: e.opts.Name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &me, LeaseDurationSeconds: &duration,
				AcquireTime: &metav1.MicroTime{Time: now}, RenewTime: &metav1.MicroTime{Time: now}},
		}
		if e.client.Post().Namespace(e.opts.Namespace).Resource("leases").Body(fresh).Do(rctx).Error() == nil {
			held()
			return
		}
	case err == nil:
		holder, renew := "", ""
		if lease.Spec.HolderIdentity != nil {
			holder = *lease.Spec.HolderIdentity
		}
		if lease.Spec.RenewTime != nil {
			renew = lease.Spec.RenewTime.String()
		}
		if holder != e.observedHolder || renew != e.observedRenew {
			e.observedHolder, e.observedRenew, e.observedAt = holder, renew, now
		}
		if lease.Spec.LeaseDurationSeconds != nil {
			duration = *lease.Spec.LeaseDurationSeconds
		}
		expired := !now.Before(e.observedAt.Add(time.Duration(duration) * time.Second))
		if holder != "" && holder != me && !expired {
			e.follow(holder)
			return
		}
		next := lease.DeepCopy()
		d := int32(e.opts.LeaseDuration.Seconds())
		next.Spec.LeaseDurationSeconds, next.Spec.RenewTime = &d, &metav1.MicroTime{Time: now}
		if holder != me {
			next.Spec.HolderIdentity, next.Spec.AcquireTime = &me, &metav1.MicroTime{Time: now}
			transitions := int32(0)
			if lease.Spec.LeaseTransitions != nil {
				transitions = *lease.Spec.LeaseTransitions + 1
			}
			next.Spec.LeaseTransitions = &transitions
		}
		// At the resourceVersion read: another replica's write since
		// makes it a conflict.
		if e.client.Put().Namespace(e.opts.Namespace).Resource("leases").Name(e.opts.Name).Body(next).Do(rctx).Error() == nil {
			held()
			return
		}
	}
	// Not taken or not renewed this time: a leader that has not renewed
	// for RenewDeadline stops writing.
	if e.leader.Leading() && time.Since(e.renewed) > e.opts.RenewDeadline {
		e.leader.set(false)
		fmt.Fprintf(e.log, "leader election: %s could not renew Lease %s/%s: serving reads, campaigning again\n", me, e.opts.Namespace, e.opts.Name)
	}
}

// follow notes another replica holding the Lease.
func (e *election) follow(holder string) {
	if e.leader.Leading() {
		e.leader.set(false)
		fmt.Fprintf(e.log, "leader election: %s lost Lease %s/%s: serving reads, campaigning again\n", e.opts.Identity, e.opts.Namespace, e.opts.Name)
	}
	if holder != e.holder {
		e.holder = holder
		fmt.Fprintf(e.log, "leader election: %s holds Lease %s/%s: %s serves reads and waits\n", holder, e.opts.Namespace, e.opts.Name, e.opts.Identity)
	}
}

// release gives the Lease up, if this replica holds it: no holder, and a
// duration of a second, as client-go releases it.
func (e *election) release() {
	if !e.leader.Leading() {
		return
	}
	e.leader.set(false)
	ctx, cancel := context.WithTimeout(context.Background(), e.opts.RenewDeadline)
	defer cancel()
	lease, err := e.lease(ctx)
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != e.opts.Identity {
		return
	}
	one, now := int32(1), metav1.MicroTime{Time: time.Now()}
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds, lease.Spec.RenewTime = nil, &one, &now
	_ = e.client.Put().Namespace(e.opts.Namespace).Resource("leases").Name(e.opts.Name).Body(lease).Do(ctx).Error()
}
