package serve

// accelc's mutating admission webhook: on a cluster whose API server
// serves no MutatingAdmissionPolicy (before Kubernetes 1.36), it does
// what accelc's policies do there (render.AdmissionMutations).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/accelc/accelc/pkg/accelc"
	"github.com/accelc/accelc/pkg/render"
)

// MutatePath is where the webhook answers AdmissionReviews.
const MutatePath = "/mutate"

// maxReview bounds an AdmissionReview's body (the API server sends at
// most its request size limit, 3 MiB, and the object twice on UPDATE).
const maxReview = 8 << 20

// MutateHandler answers AdmissionReview v1 requests on MutatePath with
// the JSON patch of what the mutations (get's, read at each request) do
// to the object: it never refuses, and answers an object it does not
// change with no patch. A request it cannot read is answered 400, which
// the API server takes as the webhook failing (its failurePolicy).
func MutateHandler(get func() *render.AdmissionMutations) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc(MutatePath, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST an AdmissionReview", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxReview+1))
		if err != nil || len(body) > maxReview {
			http.Error(w, "the AdmissionReview is unreadable or too large", http.StatusBadRequest)
			return
		}
		review, err := Mutate(get(), body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	})
	return mux
}

// Mutate answers one AdmissionReview v1 (its JSON): allowed, with the
// patch of what a does to the request's object under its operation.
func Mutate(a *render.AdmissionMutations, review []byte) (*admissionv1.AdmissionReview, error) {
	var in admissionv1.AdmissionReview
	if err := json.Unmarshal(review, &in); err != nil {
		return nil, fmt.Errorf("not an AdmissionReview: %w", err)
	}
	if in.Request == nil {
		return nil, errors.New("the AdmissionReview has no request")
	}
	req := in.Request
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	out := &admissionv1.AdmissionReview{TypeMeta: in.TypeMeta, Response: resp}
	if out.APIVersion == "" {
		out.APIVersion, out.Kind = "admission.k8s.io/v1", "AdmissionReview"
	}
	if a == nil || req.SubResource != "" || len(req.Object.Raw) == 0 {
		return out, nil
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(req.Object.Raw); err != nil {
		return nil, fmt.Errorf("the request's object: %w", err)
	}
	if obj.GetNamespace() == "" {
		// A pod made with generateName through a namespaced path: the
		// request names the namespace.
		obj.SetNamespace(req.Namespace)
	}
	patch := a.Mutate(obj, string(req.Operation))
	if len(patch) == 0 {
		return out, nil
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = data, &pt
	return out, nil
}

// WebhookOptions run the webhook on an address of its own, with TLS (the
// API server calls webhooks over HTTPS only).
type WebhookOptions struct {
	// Listen is HOST:PORT; "" runs no webhook.
	Listen string
	// CertFile and KeyFile are its serving certificate and key (PEM),
	// read again when they change.
	CertFile, KeyFile string
	// MutationsFile holds render.AdmissionMutations as accelc renders
	// them (render.AdmissionMutationsKey of the ConfigMap
	// render.AdmissionMutationsFile), read again when it changes.
	MutationsFile string
}

func (o WebhookOptions) check() error {
	if o.Listen == "" {
		if o.CertFile != "" || o.KeyFile != "" || o.MutationsFile != "" {
			return &accelc.UsageError{Err: errors.New("--webhook-tls-cert-file, --webhook-tls-key-file and --webhook-mutations go with --webhook-listen")}
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(o.Listen); err != nil {
		return &accelc.UsageError{Err: fmt.Errorf("--webhook-listen %q: write HOST:PORT, such as 0.0.0.0:9443", o.Listen)}
	}
	if o.CertFile == "" || o.KeyFile == "" || o.MutationsFile == "" {
		return &accelc.UsageError{Err: errors.New("--webhook-listen needs --webhook-tls-cert-file, --webhook-tls-key-file (the API server calls webhooks over HTTPS) and --webhook-mutations")}
	}
	return nil
}

// serveWebhook serves the webhook until ctx ends.
func serveWebhook(ctx context.Context, o WebhookOptions, grace time.Duration, log io.Writer) error {
	tlsConfig, certs, err := servingTLS(o.CertFile, o.KeyFile, log)
	if err != nil {
		return err
	}
	var cur atomic.Pointer[render.AdmissionMutations]
	var last []byte
	load := func() error {
		data, err := os.ReadFile(o.MutationsFile)
		if err != nil {
			return err
		}
		if bytes.Equal(data, last) {
			return nil
		}
		a, err := render.ParseAdmissionMutations(data)
		if err != nil {
			return err
		}
		cur.Store(&a)
		last = data
		return nil
	}
	if err := load(); err != nil {
		return &accelc.UsageError{Err: fmt.Errorf("--webhook-mutations %s: %w", o.MutationsFile, err)}
	}
	go certs(ctx)
	go eachTick(ctx, certReload, func() {
		if err := load(); err != nil {
			fmt.Fprintf(log, "the webhook's mutations in %s do not load: still doing the previous ones: %v\n", o.MutationsFile, err)
		}
	})
	l, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return &accelc.OutsideError{Err: fmt.Errorf("--webhook-listen %s: %w", o.Listen, err)}
	}
	srv := &http.Server{
		Handler:           MutateHandler(cur.Load),
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
	}
	fmt.Fprintf(log, "mutating webhook on https://%s%s\n", l.Addr(), MutatePath)
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(l, "", "") }()
	select {
	case err := <-done:
		return &accelc.OutsideError{Err: fmt.Errorf("--webhook-listen %s: %w", o.Listen, err)}
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}
