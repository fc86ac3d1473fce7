package signing

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/sign"
)

// BundleMediaType is the media type of a Sigstore bundle, v0.3: the
// artifactType of the OCI referrer that carries one.
const BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// statementType and predicateType name what the DSSE envelope holds: an
// in-toto statement with cosign's signing predicate, as cosign v3 writes for
// `cosign sign`.
const (
	payloadType   = "application/vnd.in-toto+json"
	statementType = "https://in-toto.io/Statement/v1"
	predicateType = PredicateType
)

// PredicateType is the predicate of the statement a bundle signs, cosign
// v3's for a signature (not an attestation).
const PredicateType = "https://sigstore.dev/cosign/sign/v1"

// Digest is a module's sha256 digest as 64 hex characters, with or without
// the "sha256:" prefix.
type Digest string

// Hex returns the digest's hex form and checks it is a sha256 digest.
func (d Digest) Hex() (string, error) {
	h := strings.TrimPrefix(string(d), "sha256:")
	if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("signing: %q is not a sha256 digest (want sha256:<64 hex>)", string(d))
	}
	return h, nil
}

func hexBytes(h string) ([]byte, error) { return hex.DecodeString(h) }

// DigestOf returns the sha256 digest of content.
func DigestOf(content []byte) Digest {
	sum := sha256.Sum256(content)
	return Digest("sha256:" + hex.EncodeToString(sum[:]))
}

// Sign returns a bundle (JSON) that signs digest with key.
func Sign(ctx context.Context, digest Digest, key *ecdsa.PrivateKey) ([]byte, error) {
	h, err := digest.Hex()
	if err != nil {
		return nil, err
	}
	kp, err := newKeypair(key)
	if err != nil {
		return nil, err
	}
	stmt, err := json.Marshal(statement{
		Type:          statementType,
		Subject:       []subject{{Digest: map[string]string{"sha256": h}}},
		PredicateType: predicateType,
		Predicate:     map[string]any{},
	})
	if err != nil {
		return nil, fmt.Errorf("signing: encode statement: %w", err)
	}
	pb, err := sign.Bundle(&sign.DSSEData{Data: stmt, PayloadType: payloadType}, kp, sign.BundleOptions{Context: ctx})
	if err != nil {
		return nil, fmt.Errorf("signing: sign %s: %w", digest, err)
	}
	b, err := bundle.NewBundle(pb)
	if err != nil {
		return nil, fmt.Errorf("signing: bundle: %w", err)
	}
	out, err := b.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("signing: encode bundle: %w", err)
	}
	return out, nil
}

type statement struct {
	Type          string         `json:"_type"`
	Subject       []subject      `json:"subject"`
	PredicateType string         `json:"predicateType"`
	Predicate     map[string]any `json:"predicate"`
}

type subject struct {
	Name   string            `json:"name,omitempty"`
	Digest map[string]string `json:"digest"`
}

// keypair adapts an ECDSA P-256 key to sigstore-go's sign.Keypair.
type keypair struct {
	key  *ecdsa.PrivateKey
	hint []byte
}

func newKeypair(key *ecdsa.PrivateKey) (*keypair, error) {
	if key == nil || key.Curve != elliptic.P256() {
		return nil, errors.New("signing: the key must be an ECDSA P-256 private key")
	}
	hint, err := KeyHint(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	return &keypair{key: key, hint: []byte(hint)}, nil
}

func (k *keypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}

func (k *keypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}

func (k *keypair) GetHint() []byte                { return k.hint }
func (k *keypair) GetKeyAlgorithm() string        { return "ECDSA" }
func (k *keypair) GetPublicKey() crypto.PublicKey { return &k.key.PublicKey }

func (k *keypair) GetPublicKeyPem() (string, error) {
	der, err := x509.MarshalPKIXPublicKey(&k.key.PublicKey)
	if err != nil {
		return "", fmt.Errorf("signing: encode public key: %w", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), nil
}

func (k *keypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	sum := sha256.Sum256(data)
	sig, err := ecdsa.SignASN1(rand.Reader, k.key, sum[:])
	if err != nil {
		return nil, nil, fmt.Errorf("signing: sign: %w", err)
	}
	return sig, sum[:], nil
}

// KeyHint is the key's identifier in a bundle: the base64 sha256 of its PKIX
// encoding, as sigstore-go writes it.
func KeyHint(pub *ecdsa.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("signing: encode public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return base64.StdEncoding.EncodeToString(sum[:]), nil
}
