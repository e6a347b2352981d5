package main

import (
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/accelc/accelc/internal/cli"
	"github.com/accelc/accelc/pkg/serve"
)

func newServeCmd(stdout, stderr io.Writer) *cobra.Command {
	var (
		inv    inventoryFlags
		config string
		auth   bool
		opts   serve.RunOptions
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

With --live it serves only requests whose bearer token the cluster knows
(TokenReview), and each user only what the cluster lets it read
(SubjectAccessReview): the catalog to whoever may list hardwareprofiles
(infrastructure.opendatahub.io) in the profile namespace, the node view
to whoever may list nodes, /metrics to whoever may get /metrics, and what
a namespace's pods hold to whoever may list its pods; /healthz and /readyz
to anyone. A browser without a token gets a page that asks for one.
--auth=false serves anyone who reaches it (for a laptop, behind
kubectl port-forward). A snapshot (no --live) is served to anyone.
--tls-cert-file and --tls-key-file serve HTTPS, reading the files again
when they change.

--webhook-listen also serves accelc's mutating admission webhook (POST
/mutate, AdmissionReview v1, over HTTPS with --webhook-tls-cert-file and
--webhook-tls-key-file) on an address of its own: on a cluster before
Kubernetes 1.36, which serves no MutatingAdmissionPolicy, it does what
accelc's policies do on 1.36 (the profile label from Open Data Hub's
annotation on pods and workload templates, a new Job's LocalQueue and
priority labels), as --webhook-mutations says, and never refuses.

With --live --record-types it writes one thing: on each pod of a
multi-type or generic profile in a team's namespace, once bound, its
node's type in the <labelPrefix>/type annotation, for cost attribution
(it needs patch on pods; catalogService.recordTypes renders the RBAC and
the admission policy that confine it to that annotation). With several
replicas, --leader-elect has them elect the one that writes on a Lease
(coordination.k8s.io): the others serve reads and wait.

With --live --live-descriptions it keeps each HardwareProfile's
opendatahub.io/description, which Open Data Hub's profile picker shows,
current with the page's figures: "NVIDIA H100 80GB · 32 available ·
2 pending · about 15 min wait", then the profile's own description, by
server-side apply under field manager accelc-serve, at most once per
profile per --describe-interval, from the leader alone with --leader-elect
(catalogService.liveDescriptions renders the RBAC and the admission
policy, and leaves the annotation out of the rendered profiles so that
Flux does not take it back).`,
		Example: `  accelc serve examples/clusters/hetero-prod
  accelc serve --config examples/clusters/hetero-prod --inventory snapshot.json
  accelc serve clusters/prod --live --listen 0.0.0.0:8080`,
		Args:              cli.MaxArgs(1),
		ValidArgsFunction: completeClusterDir,
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := inv.source()
			if err != nil {
				return err
			}
			opts.Dir = dirArg(args)
			if config != "" {
				if len(args) > 0 {
					return cli.UsageErr("give the cluster directory once: as an argument or as --config")
				}
				opts.Dir = config
			}
			opts.Inventory, opts.Limits, opts.Log, opts.NoAuth = src, limitsOf(cmd.Context()), stderr, !auth
			clientGoTo(stderr)
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			if err := serve.Run(ctx, opts); err != nil {
				return libraryErr(err)
			}
			if ctx.Err() != nil {
				fmt.Fprintln(stderr, "stopped")
			}
			return nil
		},
	}
	inv.bind(cmd, true)
	f := cmd.Flags()
	f.StringVar(&opts.Listen, "listen", "127.0.0.1:8080", "address to listen on, HOST:PORT (0.0.0.0:8080 for every interface, as in a pod)")
	f.DurationVar(&opts.Refresh, "refresh", 5*time.Second, "how often the page asks for news")
	f.DurationVar(&opts.Grace, "shutdown-grace", 10*time.Second, "how long requests in flight may finish after SIGTERM")
	f.StringVar(&config, "config", "", "cluster directory (as inventory show names it; or give it as the argument)")
	_ = cmd.MarkFlagDirname("config")
	f.BoolVar(&opts.RecordTypes, "record-types", false, "with --live: write each bound pod's node type on pods of multi-type and generic profiles (<labelPrefix>/type annotation; needs patch on pods)")
	f.BoolVar(&opts.LiveDescriptions, "live-descriptions", false, "with --live: keep each HardwareProfile's opendatahub.io/description current with its availability and wait (needs patch on hardwareprofiles)")
	f.DurationVar(&opts.DescribeInterval, "describe-interval", 30*time.Second, "with --live-descriptions: the least time between two writes of one profile's description")
	f.DurationVar(&opts.Reload, "reload", 0, "look this often for a changed configuration in CLUSTER_DIR (its .cue files) and serve it (0: never)")
	f.IntVar(&opts.MaxInFlight, "max-in-flight", 256, "requests served at once; more get 503 with Retry-After")
	f.DurationVar(&opts.RequestTimeout, "request-timeout", 10*time.Second, "the most one request may take")
	f.BoolVar(&auth, "auth", true, "with --live: serve only requests whose bearer token the cluster knows, each user what the cluster lets it read (false: anyone who reaches the address)")
	f.StringVar(&opts.TLSCertFile, "tls-cert-file", "", "serve HTTPS with the certificate in this PEM file (with --tls-key-file; read again when it changes)")
	f.StringVar(&opts.TLSKeyFile, "tls-key-file", "", "the private key of --tls-cert-file (PEM)")
	f.StringVar(&opts.Webhook.Listen, "webhook-listen", "", "also serve accelc's mutating admission webhook (POST /mutate, HTTPS) on this HOST:PORT: what accelc's MutatingAdmissionPolicies do, for a cluster before Kubernetes 1.36")
	f.StringVar(&opts.Webhook.CertFile, "webhook-tls-cert-file", "", "the webhook's serving certificate (PEM; read again when it changes)")
	f.StringVar(&opts.Webhook.KeyFile, "webhook-tls-key-file", "", "the private key of --webhook-tls-cert-file (PEM)")
	f.StringVar(&opts.Webhook.MutationsFile, "webhook-mutations", "", "the webhook's mutations as accelc renders them (mutations.json of ConfigMap accelc-catalog-admission; read again when it changes)")
	f.BoolVar(&opts.LeaderElect, "leader-elect", false, "with --live: replicas elect the one that writes (--record-types, --live-descriptions) on a Lease; the others serve reads and wait")
	f.StringVar(&opts.Leader.Namespace, "leader-elect-namespace", "", "the Lease's namespace (default: the pod's)")
	f.StringVar(&opts.Leader.Name, "leader-elect-name", serve.DefaultLeaseName, "the Lease's name")

	return cmd
}
