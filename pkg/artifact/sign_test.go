package artifact_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/accelc/accelc/internal/testutil"
	"github.com/accelc/accelc/pkg/artifact"
)

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return k
}

// TestSigningKeys: cosign's encrypted key with its password, PKCS#8 and
// SEC1 keys load; a wrong password, a public key, an RSA key, another
// curve and garbage are errors that say what to do and show no key.
func TestSigningKeys(t *testing.T) {
	key := newKey(t)
	enc, err := artifact.EncryptCosignKey(key, []byte("hunter2"))
	require.NoError(t, err)
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	sec1, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	pub, err := artifact.PublicKeyPEM(key)
	require.NoError(t, err)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	rsaDER, err := x509.MarshalPKCS8PrivateKey(rsaKey)
	require.NoError(t, err)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	require.NoError(t, err)
	p384DER, err := x509.MarshalPKCS8PrivateKey(p384)
	require.NoError(t, err)

	for _, ok := range []struct {
		name     string
		data     []byte
		password string
	}{
		{"cosign", enc, "hunter2"},
		{"pkcs8", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}), ""},
		{"sec1", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}), ""},
	} {
		got, err := artifact.ParseSigningKey(ok.name+".key", ok.data, []byte(ok.password))
		require.NoError(t, err, ok.name)
		assert.True(t, key.Equal(got), ok.name)
	}
	for _, bad := range []struct {
		name     string
		data     []byte
		password string
		want     string
	}{
		{"wrong password", enc, "hunter3", "the password does not open it: set COSIGN_PASSWORD"},
		{"public", pub, "", "a public key: signing needs the private key"},
		{"rsa", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: rsaDER}), "", "accelc signs with ECDSA P-256 keys"},
		{"p384", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p384DER}), "", "accelc signs with ECDSA P-256 keys"},
		{"garbage", []byte("not a key"), "", "not a PEM private key"},
		{"bad json", pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED SIGSTORE PRIVATE KEY", Bytes: []byte("{")}), "", "an encrypted cosign key that cannot be read"},
		{"huge scrypt", pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED SIGSTORE PRIVATE KEY", Bytes: []byte(`{"kdf":{"name":"scrypt","params":{"N":1073741824,"r":8,"p":1},"salt":""},"cipher":{"name":"nacl/secretbox","nonce":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},"ciphertext":""}`)}), "", "scrypt parameters cosign does not use"},
	} {
		_, err := artifact.ParseSigningKey(bad.name+".key", bad.data, []byte(bad.password))
		require.Error(t, err, bad.name)
		assert.Contains(t, err.Error(), "--sign-key "+bad.name+".key: ")
		assert.Contains(t, err.Error(), bad.want, bad.name)
	}
	_, err = artifact.LoadSigningKey(filepath.Join(t.TempDir(), "missing.key"), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot read it")
}

// FuzzParseSigningKey: no input makes the key parser panic or run away.
func FuzzParseSigningKey(f *testing.F) {
	key := newKey(f)
	enc, err := artifact.EncryptCosignKey(key, nil)
	require.NoError(f, err)
	f.Add(enc, []byte(""))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), []byte("x"))
	f.Fuzz(func(t *testing.T, data, password []byte) {
		k, err := artifact.ParseSigningKey("fuzz.key", data, password)
		if err == nil && k == nil {
			t.Fatal("no key and no error")
		}
	})
}

// TestSign pushes an artifact to docker-registry, signs it twice (two
// keys), and reads the signatures back as a verifier does: each layer's
// payload names the artifact's digest, and its annotation is a valid
// ECDSA signature of the payload by one of the keys.
func TestSign(t *testing.T) {
	addr := testutil.Registry(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: []\n"), 0o644))
	img, _, err := artifact.Build(dir, []string{"kustomization.yaml"}, artifact.Metadata{})
	require.NoError(t, err)
	ref, err := artifact.ParseURL("oci://"+addr+"/accelc/signed:1.0.0", false)
	require.NoError(t, err)
	ctx := context.Background()
	pushed, err := artifact.Push(ctx, img, ref, artifact.PushOptions{})
	require.NoError(t, err)
	digest := ref.Context().Digest(pushed.Digest)

	k1, k2 := newKey(t), newKey(t)
	s1, err := artifact.Sign(ctx, digest, k1, artifact.PushOptions{})
	require.NoError(t, err)
	assert.Equal(t, 1, s1.Signatures)
	s2, err := artifact.Sign(ctx, digest, k2, artifact.PushOptions{})
	require.NoError(t, err)
	assert.Equal(t, 2, s2.Signatures, "a second signature is added, the first kept")

	tag, err := artifact.SignatureTag(digest)
	require.NoError(t, err)
	assert.Equal(t, addr+"/accelc/signed:sha256-"+digest.DigestStr()[len("sha256:"):]+".sig", tag.String())
	sigImg, err := remote.Image(tag)
	require.NoError(t, err)
	manifest, err := sigImg.Manifest()
	require.NoError(t, err)
	require.Len(t, manifest.Layers, 2)
	layers, err := sigImg.Layers()
	require.NoError(t, err)
	for i, keyOf := range []*ecdsa.PrivateKey{k1, k2} {
		d := manifest.Layers[i]
		assert.Equal(t, artifact.SimpleSigningMediaType, string(d.MediaType))
		rc, err := layers[i].Uncompressed()
		require.NoError(t, err)
		payload, err := io.ReadAll(rc)
		require.NoError(t, err)
		var p artifact.SimpleSigningPayload
		require.NoError(t, json.Unmarshal(payload, &p))
		assert.Equal(t, digest.DigestStr(), p.Critical.Image.DockerManifestDigest)
		assert.Equal(t, addr+"/accelc/signed", p.Critical.Identity.DockerReference)
		assert.Equal(t, "cosign container image signature", p.Critical.Type)
		sig, err := base64.StdEncoding.DecodeString(d.Annotations[artifact.SignatureAnnotation])
		require.NoError(t, err)
		sum := sha256.Sum256(payload)
		assert.True(t, ecdsa.VerifyASN1(&keyOf.PublicKey, sum[:], sig), "signature %d verifies with its key", i)
		assert.False(t, ecdsa.VerifyASN1(&newKey(t).PublicKey, sum[:], sig), "and not with another")
	}
	_, err = name.NewDigest(pushed.Ref)
	require.NoError(t, err)
}

// TestSigningKeyTooLarge: a device or a wrong file given as the key is
// not read whole.
func TestSigningKeyTooLarge(t *testing.T) {
	_, err := artifact.LoadSigningKey("/dev/zero", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--sign-key /dev/zero: over 64 KiB: not a private key")
}
