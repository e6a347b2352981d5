package serve

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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaderOptions say where the replicas of the catalog service elect the
// one that writes (client-go's leader election, on a coordination.k8s.io
// Lease): the others serve reads and wait.
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

// elect campaigns for the Lease until ctx ends: leading while it holds
// it; once it loses it (it could not renew in time), it stops writing and
// campaigns again, serving reads meanwhile. It gives the Lease up when ctx
// ends, so that the other replica takes over at once rather than after
// the lease's duration.
func (l *Leader) elect(ctx context.Context, cfg *rest.Config, opts LeaderOptions, log io.Writer) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: opts.Namespace, Name: opts.Name},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: opts.Identity},
	}
	for ctx.Err() == nil {
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			LeaseDuration:   opts.LeaseDuration,
			RenewDeadline:   opts.RenewDeadline,
			RetryPeriod:     opts.RetryPeriod,
			ReleaseOnCancel: true,
			Name:            opts.Name,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) {
					fmt.Fprintf(log, "leader election: %s holds Lease %s/%s: writing\n", opts.Identity, opts.Namespace, opts.Name)
					l.set(true)
				},
				OnStoppedLeading: func() {
					l.set(false)
					if ctx.Err() == nil {
						fmt.Fprintf(log, "leader election: %s lost Lease %s/%s: serving reads, campaigning again\n", opts.Identity, opts.Namespace, opts.Name)
					}
				},
				OnNewLeader: func(id string) {
					if id != opts.Identity {
						fmt.Fprintf(log, "leader election: %s holds Lease %s/%s: %s serves reads and waits\n", id, opts.Namespace, opts.Name, opts.Identity)
					}
				},
			},
		})
		if err != nil {
			return err
		}
		le.Run(ctx)
	}
	return nil
}
