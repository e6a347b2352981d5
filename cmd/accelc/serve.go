package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/serve"
)

func newServeCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv     inventoryFlags
		listen  string
		refresh time.Duration
		grace   time.Duration
		reload  time.Duration
		config  string
		opts    serve.Options
		// recordTypes writes the type each bound pod of a multi-type or
		// generic profile got on the pod.
		recordTypes bool
	)
	cmd := &cobra.Command{
		Use:   "serve [CLUSTER_DIR]",
		Short: "Serve the hardware catalog live: a JSON API, metrics and a page",
		Long: `serve holds the cluster's compiled catalog and serves it with the devices
available now. With --live it watches the nodes, the pods that hold
accelerators and the ResourceSlices of the cluster of the current
kubeconfig context, and counts again within a moment of each change, as
` + "`accelc catalog`" + ` and ` + "`accelc inventory show`" + ` count; with --inventory (or the
cluster directory's inventory.json) it serves that snapshot. With --live it
also watches Kueue's Workloads, where it may, to say per profile what waits.

  GET /                        the page: profiles with their availability, nodes by type
  GET /api/v1/profiles         every profile with its types and availability, and
                               for one queued through Kueue, what waits and how long
  GET /api/v1/profiles/{name}  one profile
  GET /api/v1/nodes            the node view (?type=, sharing=, status=, sort-by=)
  GET /api/v1/recommend        recommend (?min-memory=, prefer-arch=, gpus=, model=,
                               min-throughput=, max-cost=, team=)
  GET /api/v1/estimate         estimate (?params=, tokens=, precision=, mfu=, gpus=,
                               model=, profile=)
  GET /healthz, /readyz, /metrics

Responses carry an ETag and answer If-None-Match with 304. It is
read-only, listens on 127.0.0.1 unless --listen says otherwise, and stops
gracefully on SIGTERM or SIGINT.

With --live --record-types it writes one thing: on each pod of a
multi-type or generic profile in a team's namespace, once bound, its
node's type in the <labelPrefix>/type annotation, for cost attribution
(it needs patch on pods; catalogService.recordTypes renders the RBAC and
the admission policy that confine it to that annotation).`,
		Example: `  accelc serve examples/clusters/hetero-prod
  accelc serve --config examples/clusters/hetero-prod --inventory snapshot.json
  accelc serve clusters/prod --live --listen 0.0.0.0:8080`,
		Args:              maxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := inv.source()
			if err != nil {
				return err
			}
			if _, _, err := net.SplitHostPort(listen); err != nil {
				return usageErr("--listen %q: write HOST:PORT, such as 127.0.0.1:8080", listen)
			}
			if recordTypes && !src.Live {
				return usageErr("--record-types writes on the cluster's pods: give --live")
			}
			dir := dirArg(args)
			if config != "" {
				if len(args) > 0 {
					return usageErr("give the cluster directory once: as an argument or as --config")
				}
				dir = config
			}
			load := accelc.Options{SkipCheck: true, NoInventory: true, SkipSelectorCheck: true}
			res, err := loadCluster(cmd.Context(), dir, &inv, load, stderr)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if msg := serve.SetMemoryLimit(); msg != "" {
				fmt.Fprintln(stderr, msg)
			}
			var nodes serve.Source
			var watcher *serve.Watcher
			var recorder *serve.Recorder
			if src.Live {
				if watcher, err = serve.NewWatcher(serve.WatchOptions{Options: src.LiveOptions}); err != nil {
					return &exitError{exitOutside, err}
				}
				nodes = watcher
				if recordTypes {
					if recorder, err = serve.NewRecorder(watcher, res.Model, serve.RecordOptions{Log: stderr}); err != nil {
						return &exitError{exitOutside, err}
					}
				}
			} else {
				snap, from, diags, err := src.Snapshot(ctx, dir)
				printDiagnostics(stderr, diags)
				if err != nil {
					return libraryErr(err)
				}
				if snap == nil {
					return usageErr("no inventory: give --inventory FILE, --live, or a cluster directory with an inventory.json")
				}
				fmt.Fprintf(stderr, "serving %s's catalog over %s, which does not change: --live follows the cluster\n", res.Model.Cluster.Name, from)
				nodes = serve.Static{Snap: snap}
			}
			opts.Refresh = refresh
			srv := serve.New(res.Model, nodes, opts)
			if recorder != nil {
				if err := srv.Register(recorder.Collectors()...); err != nil {
					return err
				}
			}
			g, gctx := errgroup.WithContext(ctx)
			if watcher != nil {
				g.Go(func() error {
					if err := watcher.Run(gctx); err != nil {
						return &exitError{exitOutside, err}
					}
					return nil
				})
			}
			g.Go(func() error { srv.Run(gctx); return nil })
			if recorder != nil {
				g.Go(func() error { recorder.Run(gctx); return nil })
			}
			if reload > 0 {
				g.Go(func() error {
					watchConfig(gctx, dir, reload, func() {
						res, err := loadCluster(gctx, dir, &inv, load, stderr)
						if err != nil {
							fmt.Fprintf(stderr, "the configuration in %s changed and does not compile: still serving the previous one: %v\n", dir, err)
							return
						}
						srv.SetModel(res.Model)
						if recorder != nil {
							recorder.SetModel(res.Model)
						}
						fmt.Fprintf(stderr, "the configuration in %s changed: serving it\n", dir)
					})
					return nil
				})
			}
			g.Go(func() error {
				err := srv.ListenAndServe(gctx, listen, grace, func(a net.Addr) {
					fmt.Fprintf(stderr, "serving %s on http://%s/ (API under /api/%s/)\n", res.Model.Cluster.Name, a, serve.APIVersion)
				})
				if err != nil {
					return &exitError{exitOutside, fmt.Errorf("--listen %s: %w", listen, err)}
				}
				// It returns nil once gctx ends: on a signal, or when the
				// watcher failed, whose error Wait returns.
				return nil
			})
			err = g.Wait()
			if ctx.Err() != nil {
				fmt.Fprintln(stderr, "stopped")
				return nil
			}
			return err
		},
	}
	inv.bind(cmd, true)
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:8080", "address to listen on, HOST:PORT (0.0.0.0:8080 for every interface, as in a pod)")
	f.DurationVar(&refresh, "refresh", 5*time.Second, "how often the page asks for news")
	f.DurationVar(&grace, "shutdown-grace", 10*time.Second, "how long requests in flight may finish after SIGTERM")
	f.StringVar(&config, "config", "", "cluster directory (as inventory show names it; or give it as the argument)")
	_ = cmd.MarkFlagDirname("config")
	f.BoolVar(&recordTypes, "record-types", false, "with --live: write each bound pod's node type on pods of multi-type and generic profiles (<labelPrefix>/type annotation; needs patch on pods)")
	f.DurationVar(&reload, "reload", 0, "look this often for a changed configuration in CLUSTER_DIR (its .cue files) and serve it (0: never)")
	f.IntVar(&opts.MaxInFlight, "max-in-flight", 256, "requests served at once; more get 503 with Retry-After")
	f.DurationVar(&opts.RequestTimeout, "request-timeout", 10*time.Second, "the most one request may take")
	return cmd
}

// watchConfig calls changed whenever the .cue files of dir change, looking
// every interval, until ctx ends. A ConfigMap mounted as a volume changes
// all at once (the kubelet swaps a link), so a half-written state is not
// seen.
func watchConfig(ctx context.Context, dir string, every time.Duration, changed func()) {
	last := configHash(dir)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if h := configHash(dir); h != last {
			last = h
			changed()
		}
	}
}

// configHash sums the names and contents of dir's .cue files.
func configHash(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*.cue"))
	sum := sha256.New()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		fmt.Fprintf(sum, "%s\x00%d\x00", filepath.Base(f), len(data))
		sum.Write(data)
	}
	return hex.EncodeToString(sum.Sum(nil))
}
