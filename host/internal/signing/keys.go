package signing

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
)

// GenerateKey returns a new ECDSA P-256 key.
func GenerateKey() (*ecdsa.PrivateKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("signing: generate key: %w", err)
	}
	return k, nil
}

// EncodePrivateKey returns key as an unencrypted PKCS#8 PEM block.
func EncodePrivateKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("signing: encode private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// EncodePublicKey returns pub as a PKIX PEM block, the form cosign reads.
func EncodePublicKey(pub *ecdsa.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("signing: encode public key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// ParsePrivateKey reads an unencrypted ECDSA P-256 key in PEM (PKCS#8
// "PRIVATE KEY" or SEC 1 "EC PRIVATE KEY", as openssl writes them).
func ParsePrivateKey(data []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("signing: no PEM block in the private key (want an unencrypted ECDSA P-256 key: openssl ecparam -name prime256v1 -genkey)")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("signing: a %q PEM block is not supported (want an unencrypted ECDSA P-256 \"PRIVATE KEY\"; cosign's encrypted keys are not read)", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("signing: parse private key: %w", err)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("signing: the private key is not ECDSA P-256")
	}
	return ec, nil
}

// ParsePublicKey reads an ECDSA P-256 public key in PKIX PEM ("PUBLIC KEY",
// as `cosign generate-key-pair` and openssl write it).
func ParsePublicKey(data []byte) (*ecdsa.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("signing: no \"PUBLIC KEY\" PEM block in the public key file")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("signing: parse public key: %w", err)
	}
	ec, ok := key.(*ecdsa.PublicKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("signing: the public key is not ECDSA P-256")
	}
	return ec, nil
}

// ReadPublicKey reads a public key file (see ParsePublicKey).
func ReadPublicKey(path string) (*ecdsa.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing: read public key: %w", err)
	}
	k, err := ParsePublicKey(b)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return k, nil
}

// ReadPrivateKey reads a private key file (see ParsePrivateKey).
func ReadPrivateKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing: read private key: %w", err)
	}
	k, err := ParsePrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("%w (%s)", err, path)
	}
	return k, nil
}
