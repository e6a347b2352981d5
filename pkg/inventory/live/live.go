// Package live reads a cluster's nodes, the accelerators pods use on
// them and the ResourceSlices that publish their devices (Dynamic Resource
// Allocation), from the API server. It is apart from pkg/inventory so that what
// renders never links client-go; and it uses only client-go's kubeconfig
// handling and REST client, not the clientset, so that accelc links no
// API group it does not read. Lists come from the watch cache as
// protobuf, and are decoded item by item as they arrive, reading only the
// fields a snapshot keeps (proto.go).
package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/accelc/accelc/pkg/inventory"
	"github.com/accelc/accelc/pkg/safeurl"
)

// Options say which cluster to read and how.
type Options struct {
	// Kubeconfig is an explicit kubeconfig file; empty follows the usual
	// rules ($KUBECONFIG, then ~/.kube/config).
	Kubeconfig string
	// Context is the kubeconfig context; empty means the current one.
	Context string
	// PageSize is the number of objects per list request where the
	// server pages (etcd does; the watch cache answers with the whole
	// list). Default 2000: a page of pods stays under ~10 MB. No list is
	// held whole either way: items are decoded as they arrive.
	PageSize int64
	// SkipPods leaves pods out: no GPUs in use are counted.
	SkipPods bool
}

// Error is a failure to read a cluster: unreachable, refused or
// misconfigured. It names the server and context, and for a refusal the
// RBAC permission that is missing. Its message holds no credentials: URLs
// in it are rebuilt without userinfo or query (safeurl), and the
// kubeconfig's secrets for that cluster and user are replaced wherever
// they appear.
type Error struct {
	Context string
	// Server is the API server's URL, without userinfo or query.
	Server string
	Err    error
	// secrets are what the message must not show.
	secrets []string
}

func (e *Error) Error() string {
	where := "--live"
	if e.Server != "" {
		where = "the API server " + e.Server
	}
	if e.Context != "" {
		where += " (context " + e.Context + ")"
	}
	return safeurl.Redact(where+": "+e.Err.Error(), e.secrets...)
}

func (e *Error) Unwrap() error { return e.Err }

const defaultPageSize = 2000

// Read lists the nodes of a cluster, the pods bound to them to count
// the accelerators in use, and the ResourceSlices of the accelerator DRA
// drivers accelc reads (inventory.IsAcceleratorDriver), redacted. A
// cluster that cannot be reached or refuses to list nodes is an *Error;
// pods it may not list become a warning, and the snapshot has no use
// counts; ResourceSlices it may not list, or does not serve
// (resource.k8s.io/v1 came with Kubernetes 1.34), become a warning, and
// the nodes are classified by their labels.
func Read(ctx context.Context, opts Options) (*inventory.Snapshot, error) {
	return read(ctx, opts, fastest)
}

func read(ctx context.Context, opts Options, m method) (*inventory.Snapshot, error) {
	cfg, contextName, clusterName, secrets, err := restConfig(opts)
	if err != nil {
		return nil, err
	}
	wrap := func(err error) error {
		return &Error{Context: contextName, Server: serverName(cfg.Host, secrets), Err: explain(err), secrets: secrets}
	}
	c, err := coreV1(cfg, m)
	if err != nil {
		return nil, wrap(err)
	}
	rc, err := resourceV1(cfg, m)
	if err != nil {
		return nil, wrap(err)
	}
	l := lister{c: c, m: m, pageSize: opts.PageSize}
	if l.pageSize <= 0 {
		l.pageSize = defaultPageSize
	}
	rl := l
	rl.c = rc
	snap := &inventory.Snapshot{Source: &inventory.Source{Cluster: clusterName, TakenAt: time.Now().UTC().Truncate(time.Second)}}

	resourceSlices := make(chan sliceResult, 1)
	go func() {
		s, err := listSlices(ctx, rl)
		resourceSlices <- sliceResult{s, err}
	}()
	namespaces := make(chan namespaceResult, 1)
	go func() {
		ns, err := listNamespaces(ctx, l)
		namespaces <- namespaceResult{ns, err}
	}()

	// Nodes and pods are listed at once: on a large cluster the pods take
	// longest.
	pods := make(chan podResult, 1)
	if !opts.SkipPods {
		go func() {
			inUse, err := listInUse(ctx, l)
			pods <- podResult{inUse, err}
		}()
	}
	nodes, err := listNodes(ctx, l)
	if err != nil {
		return nil, wrap(err)
	}
	snap.Nodes = nodes
	if err := addSlices(snap, <-resourceSlices, secrets); err != nil {
		return nil, wrap(err)
	}
	if err := addNamespaces(snap, <-namespaces, secrets); err != nil {
		return nil, wrap(err)
	}
	if opts.SkipPods {
		return snap, nil
	}
	if err := addInUse(snap, <-pods, secrets); err != nil {
		return nil, wrap(err)
	}
	return snap, nil
}

// sliceResult is the listing of the ResourceSlices.
type sliceResult struct {
	slices []inventory.ResourceSlice
	err    error
}

// namespaceResult is the listing of the namespaces' names.
type namespaceResult struct {
	names []string
	err   error
}

// podResult is the listing of the pods: what they use per node.
type podResult struct {
	inUse map[string]map[string]int // node → namespace → devices
	err   error
}

// addSlices puts the listed ResourceSlices in the snapshot, or a warning
// where the cluster does not serve them or may not list them; another
// error is the listing's.
func addSlices(snap *inventory.Snapshot, sr sliceResult, secrets []string) error {
	switch {
	case sr.err == nil:
		snap.Slices = sr.slices
	case apierrors.IsNotFound(sr.err):
		snap.Warnings = append(snap.Warnings, "the API server does not serve resource.k8s.io/v1 ResourceSlices (Dynamic Resource Allocation, Kubernetes 1.34 and later): nodes are classified by their labels")
	case apierrors.IsForbidden(sr.err):
		snap.Warnings = append(snap.Warnings, safeurl.Redact(fmt.Sprintf(
			"may not list resourceslices (RBAC: verb list on resourceslices in API group resource.k8s.io, cluster-wide): nodes are classified by their labels; %v", sr.err), secrets...))
	default:
		return sr.err
	}
	return nil
}

// addNamespaces records the cluster's namespaces in the snapshot's
// source, against which vet checks cluster.excludedNamespaces, or a
// warning where it may not list them; another error is the listing's.
func addNamespaces(snap *inventory.Snapshot, nr namespaceResult, secrets []string) error {
	switch {
	case nr.err == nil:
		snap.Source.Namespaces = nr.names
	case apierrors.IsForbidden(nr.err):
		snap.Warnings = append(snap.Warnings, safeurl.Redact(fmt.Sprintf(
			"may not list namespaces (RBAC: verb list on namespaces, cluster-wide): cluster.excludedNamespaces are not checked against the namespaces the cluster has; %v", nr.err), secrets...))
	default:
		return nr.err
	}
	return nil
}

// addInUse annotates the snapshot's nodes with what the pods use, or
// warns, first, where it may not list pods; another error is the
// listing's.
func addInUse(snap *inventory.Snapshot, pr podResult, secrets []string) error {
	switch {
	case pr.err == nil:
		snap.Source.PodsCounted = true
		for i := range snap.Nodes {
			n := &snap.Nodes[i]
			if byNS := pr.inUse[n.Metadata.Name]; len(byNS) > 0 {
				inventory.SetInUse(n, byNS)
			}
		}
	case apierrors.IsForbidden(pr.err):
		// Before the slices' warning: pods were asked for first.
		snap.Warnings = append([]string{safeurl.Redact(fmt.Sprintf(
			"may not list pods in all namespaces (RBAC: verb list on pods, cluster-wide): GPUs in use are not counted; %v", pr.err), secrets...)}, snap.Warnings...)
	default:
		return pr.err
	}
	return nil
}

// restConfig resolves the kubeconfig the way kubectl does. secrets are
// what errors must not show: the userinfo in the context's server URL,
// and its user's password and token.
func restConfig(opts Options) (cfg *rest.Config, contextName, clusterName string, secrets []string, err error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if opts.Kubeconfig != "" {
		rules.ExplicitPath = opts.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: opts.Context})
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, "", "", nil, &Error{Context: opts.Context, Err: fmt.Errorf("reading the kubeconfig: %w", err)}
	}
	contextName = opts.Context
	if contextName == "" {
		contextName = raw.CurrentContext
	}
	if c, ok := raw.Contexts[contextName]; ok {
		clusterName = c.Cluster
		if cl, ok := raw.Clusters[c.Cluster]; ok {
			secrets = append(secrets, safeurl.UserInfo(cl.Server))
			if _, q, ok := strings.Cut(cl.Server, "?"); ok {
				secrets = append(secrets, q)
			}
		}
		if u, ok := raw.AuthInfos[c.AuthInfo]; ok {
			secrets = append(secrets, u.Password, u.Token)
		}
	}
	cfg, err = cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			err = errors.New("no kubeconfig: set KUBECONFIG, pass --kubeconfig, or create ~/.kube/config")
		}
		return nil, "", "", nil, &Error{Context: contextName, Err: err, secrets: secrets}
	}
	cfg = rest.CopyConfig(cfg)
	secrets = append(secrets, safeurl.UserInfo(cfg.Host), cfg.Password, cfg.BearerToken)
	// Protobuf is smaller than JSON and cheaper to decode; every built-in
	// API server speaks it.
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = 50, 100
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	cfg.UserAgent = "accelc"
	return cfg, contextName, clusterName, secrets, nil
}

// serverName is the API server's URL as errors name it: without userinfo
// or query.
func serverName(host string, secrets []string) string {
	if !strings.Contains(host, "://") {
		return safeurl.Redact(host, secrets...)
	}
	if u, ok := safeurl.URL(host); ok {
		return u
	}
	return safeurl.Redact(host, secrets...)
}

// listNodes keeps of each node what classification reads and drops the
// rest: node addresses, machine and boot ids, images and managed fields
// never reach a snapshot.
func listNodes(ctx context.Context, l lister) ([]inventory.RawNode, error) {
	var out []inventory.RawNode
	err := l.list(ctx, "nodes", "NodeList", "",
		func(b []byte) error {
			n, err := decodeNode(b)
			out = append(out, n)
			return err
		},
		func(d *json.Decoder) error {
			n, err := decodeJSONNode(d)
			out = append(out, n)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Metadata.Name < out[j].Metadata.Name })
	return out, nil
}

// listSlices lists the ResourceSlices of the accelerator drivers accelc
// reads, and drops what identifies a device (inventory.AcceleratorSlices).
func listSlices(ctx context.Context, l lister) ([]inventory.ResourceSlice, error) {
	var out []inventory.ResourceSlice
	keep := func(s inventory.ResourceSlice) {
		if inventory.IsAcceleratorDriver(s.Spec.Driver) {
			out = append(out, s)
		}
	}
	err := l.list(ctx, "resourceslices", "ResourceSliceList", "",
		func(b []byte) error {
			s, err := decodeSlice(b)
			if err != nil {
				return err
			}
			keep(s)
			return nil
		},
		func(d *json.Decoder) error {
			var s inventory.ResourceSlice
			if err := d.Decode(&s); err != nil {
				return err
			}
			keep(s)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("listing resourceslices: %w", err)
	}
	return inventory.AcceleratorSlices(out), nil
}

// listNamespaces lists the names of the cluster's namespaces, sorted,
// never nil: a namespace's name is all a snapshot keeps of it.
func listNamespaces(ctx context.Context, l lister) ([]string, error) {
	out := []string{}
	err := l.list(ctx, "namespaces", "NamespaceList", "",
		func(b []byte) error {
			out = append(out, decodeNamespace(b))
			return nil
		},
		func(d *json.Decoder) error {
			name, err := decodeJSONNamespace(d)
			out = append(out, name)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("listing namespaces: %w", err)
	}
	sort.Strings(out)
	return out, nil
}

// unfinished leaves out the pods that hold nothing any more.
const unfinished = "status.phase!=Succeeded,status.phase!=Failed"

// listInUse sums, per node and namespace, the accelerators that pods bound
// to the node and not finished request.
func listInUse(ctx context.Context, l lister) (map[string]map[string]int, error) {
	inUse := map[string]map[string]int{}
	var p podUse
	add := func() {
		if p.nodeName == "" {
			return
		}
		if n := p.accelerators(); n > 0 {
			byNS := inUse[p.nodeName]
			if byNS == nil {
				byNS = map[string]int{}
				inUse[p.nodeName] = byNS
			}
			byNS[p.namespace] += n
		}
	}
	err := l.list(ctx, "pods", "PodList", unfinished,
		func(b []byte) error {
			if err := decodePod(b, &p); err != nil {
				return err
			}
			add()
			return nil
		},
		func(d *json.Decoder) error {
			if err := decodeJSONPod(d, &p); err != nil {
				return err
			}
			add()
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	return inUse, nil
}

func quantityValue(q resource.Quantity) int {
	return int(min(max(q.Value(), 0), inventory.MaxDevices))
}

// explain turns client-go errors into what the user must do.
func explain(err error) error {
	var status apierrors.APIStatus
	switch {
	case apierrors.IsForbidden(err):
		verb, resource := "list", "nodes"
		if errors.As(err, &status) {
			if d := status.Status().Details; d != nil && d.Kind != "" {
				resource = d.Kind
			}
		}
		return fmt.Errorf("forbidden: this user may not %s %s cluster-wide (RBAC verb %q on %q): bind it to a ClusterRole that allows it, or use another --context: %w",
			verb, resource, verb, resource, err)
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("the credentials were rejected: refresh them or choose another --context: %w", err)
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) {
		return fmt.Errorf("cannot reach it: check that the cluster is up and the kubeconfig's server is right: %w", err)
	}
	return err
}
