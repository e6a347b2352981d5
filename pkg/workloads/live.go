package workloads

// Reading a cluster's workloads live, kind by kind in parallel, within
// the reader's rights.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/accelc/accelc/pkg/inventory/live"
)

// DefaultPageSize is how many objects ReadLive asks for at a time, as
// kubectl does: a page of pods is a few hundred kilobytes of JSON.
const DefaultPageSize = 500

// parallel is how many kinds ReadLive lists at once; pods, the longest
// list, come first.
const parallel = 4

// ReadLive reads what a cluster runs: its pods, and the objects of every
// other kind of Kinds the API server serves, at the first of the kind's
// versions it serves (API discovery says which). It only lists, in
// pages of opts.PageSize (default DefaultPageSize) followed by their
// continue tokens, each page read object by object as it arrives and
// trimmed (Trim), so no list is held whole. A kind the server does not
// serve (no CRD) is left out without a word; one the user may not list
// is a Warning naming the kind and the RBAC verb, never a failure. A
// cluster that cannot be reached, or fails otherwise, is a *live.Error
// naming the server without its credentials. opts.SkipPods is not read:
// a Set always holds the pods. Where the server serves Kueue
// (kueue.x-k8s.io), its Workloads are read too, into KueueWorkloads: what
// Accounting needs of them, nothing else.
func ReadLive(ctx context.Context, opts live.Options) (*Set, error) {
	return readLive(ctx, opts, fastest)
}

// method is how ReadLive asks for its lists. It uses fastest, which
// BenchmarkReadLive and reads taken in turn measured against each lever
// turned: 50,000 pods on kube-apiserver v1.36, client and server sharing
// 2 CPUs, the median of five reads 2.3 s (`kubectl get pods -A -o json`:
// 24.5 s). The paged read is the server's work: walking the same pages as
// typed protobuf takes as long, and this process spends 1.0 s of CPU.
type method struct {
	// noGzip turns the transport's gzip off: 2.2 s on loopback, where
	// gzip costs what it saves; across a network it saves most of the
	// bytes.
	noGzip bool
	// cache asks for the first page at resourceVersion "0", as informers
	// and the node reader do: the watch cache answers with the whole list
	// whatever the limit, in 1.1 s. It is not paged, so not bounded on the
	// server.
	cache bool
	// serial asks for a page only once the last is read: 2.7 s, where
	// asking as soon as a page's continue token is read has the server
	// write one page while this reads the last.
	serial bool
}

var fastest = method{}

func readLive(ctx context.Context, opts live.Options, m method) (*Set, error) {
	cfg, _, redact, err := live.Config(opts)
	if err != nil {
		return nil, err
	}
	cfg.DisableCompression = m.noGzip
	c, err := jsonClient(cfg)
	if err != nil {
		return nil, redact(err)
	}
	l := lister{c: c, pageSize: opts.PageSize, m: m}
	if l.pageSize <= 0 {
		l.pageSize = DefaultPageSize
	}
	versions, warnings, err := discover(ctx, c, liveKinds)
	if err != nil {
		return nil, redact(err)
	}
	type result struct {
		objs    []*unstructured.Unstructured
		warning string
	}
	results := make([]result, len(liveKinds))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for i, k := range liveKinds {
		if versions[i] == "" {
			continue
		}
		g.Go(func() error {
			objs, err := l.list(gctx, k, versions[i])
			switch {
			case err == nil:
				results[i].objs = objs
			case apierrors.IsForbidden(err):
				results[i].warning = forbidden(k)
			case apierrors.IsNotFound(err):
				// Gone since discovery: a CRD deleted.
			default:
				return fmt.Errorf("listing %s: %w", k, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, redact(err)
	}
	n := 0
	for _, r := range results {
		n += len(r.objs)
	}
	objs := make([]*unstructured.Unstructured, 0, n)
	listed := map[objectKind]bool{}
	for i, r := range results[:len(kinds)] {
		objs = append(objs, r.objs...)
		if r.warning != "" {
			warnings = append(warnings, r.warning)
		} else if versions[i] != "" {
			listed[objectKind{kinds[i].Group, kinds[i].Kind}] = true
		}
	}
	set := newSet(objs, warnings)
	set.listed = listed
	// Kueue's Workloads, where Kueue is served and they may be listed.
	kueue := results[len(kinds)]
	switch {
	case kueue.warning != "":
		set.Warnings = append(set.Warnings, kueue.warning)
	case versions[len(kinds)] != "":
		set.Kueue = schema.GroupVersion{Group: kueueKind.Group, Version: versions[len(kinds)]}.String()
		if set.KueueWorkloads, err = kueueWorkloads(kueue.objs); err != nil {
			return nil, redact(fmt.Errorf("reading %s: %w", kueueKind, err))
		}
	}
	return set, nil
}

// forbidden is the warning for a kind the user may not list.
func forbidden(k Kind) string {
	group := fmt.Sprintf("API group %q", k.Group)
	if k.Group == "" {
		group = "the core API group"
	}
	return fmt.Sprintf("may not list %s in all namespaces (RBAC: verb list on %s in %s, cluster-wide): no %s are read",
		k, k.Resource, group, plural(k.Kind))
}

// plural is a kind's plural as people write it: Pods, ReplicaSets.
func plural(kind string) string {
	return kind + "s"
}

// jsonClient is a REST client that asks for JSON: custom resources have
// no protobuf, and unstructured objects are read from JSON whatever
// their kind. Its requests name their paths whole (AbsPath).
func jsonClient(cfg *rest.Config) (*rest.RESTClient, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	gv := schema.GroupVersion{Version: "v1"}
	cfg.APIPath, cfg.GroupVersion = "/api", &gv
	// Only errors are decoded by client-go: a metav1.Status.
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, gv)
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	return rest.RESTClientFor(cfg)
}

// groupPath is the path of a group version's API: /api/v1, /apis/apps/v1.
func groupPath(group, version string) string {
	if group == "" {
		return "/api/" + version
	}
	return "/apis/" + group + "/" + version
}

// discover finds, for each of kinds, the first of its versions whose
// resource the server serves and lets be listed: "" where there is none.
// It reads each group version's resource list (the API discovery
// documents), all at once.
func discover(ctx context.Context, c *rest.RESTClient, kinds []Kind) (versions, warnings []string, err error) {
	type gv struct{ group, version string }
	var gvs []gv
	for _, k := range kinds {
		for _, v := range k.Versions {
			if !slices.Contains(gvs, gv{k.Group, v}) {
				gvs = append(gvs, gv{k.Group, v})
			}
		}
	}
	served := make([]map[string]bool, len(gvs)) // resource → list allowed
	denied := make([]bool, len(gvs))
	g, gctx := errgroup.WithContext(ctx)
	for i, x := range gvs {
		g.Go(func() error {
			raw, err := c.Get().AbsPath(groupPath(x.group, x.version)).Do(gctx).Raw()
			switch {
			case apierrors.IsNotFound(err):
				return nil
			case apierrors.IsForbidden(err):
				denied[i] = true
				return nil
			case err != nil:
				return fmt.Errorf("discovering %s: %w", schema.GroupVersion{Group: x.group, Version: x.version}, err)
			}
			var list metav1.APIResourceList
			if err := json.Unmarshal(raw, &list); err != nil {
				return fmt.Errorf("discovering %s: %w", schema.GroupVersion{Group: x.group, Version: x.version}, err)
			}
			served[i] = map[string]bool{}
			for _, r := range list.APIResources {
				served[i][r.Name] = slices.Contains(r.Verbs, "list")
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	versions = make([]string, len(kinds))
	for i, k := range kinds {
		for _, v := range k.Versions {
			j := slices.Index(gvs, gv{k.Group, v})
			if denied[j] {
				warnings = append(warnings, fmt.Sprintf("may not read the API discovery of %s (RBAC: verb get on the non-resource URL %s): no %s are read",
					schema.GroupVersion{Group: k.Group, Version: v}, groupPath(k.Group, v), plural(k.Kind)))
				break
			}
			if served[j][k.Resource] {
				versions[i] = v
				break
			}
		}
	}
	return versions, warnings, nil
}

// lister lists a kind page by page.
type lister struct {
	c        *rest.RESTClient
	pageSize int64
	m        method
}

// list lists a kind in every namespace. Where a continue token has
// expired (410 Gone: the list took longer than etcd keeps its history),
// it lists again from the start, once.
func (l lister) list(ctx context.Context, k Kind, version string) ([]*unstructured.Unstructured, error) {
	objs, err := l.pages(ctx, k, version)
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		objs, err = l.pages(ctx, k, version)
	}
	return objs, err
}

// pages reads the pages of a kind's list. The next page is asked for as
// soon as a page's continue token has been read, which the API server
// writes before the items of a built-in kind's list: the server writes
// one page while this reads the last.
func (l lister) pages(ctx context.Context, k Kind, version string) ([]*unstructured.Unstructured, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	path := groupPath(k.Group, version) + "/" + k.Resource
	apiVersion := schema.GroupVersion{Group: k.Group, Version: version}.String()
	r := newReader(nil)
	var out []*unstructured.Unstructured
	next := l.fetch(ctx, path, "")
	pending := ""
	for next != nil {
		body, err := next.wait()
		next = nil
		if err != nil {
			return nil, err
		}
		r.reset(body)
		err = r.list(k.Kind+"List", fieldsOf(k), func(cont string) {
			if cont != "" && next == nil && !l.m.serial {
				next = l.fetch(ctx, path, cont)
			}
			if l.m.serial && cont != "" {
				pending = cont
			}
		}, func(obj map[string]any) {
			obj["apiVersion"], obj["kind"] = apiVersion, k.Kind
			u := &unstructured.Unstructured{Object: obj}
			if !k.isKueue() {
				Trim(u)
			}
			out = append(out, u)
		})
		if err == nil {
			// What follows the list (a newline) is read, so that the
			// stream ends as the server ended it.
			_, err = io.Copy(io.Discard, body)
		}
		body.Close()
		if pending != "" {
			next, pending = l.fetch(ctx, path, pending), ""
		}
		if err != nil {
			if next != nil {
				cancel()
				next.discard()
			}
			return nil, fmt.Errorf("reading the list of %s: %w", k, err)
		}
	}
	return out, nil
}

// page is a list request under way.
type page struct {
	done chan struct{}
	body io.ReadCloser
	err  error
}

// fetch asks for a page of the list at path.
func (l lister) fetch(ctx context.Context, path, cont string) *page {
	p := &page{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		req := l.c.Get().AbsPath(path).Param("limit", strconv.FormatInt(l.pageSize, 10))
		if cont != "" {
			req = req.Param("continue", cont)
		} else if l.m.cache {
			req = req.Param("resourceVersion", "0")
		}
		p.body, p.err = req.Stream(ctx)
	}()
	return p
}

func (p *page) wait() (io.ReadCloser, error) {
	<-p.done
	return p.body, p.err
}

// discard closes the page's body, once it has come.
func (p *page) discard() {
	if body, _ := p.wait(); body != nil {
		body.Close()
	}
}

// list reads a list object, calling cont with its continue token and
// item with each of its items, as they come, each read with fields.
func (r *reader) list(kind string, fields field, cont func(string), item func(map[string]any)) error {
	if _, err := r.d.ReadToken(); err != nil {
		return err
	}
	for r.d.PeekKind() != '}' {
		name, err := r.str()
		if err != nil {
			return err
		}
		switch name {
		case "kind":
			got, err := r.str()
			if err != nil {
				return err
			}
			if got != kind {
				return fmt.Errorf("the API server sent a %q where a %s was expected", got, kind)
			}
		case "metadata":
			md, err := r.object(nil)
			if err != nil {
				return err
			}
			c, _ := md["continue"].(string)
			cont(c)
		case "items":
			if r.d.PeekKind() == 'n' {
				if _, err := r.d.ReadToken(); err != nil {
					return err
				}
				continue
			}
			if _, err := r.d.ReadToken(); err != nil {
				return err
			}
			for r.d.PeekKind() != ']' {
				if r.d.PeekKind() != '{' {
					return errors.New("an item that is not an object")
				}
				obj, err := r.object(fields)
				if err != nil {
					return err
				}
				item(obj)
			}
			if _, err := r.d.ReadToken(); err != nil {
				return err
			}
		default:
			if err := r.d.SkipValue(); err != nil {
				return err
			}
		}
	}
	_, err := r.d.ReadToken()
	return err
}
