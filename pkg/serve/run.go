package serve

// Running accelc serve: its options, the watch, the server and the
// writers started together, and reloading the configuration.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/compile"
)

// RunOptions say what `accelc serve` serves and how.
type RunOptions struct {
	Options
	// Dir is the cluster directory; Limits bound its CUE evaluation.
	Dir    string
	Limits compile.Limits
	// Inventory is where the nodes come from: Live watches the cluster,
	// otherwise the snapshot (File, else Dir's inventory.json) is served
	// as it is.
	Inventory accelc.Source
	// Listen is HOST:PORT; Grace is how long requests in flight may
	// finish once ctx ends.
	Listen string
	Grace  time.Duration
	// RecordTypes writes, with Live, each bound pod's node type on the
	// pods of multi-type and generic profiles.
	RecordTypes bool
	// LiveDescriptions keeps, with Live, each HardwareProfile's
	// description current with its availability and wait (describe.go),
	// writing one profile at most once per DescribeInterval.
	LiveDescriptions bool
	DescribeInterval time.Duration
	// Reload, when positive, is how often Dir's .cue files are looked at:
	// a changed configuration that compiles is served.
	Reload time.Duration
	// Log gets what the server says (where it listens, reloads, the
	// Go memory limit); nil discards it.
	Log io.Writer
	// NoAuth, with Live, serves anyone who reaches the server; otherwise
	// Live asks the cluster who each request is and what it may read
	// (Access). A snapshot is served to anyone: there is no cluster to
	// ask.
	NoAuth bool
	// AccessOptions bound how long the cluster's answers are kept.
	AccessOptions AccessOptions
	// TLSCertFile and TLSKeyFile, both or neither, serve HTTPS with the
	// certificate and key in them (PEM), read again when they change.
	TLSCertFile, TLSKeyFile string
	// LeaderElect, with Live, has the replicas elect the one that writes
	// (RecordTypes) on a Lease (Leader); the others serve reads and wait.
	LeaderElect bool
	Leader      LeaderOptions
	// Webhook, with its Listen, runs accelc's mutating admission webhook
	// beside the catalog (webhook.go).
	Webhook WebhookOptions
}

// check refuses options that cannot work together, before anything is
// read: they are accelc.UsageErrors.
func (o *RunOptions) check() error {
	if _, _, err := net.SplitHostPort(o.Listen); err != nil {
		return &accelc.UsageError{Err: fmt.Errorf("--listen %q: write HOST:PORT, such as 127.0.0.1:8080", o.Listen)}
	}
	if o.RecordTypes && !o.Inventory.Live {
		return &accelc.UsageError{Err: errors.New("--record-types writes on the cluster's pods: give --live")}
	}
	if o.LiveDescriptions && !o.Inventory.Live {
		return &accelc.UsageError{Err: errors.New("--live-descriptions writes the cluster's availability on its HardwareProfiles: give --live")}
	}
	if o.LeaderElect && !o.Inventory.Live {
		return &accelc.UsageError{Err: errors.New("--leader-elect elects on a Lease in the cluster: give --live")}
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return &accelc.UsageError{Err: errors.New("give --tls-cert-file and --tls-key-file together: the certificate and its key")}
	}
	return o.Webhook.check()
}

// Run compiles the cluster in opts.Dir and serves its catalog with the
// devices available now until ctx ends, watching the cluster with Live
// (and recording types where asked) and the configuration with Reload.
// A configuration that does not compile is the input's error; a cluster
// that cannot be watched or an address that cannot be listened on is an
// accelc.OutsideError. It returns nil once ctx ends.
func Run(ctx context.Context, opts RunOptions) error {
	if err := opts.check(); err != nil {
		return err
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	load := func(ctx context.Context) (*compile.Model, error) {
		res, err := accelc.Cluster(ctx, opts.Dir, accelc.Options{Limits: opts.Limits})
		if err != nil {
			return nil, err
		}
		// A MultiKueue manager's dispatched profiles count the nodes of
		// the workers they go to, from the snapshots beside it.
		for _, d := range accelc.ReadWorkerNodes(ctx, opts.Dir, res.Model, opts.Limits) {
			fmt.Fprintln(log, d)
		}
		return res.Model, nil
	}
	m, err := load(ctx)
	if err != nil {
		return err
	}
	if msg := SetMemoryLimit(); msg != "" {
		fmt.Fprintln(log, msg)
	}
	r := &running{opts: opts, log: log}
	var certs func(context.Context)
	if opts.TLSCertFile != "" {
		if r.opts.TLS, certs, err = servingTLS(opts.TLSCertFile, opts.TLSKeyFile, log); err != nil {
			return err
		}
	}
	if err := r.nodes(ctx, m); err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	if certs != nil {
		g.Go(func() error { certs(gctx); return nil })
	}
	r.start(g, gctx)
	if opts.Webhook.Listen != "" {
		g.Go(func() error { return serveWebhook(gctx, opts.Webhook, opts.Grace, log) })
	}
	if opts.Reload > 0 {
		g.Go(func() error {
			WatchConfig(gctx, os.DirFS(opts.Dir), opts.Reload, func() { r.reload(gctx, load) })
			return nil
		})
	}
	g.Go(func() error {
		scheme := "http"
		if r.opts.TLS != nil {
			scheme = "https"
		}
		err := r.srv.ListenAndServe(gctx, opts.Listen, opts.Grace, func(a net.Addr) {
			fmt.Fprintf(log, "serving %s on %s://%s/ (API under /api/%s/)\n", m.Cluster.Name, scheme, a, APIVersion)
		})
		if err != nil {
			return &accelc.OutsideError{Err: fmt.Errorf("--listen %s: %w", opts.Listen, err)}
		}
		// It returns nil once gctx ends: on a signal, or when the
		// watcher failed, whose error Wait returns.
		return nil
	})
	err = g.Wait()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// running is a server with what feeds it.
type running struct {
	opts     RunOptions
	log      io.Writer
	srv      *Server
	watcher  *Watcher
	recorder *Recorder
	// describer writes the profiles' descriptions, while this replica
	// leads.
	describer *Describer
	// leader is the replicas' election, with LeaderElect.
	leader *Leader
}

// nodes sets up where the nodes come from and the server over them.
func (r *running) nodes(ctx context.Context, m *compile.Model) error {
	var src Source
	if r.opts.Inventory.Live {
		w, err := NewWatcher(WatchOptions{Options: r.opts.Inventory.LiveOptions})
		if err != nil {
			return &accelc.OutsideError{Err: err}
		}
		r.watcher, src = w, w
		if r.opts.LeaderElect {
			if err := r.opts.Leader.defaults(); err != nil {
				return &accelc.UsageError{Err: err}
			}
			r.leader = newLeader(false)
		}
		if r.opts.RecordTypes {
			if r.recorder, err = NewRecorder(w, m, RecordOptions{Log: r.log, Leader: r.leader}); err != nil {
				return &accelc.OutsideError{Err: err}
			}
		}
		if r.opts.NoAuth {
			fmt.Fprintln(r.log, "--auth=false: serving anyone who reaches this address, node names and what each namespace's pods hold included")
		} else if r.opts.Access, err = NewAccess(w.cfg, r.opts.AccessOptions); err != nil {
			return &accelc.OutsideError{Err: w.redact(err)}
		}
	} else {
		read, err := r.opts.Inventory.Snapshot(ctx, r.opts.Dir)
		for _, d := range read.Diagnostics {
			fmt.Fprintln(r.log, d)
		}
		if err != nil {
			return err
		}
		if read.Snapshot == nil {
			return &accelc.UsageError{Err: errors.New("no inventory: give --inventory FILE, --live, or a cluster directory with an inventory.json")}
		}
		fmt.Fprintf(r.log, "serving %s's catalog over %s, which does not change: --live follows the cluster\n", m.Cluster.Name, read.From)
		src = Static{Snap: read.Snapshot}
	}
	r.srv = New(m, src, r.opts.Options)
	if r.leader != nil {
		if err := r.srv.Register(r.leader.gauge); err != nil {
			return err
		}
	}
	if r.recorder != nil {
		if err := r.srv.Register(r.recorder.Collectors()...); err != nil {
			return err
		}
	}
	if r.opts.LiveDescriptions {
		d, err := NewDescriber(r.watcher, r.srv, m, DescribeOptions{Interval: r.opts.DescribeInterval, Log: r.log, Leader: r.leader})
		if err != nil {
			return &accelc.OutsideError{Err: err}
		}
		r.describer = d
		return r.srv.Register(d.Collectors()...)
	}
	return nil
}

// start runs the watcher, the server's refresh and the recorder in g.
func (r *running) start(g *errgroup.Group, ctx context.Context) {
	if r.watcher != nil {
		g.Go(func() error {
			if err := r.watcher.Run(ctx); err != nil {
				return &accelc.OutsideError{Err: err}
			}
			return nil
		})
	}
	g.Go(func() error { r.srv.Run(ctx); return nil })
	if r.leader != nil {
		g.Go(func() error {
			if err := r.leader.elect(ctx, r.watcher.cfg, r.opts.Leader, r.log); err != nil {
				return &accelc.OutsideError{Err: fmt.Errorf("--leader-elect: %w", r.watcher.redact(err))}
			}
			return nil
		})
	}
	if r.recorder != nil {
		g.Go(func() error { r.recorder.Run(ctx); return nil })
	}
	if r.describer != nil {
		g.Go(func() error { r.describer.Run(ctx); return nil })
	}
}

// reload serves the configuration again, or says why it still serves
// the previous one.
func (r *running) reload(ctx context.Context, load func(context.Context) (*compile.Model, error)) {
	m, err := load(ctx)
	if err != nil {
		fmt.Fprintf(r.log, "the configuration in %s changed and does not compile: still serving the previous one: %v\n", r.opts.Dir, err)
		return
	}
	r.srv.SetModel(m)
	if r.recorder != nil {
		r.recorder.SetModel(m)
	}
	fmt.Fprintf(r.log, "the configuration in %s changed: serving it\n", r.opts.Dir)
}

// WatchConfig calls changed whenever the .cue files at the top of fsys
// (a cluster directory) change, looking every interval, until ctx ends.
// A ConfigMap mounted as a volume changes all at once (the kubelet swaps
// a link), so a half-written state is not seen.
func WatchConfig(ctx context.Context, fsys fs.FS, every time.Duration, changed func()) {
	last := ConfigDigest(fsys)
	eachTick(ctx, every, func() {
		if h := ConfigDigest(fsys); h != last {
			last = h
			changed()
		}
	})
}

// eachTick calls fn every d (not at once) until ctx ends: the files the
// server reads again (its configuration, certificate, webhook mutations).
func eachTick(ctx context.Context, d time.Duration, fn func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		fn()
	}
}

// ConfigDigest sums the names and contents of the .cue files at the top
// of fsys; a file that cannot be read is left out.
func ConfigDigest(fsys fs.FS) string {
	files, _ := fs.Glob(fsys, "*.cue")
	sum := sha256.New()
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			continue
		}
		fmt.Fprintf(sum, "%s\x00%d\x00", path.Base(f), len(data))
		sum.Write(data)
	}
	return hex.EncodeToString(sum.Sum(nil))
}

// servingTLS is a TLS configuration that serves the certificate and key
// in certFile and keyFile, and a function that reads them again every
// certReload until ctx ends, serving a new pair once it loads: a mounted
// Secret's files are swapped at once (the kubelet moves a link) when
// cert-manager or OpenShift's service CA renews the certificate.
func servingTLS(certFile, keyFile string, log io.Writer) (*tls.Config, func(context.Context), error) {
	var cur atomic.Pointer[tls.Certificate]
	var certPEM, keyPEM []byte
	load := func() (bool, error) {
		c, err := os.ReadFile(certFile)
		if err != nil {
			return false, err
		}
		k, err := os.ReadFile(keyFile)
		if err != nil {
			return false, err
		}
		if bytes.Equal(c, certPEM) && bytes.Equal(k, keyPEM) {
			return false, nil
		}
		pair, err := tls.X509KeyPair(c, k)
		if err != nil {
			return false, err
		}
		cur.Store(&pair)
		certPEM, keyPEM = c, k
		return true, nil
	}
	if _, err := load(); err != nil {
		return nil, nil, &accelc.UsageError{Err: fmt.Errorf("--tls-cert-file %s, --tls-key-file %s: %w", certFile, keyFile, err)}
	}
	watch := func(ctx context.Context) {
		eachTick(ctx, certReload, func() {
			switch changed, err := load(); {
			case err != nil:
				fmt.Fprintf(log, "the certificate in %s and its key in %s do not load: still serving the previous one: %v\n", certFile, keyFile, err)
			case changed:
				fmt.Fprintf(log, "the certificate in %s changed: serving it\n", certFile)
			}
		})
	}
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return cur.Load(), nil },
	}, watch, nil
}

// certReload is how often the certificate's files are read again.
const certReload = 30 * time.Second
