package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// certValidity covers any test run; the CA lives only as long as the test.
const certValidity = 24 * time.Hour

// ca is the control plane's one certificate authority: it signs the API
// server's serving certificate and every client certificate, and the API
// server trusts it for client authentication.
type ca struct {
	cert    *x509.Certificate
	key     crypto.Signer
	certPEM []byte
}

// keyPair is a certificate and its private key, PEM-encoded.
type keyPair struct {
	certPEM []byte
	keyPEM  []byte
}

func newKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

func newCA(now time.Time) (*ca, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	sn, err := serial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: "accelc-e2e-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("self-signing the CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &ca{cert: cert, key: key, certPEM: pemBlock("CERTIFICATE", der)}, nil
}

// issue signs a leaf certificate for tmpl, filling in the serial number,
// validity and key.
func (c *ca) issue(tmpl *x509.Certificate) (keyPair, error) {
	key, err := newKey()
	if err != nil {
		return keyPair{}, err
	}
	sn, err := serial()
	if err != nil {
		return keyPair{}, err
	}
	tmpl.SerialNumber = sn
	tmpl.NotBefore = c.cert.NotBefore
	tmpl.NotAfter = c.cert.NotAfter
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, key.Public(), c.key)
	if err != nil {
		return keyPair{}, fmt.Errorf("signing the certificate for %q: %w", tmpl.Subject.CommonName, err)
	}
	keyPEM, err := privateKeyPEM(key)
	if err != nil {
		return keyPair{}, err
	}
	return keyPair{certPEM: pemBlock("CERTIFICATE", der), keyPEM: keyPEM}, nil
}

// serving issues a serving certificate for the addresses and names.
func (c *ca) serving(name string, ips []net.IP, dnsNames []string) (keyPair, error) {
	return c.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: ips,
		DNSNames:    dnsNames,
	})
}

// client issues a client certificate: the API server reads the user name
// from the common name and the groups from the organizations.
func (c *ca) client(user string, groups []string) (keyPair, error) {
	return c.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// serviceAccountKey makes the key the API server signs service-account
// tokens with (ES256), PEM-encoded.
func serviceAccountKey() ([]byte, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	return privateKeyPEM(key)
}

func privateKeyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pemBlock("EC PRIVATE KEY", der), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
