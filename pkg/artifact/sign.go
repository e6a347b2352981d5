package artifact

// Signing a pushed artifact: the simple-signing payload, the key, and the
// signature pushed beside it.

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/crypto/nacl/secretbox"
	"golang.org/x/crypto/scrypt"
)

// Cosign's signature format (cosign v2's, which cosign v3 and Flux's
// source-controller still verify where no bundle is attached): beside
// the artifact, the image tagged sha256-<hex>.sig holds one layer per
// signature, each the simple-signing payload that names the artifact's
// digest, with the signature of its SHA-256 in an annotation.
const (
	SimpleSigningMediaType = "application/vnd.dev.cosign.simplesigning.v1+json"
	SignatureAnnotation    = "dev.cosignproject.cosign/signature"
	cosignSignatureType    = "cosign container image signature"
)

// PEM types of cosign's encrypted private keys (`cosign generate-key-pair`);
// the first is what cosign writes now.
const (
	pemSigstorePrivateKey = "ENCRYPTED SIGSTORE PRIVATE KEY"
	pemCosignPrivateKey   = "ENCRYPTED COSIGN PRIVATE KEY"
)

// SimpleSigningPayload is what a cosign signature signs: the artifact's
// repository and digest.
type SimpleSigningPayload struct {
	Critical struct {
		Identity struct {
			DockerReference string `json:"docker-reference"`
		} `json:"identity"`
		Image struct {
			DockerManifestDigest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
	Optional map[string]any `json:"optional"`
}

// Payload is the simple-signing payload of an artifact.
func Payload(ref name.Digest) ([]byte, error) {
	var p SimpleSigningPayload
	p.Critical.Identity.DockerReference = ref.Context().Name()
	p.Critical.Image.DockerManifestDigest = ref.DigestStr()
	p.Critical.Type = cosignSignatureType
	return json.Marshal(p)
}

// KeyError is a signing key that cannot be used; it names the file and
// says what to do, never the key.
type KeyError struct {
	File string
	Msg  string
}

func (e *KeyError) Error() string { return "--sign-key " + e.File + ": " + e.Msg }

// LoadSigningKey reads an ECDSA P-256 private key: cosign's encrypted key
// (`cosign generate-key-pair`, decrypted with password, as cosign reads
// COSIGN_PASSWORD), or a PEM PKCS#8 or SEC1 key.
func LoadSigningKey(file string, password []byte) (*ecdsa.PrivateKey, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, &KeyError{file, fmt.Sprintf("cannot read it: %v", errors.Unwrap(err))}
	}
	defer f.Close()
	// A key is a few hundred bytes: a device or a wrong file is not read
	// whole.
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, &KeyError{file, fmt.Sprintf("cannot read it: %v", err)}
	}
	if len(data) > maxKeyFile {
		return nil, &KeyError{file, fmt.Sprintf("over %d KiB: not a private key", maxKeyFile>>10)}
	}
	return ParseSigningKey(file, data, password)
}

// maxKeyFile bounds what LoadSigningKey reads.
const maxKeyFile = 64 << 10

// ParseSigningKey is LoadSigningKey's parser, for the file's content.
func ParseSigningKey(file string, data, password []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, &KeyError{file, "not a PEM private key: give cosign's key (cosign generate-key-pair) or a PKCS#8 EC key"}
	}
	var key any
	switch block.Type {
	case pemSigstorePrivateKey, pemCosignPrivateKey:
		der, err := decryptCosignKey(block.Bytes, password)
		if err != nil {
			return nil, &KeyError{file, err.Error()}
		}
		if key, err = x509.ParsePKCS8PrivateKey(der); err != nil {
			return nil, &KeyError{file, "the decrypted key is not a PKCS#8 key"}
		}
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, &KeyError{file, "not a valid PKCS#8 private key"}
		}
		key = k
	case "EC PRIVATE KEY":
		k, err := x509.ParseECPrivateKey(block.Bytes)
		if err != nil {
			return nil, &KeyError{file, "not a valid EC private key"}
		}
		key = k
	case "PUBLIC KEY":
		return nil, &KeyError{file, "a public key: signing needs the private key (the public one goes into the cluster's Secret)"}
	default:
		return nil, &KeyError{file, fmt.Sprintf("a PEM %q: give cosign's key (cosign generate-key-pair) or a PKCS#8 EC key", block.Type)}
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, &KeyError{file, fmt.Sprintf("a %T key: accelc signs with ECDSA P-256 keys, cosign's kind (cosign generate-key-pair)", key)}
	}
	return ec, nil
}

// cosignKey is the JSON inside an encrypted cosign key: scrypt derives the
// box key from the password, nacl/secretbox holds the PKCS#8 key.
type cosignKey struct {
	KDF struct {
		Name   string `json:"name"`
		Params struct {
			N int `json:"N"`
			R int `json:"r"`
			P int `json:"p"`
		} `json:"params"`
		Salt []byte `json:"salt"`
	} `json:"kdf"`
	Cipher struct {
		Name  string `json:"name"`
		Nonce []byte `json:"nonce"`
	} `json:"cipher"`
	Ciphertext []byte `json:"ciphertext"`
}

// maxScryptN bounds the work a key file may ask for: cosign's strongest
// setting is 2^17.
const maxScryptN = 1 << 17

func decryptCosignKey(body, password []byte) ([]byte, error) {
	var k cosignKey
	if err := json.Unmarshal(body, &k); err != nil {
		return nil, fmt.Errorf("an encrypted cosign key that cannot be read: %v", err)
	}
	p := k.KDF.Params
	if k.KDF.Name != "scrypt" || k.Cipher.Name != "nacl/secretbox" {
		return nil, fmt.Errorf("encrypted with %s and %s: accelc reads cosign's scrypt and nacl/secretbox keys", k.KDF.Name, k.Cipher.Name)
	}
	if p.N < 2 || p.N > maxScryptN || p.N&(p.N-1) != 0 || p.R < 1 || p.R > 32 || p.P < 1 || p.P > 16 || len(k.Cipher.Nonce) != 24 {
		return nil, fmt.Errorf("encrypted with scrypt parameters cosign does not use (N=%d r=%d p=%d)", p.N, p.R, p.P)
	}
	box, err := scrypt.Key(password, k.KDF.Salt, p.N, p.R, p.P, 32)
	if err != nil {
		return nil, err
	}
	var key [32]byte
	var nonce [24]byte
	copy(key[:], box)
	copy(nonce[:], k.Cipher.Nonce)
	der, ok := secretbox.Open(nil, k.Ciphertext, &nonce, &key)
	if !ok {
		return nil, errors.New("the password does not open it: set COSIGN_PASSWORD to the key's password (empty for a key made without one)")
	}
	return der, nil
}

// EncryptCosignKey writes key as cosign does (ENCRYPTED SIGSTORE PRIVATE
// KEY, scrypt N=2^15 r=8 p=1), for tests and for `accelc` users without
// cosign at hand.
func EncryptCosignKey(key *ecdsa.PrivateKey, password []byte) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	var k cosignKey
	k.KDF.Name, k.Cipher.Name = "scrypt", "nacl/secretbox"
	k.KDF.Params.N, k.KDF.Params.R, k.KDF.Params.P = 1<<15, 8, 1
	k.KDF.Salt = make([]byte, 32)
	k.Cipher.Nonce = make([]byte, 24)
	if _, err := rand.Read(k.KDF.Salt); err != nil {
		return nil, err
	}
	if _, err := rand.Read(k.Cipher.Nonce); err != nil {
		return nil, err
	}
	box, err := scrypt.Key(password, k.KDF.Salt, k.KDF.Params.N, k.KDF.Params.R, k.KDF.Params.P, 32)
	if err != nil {
		return nil, err
	}
	var bk [32]byte
	var nonce [24]byte
	copy(bk[:], box)
	copy(nonce[:], k.Cipher.Nonce)
	k.Ciphertext = secretbox.Seal(nil, der, &nonce, &bk)
	body, err := json.Marshal(k)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: pemSigstorePrivateKey, Bytes: body}), nil
}

// PublicKeyPEM is the public half of key as cosign writes cosign.pub: what
// the OCIRepository's verify.secretRef Secret holds.
func PublicKeyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// SignatureTag is where cosign keeps an artifact's signatures.
func SignatureTag(ref name.Digest) (name.Tag, error) {
	h, err := v1.NewHash(ref.DigestStr())
	if err != nil {
		return name.Tag{}, err
	}
	return ref.Context().Tag(fmt.Sprintf("%s-%s.sig", h.Algorithm, h.Hex)), nil
}

// Signed is a pushed signature.
type Signed struct {
	// Tag is the signature image's tag; Digest its digest.
	Tag    string `json:"tag"`
	Digest string `json:"digest"`
	// Signatures counts the signatures the artifact has now.
	Signatures int `json:"signatures"`
}

// Sign signs the artifact at ref with key in cosign's format and pushes
// the signature image, keeping the signatures already there (another
// key's, a CI's keyless one) as cosign does.
func Sign(ctx context.Context, ref name.Digest, key crypto.Signer, opts PushOptions) (*Signed, error) {
	payload, err := Payload(ref)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(payload)
	sig, err := key.Sign(rand.Reader, sum[:], crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	tag, err := SignatureTag(ref)
	if err != nil {
		return nil, err
	}
	ropts := remoteOptions(ctx, ref, opts)
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	switch existing, err := remote.Image(tag, ropts...); {
	case err == nil:
		base = existing
	case isNotFound(err):
	default:
		return nil, explain(ref.Context(), err)
	}
	layer := static.NewLayer(payload, SimpleSigningMediaType)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:       layer,
		Annotations: map[string]string{SignatureAnnotation: base64.StdEncoding.EncodeToString(sig)},
	})
	if err != nil {
		return nil, err
	}
	if err := remote.Write(tag, img, ropts...); err != nil {
		return nil, explain(ref.Context(), err)
	}
	digest, err := img.Digest()
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	return &Signed{Tag: tag.String(), Digest: digest.String(), Signatures: len(layers)}, nil
}

func isNotFound(err error) bool {
	var te *transport.Error
	if !errors.As(err, &te) {
		return false
	}
	if te.StatusCode == 404 {
		return true
	}
	for _, d := range te.Errors {
		if d.Code == transport.ManifestUnknownErrorCode || d.Code == transport.NameUnknownErrorCode {
			return true
		}
	}
	return false
}
