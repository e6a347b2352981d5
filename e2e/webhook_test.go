//go:build e2e

package e2e

import (
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"

	"github.com/accelc/accelc/internal/controlplane"
	"github.com/accelc/accelc/pkg/render"
	"github.com/accelc/accelc/pkg/serve"
)

// startWebhook runs, before Kubernetes 1.36, accelc's mutating webhook
// as the rendered catalog service would (render.ProfileWebhookName): the
// handler accelc serve --webhook-listen runs, in this process on
// 127.0.0.1 with TLS (httptest's certificate, its own CA), doing what
// the rendered ConfigMap says; the rendered MutatingWebhookConfiguration
// (its rules, matchConditions, namespaceSelector, failurePolicy) is
// applied with the URL of that server in place of the Service, as
// Gatekeeper's is (internal/controlplane). The certificate's Issuer and
// Certificate are applied (certManagerCRDs) but nothing issues them: the
// caBundle is the test server's. It reports whether the tree has the
// webhook.
func (s *suite) startWebhook(t *testing.T, c *clusterUnderTest) bool {
	t.Helper()
	dir := filepath.Join(c.out, render.DirCatalogService)
	hookFile := filepath.Join(dir, "mutatingwebhookconfiguration-"+render.ProfileWebhookName+".yaml")
	data, err := os.ReadFile(hookFile)
	if err != nil {
		return false
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	cmData, err := os.ReadFile(filepath.Join(c.out, render.AdmissionMutationsFile))
	if err != nil {
		t.Fatalf("the webhook's mutations: %v", err)
	}
	if err := yaml.Unmarshal(cmData, &cm); err != nil {
		t.Fatal(err)
	}
	mutations, err := render.ParseAdmissionMutations([]byte(cm.Data[render.AdmissionMutationsKey]))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(serve.MutateHandler(func() *render.AdmissionMutations { return &mutations }))
	t.Cleanup(srv.Close)
	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	var hooks admissionregistrationv1.MutatingWebhookConfiguration
	if err := yaml.Unmarshal(data, &hooks); err != nil {
		t.Fatal(err)
	}
	for i := range hooks.Webhooks {
		h := &hooks.Webhooks[i]
		if h.ClientConfig.Service == nil || h.ClientConfig.Service.Path == nil {
			t.Fatalf("webhook %s calls no Service path", h.Name)
		}
		url := srv.URL + *h.ClientConfig.Service.Path
		h.ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle}
	}
	delete(hooks.Annotations, "cert-manager.io/inject-ca-from")
	delete(hooks.Annotations, "service.beta.openshift.io/inject-cabundle")
	out, err := yaml.Marshal(&hooks)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hookFile, out, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("accelc's webhook on %s (%d webhooks of the rendered %s, the URL in place of the Service)", srv.URL, len(hooks.Webhooks), render.ProfileWebhookName)
	return true
}

// certManagerCRDs serves cert-manager's Issuer and Certificate
// (cert-manager.io/v1), schemaless, so that a tree with accelc's webhook
// applies: no cert-manager runs here.
func (s *suite) certManagerCRDs(t *testing.T) {
	t.Helper()
	var docs []string
	for _, k := range []struct{ kind, plural string }{{"Issuer", "issuers"}, {"Certificate", "certificates"}} {
		docs = append(docs, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: `+k.plural+`.cert-manager.io
spec:
  group: cert-manager.io
  names: {kind: `+k.kind+`, listKind: `+k.kind+`List, plural: `+k.plural+`, singular: `+strings.ToLower(k.kind)+`}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`)
	}
	file := filepath.Join(s.work, "cert-manager-crds.yaml")
	if err := os.WriteFile(file, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := controlplane.ApplyCRDs(t.Context(), s.dyn, file); err != nil {
		t.Fatalf("cert-manager's CRDs: %v", err)
	}
}
