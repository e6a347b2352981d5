package serve

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
)

// serveWebhook serves, over TLS with the files' certificate, what the
// mutations file says, as accelc serve --webhook-listen does in the
// catalog's pod.
func TestServeWebhookTLS(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile, mutFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "mutations.json")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	require.NoError(t, os.WriteFile(mutFile, []byte(`{"profileLabel": "accelc.io/profile"}`), 0o600))

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	o := WebhookOptions{Listen: addr, CertFile: certFile, KeyFile: keyFile, MutationsFile: mutFile}
	require.NoError(t, o.check())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- serveWebhook(ctx, o, time.Second, io.Discard) }()
	defer func() { cancel(); assert.NoError(t, <-done) }()

	parsed, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(parsed)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
	body := []byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","operation":"CREATE","namespace":"ns",
		"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"opendatahub.io/hardware-profile-name":"gpu"}}}}}`)
	var resp *http.Response
	require.Eventually(t, func() bool {
		resp, err = client.Post("https://"+addr+MutatePath, "application/json", bytes.NewReader(body))
		return err == nil
	}, 5*time.Second, 50*time.Millisecond)
	defer resp.Body.Close()
	var out admissionv1.AdmissionReview
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	require.NotNil(t, out.Response)
	assert.True(t, out.Response.Allowed)
	assert.JSONEq(t, `[{"op":"add","path":"/metadata/labels","value":{"accelc.io/profile":"gpu"}}]`, string(out.Response.Patch))

	// Options that cannot work are refused before anything runs.
	assert.Error(t, WebhookOptions{Listen: addr}.check(), "no certificate")
	assert.Error(t, WebhookOptions{CertFile: certFile}.check(), "no address")
	assert.NoError(t, WebhookOptions{}.check())
}
