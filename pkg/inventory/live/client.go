package live

// The API client a live read lists with: the fastest encoding the server
// speaks, paged lists decoded item by item.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
)

// method is how a read asks the API server for its lists. Read uses
// fastest, which make bench-live measured against each lever turned back
// (bench_test.go): 5,000 nodes and 50,000 pods on kube-apiserver v1.36,
// figures per read.
type method struct {
	// quorum lists with resourceVersion "" (the latest data, from etcd
	// page by page where the server cannot serve a consistent read from
	// its watch cache: etcd before 3.4.31 and 3.5.13) instead of "0" (the
	// watch cache, as informers list: a moment behind at most). On the
	// benchmark's etcd 3.4.23: 2.7 s of server CPU against 1.2 s, and
	// 3.1 s for the fastest read against 0.9 s.
	quorum bool
	// json asks for JSON instead of protobuf: 4.8 MB gzipped instead of
	// 3.4 MB, and 1.3 s of client CPU against 0.35 s.
	json bool
	// noGzip turns the transport's gzip off: 68 MB instead of 3.4 MB.
	// Even on loopback it saved nothing (1.6 to 1.7 s of CPU, client and
	// server, against 1.6 s; the fastest read 1.1 s against 0.9 s): TLS
	// and HTTP/2 framing of 68 MB cost what gzip does.
	noGzip bool
}

var fastest = method{}

// coreV1 is a REST client for the core API group only: the kubeconfig's
// authentication, TLS and proxy, client-go's rate limit and Retry-After
// handling, and its API errors (*apierrors.StatusError), without the
// clientset, which links every API group into the binary.
func coreV1(cfg *rest.Config, m method) (*rest.RESTClient, error) {
	return restClient(cfg, m, "/api", schema.GroupVersion{Version: "v1"})
}

// resourceV1 is the same for resource.k8s.io/v1, Dynamic Resource
// Allocation's group: its ResourceSlices.
func resourceV1(cfg *rest.Config, m method) (*rest.RESTClient, error) {
	return restClient(cfg, m, "/apis", schema.GroupVersion{Group: "resource.k8s.io", Version: "v1"})
}

func restClient(cfg *rest.Config, m method, apiPath string, gv schema.GroupVersion) (*rest.RESTClient, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.APIPath = apiPath
	cfg.GroupVersion = &gv
	// Only errors are decoded by client-go: a metav1.Status.
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, gv)
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	if m.json {
		cfg.AcceptContentTypes = "application/json"
	}
	cfg.DisableCompression = m.noGzip
	return rest.RESTClientFor(cfg)
}

// lister lists one resource of a group, page by page, decoding
// each item as it arrives from the response body.
type lister struct {
	c        *rest.RESTClient
	m        method
	pageSize int64
}

// list lists resource (kind is its list's kind) matching fieldSelector,
// calling proto or json with each item as the server encoded it.
func (l lister) list(ctx context.Context, resource, kind, fieldSelector string, proto func([]byte) error, json func(*json.Decoder) error) error {
	cont := ""
	for {
		req := l.c.Get().Resource(resource).Param("limit", strconv.FormatInt(l.pageSize, 10))
		if fieldSelector != "" {
			req = req.Param("fieldSelector", fieldSelector)
		}
		switch {
		case cont != "":
			// The token holds the resource version of the first page.
			req = req.Param("continue", cont)
		case !l.m.quorum:
			// The watch cache answers with the whole list, whatever the
			// limit; without a watch cache etcd pages it.
			req = req.Param("resourceVersion", "0")
		}
		body, err := req.Stream(ctx)
		if err != nil {
			return err
		}
		cont, err = decodeList(body, kind, proto, json)
		body.Close()
		if err != nil {
			return fmt.Errorf("decoding the %s: %w", kind, err)
		}
		if cont == "" {
			return nil
		}
	}
}

// decodeList reads a list body, protobuf or JSON whichever the server
// chose, and returns its continue token.
func decodeList(body io.Reader, kind string, proto func([]byte) error, jsonItem func(*json.Decoder) error) (string, error) {
	r := bufio.NewReaderSize(body, 64<<10)
	if magic, err := r.Peek(len(protoMagic)); err == nil && bytes.Equal(magic, protoMagic) {
		_, _ = r.Discard(len(protoMagic))
		return protoList(r, kind, proto)
	}
	return jsonList(json.NewDecoder(r), kind, jsonItem)
}
