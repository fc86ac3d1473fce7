package signing

import (
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/verify"
)

func mustKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustSign(t *testing.T, d Digest, k *ecdsa.PrivateKey) []byte {
	t.Helper()
	b, err := Sign(context.Background(), d, k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVerifyKeys(t *testing.T) {
	alice, bob := mustKey(t), mustKey(t)
	module := []byte("\x00asm\x01\x00\x00\x00")
	d := DigestOf(module)
	other := DigestOf([]byte("tampered"))
	byAlice, byBob := mustSign(t, d, alice), mustSign(t, d, bob)
	aliceOther := mustSign(t, other, alice)

	tests := []struct {
		name    string
		bundles [][]byte
		digest  Digest
		policy  Policy
		wantErr string
	}{
		{"good", [][]byte{byAlice}, d, Policy{Keys: []*ecdsa.PublicKey{&alice.PublicKey}}, ""},
		{"no policy", nil, d, Policy{}, ""},
		{"missing", nil, d, Policy{Keys: []*ecdsa.PublicKey{&alice.PublicKey}}, "no signature"},
		{"wrong key", [][]byte{byBob}, d, Policy{Keys: []*ecdsa.PublicKey{&alice.PublicKey}}, "is not signed by any of key"},
		{"tampered digest", [][]byte{aliceOther}, d, Policy{Keys: []*ecdsa.PublicKey{&alice.PublicKey}}, "is not signed by any of key"},
		{"any-of one of two", [][]byte{byBob}, d, Policy{Keys: []*ecdsa.PublicKey{&alice.PublicKey, &bob.PublicKey}, Mode: AnyOf}, ""},
		{"all-of one of two", [][]byte{byBob}, d, Policy{Keys: []*ecdsa.PublicKey{&alice.PublicKey, &bob.PublicKey}, Mode: AllOf}, "(policy all-of)"},
		{"all-of both", [][]byte{byBob, byAlice}, d, Policy{Keys: []*ecdsa.PublicKey{&alice.PublicKey, &bob.PublicKey}, Mode: AllOf}, ""},
		{"not a bundle", [][]byte{[]byte("{}")}, d, Policy{Keys: []*ecdsa.PublicKey{&alice.PublicKey}}, "bundle 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Verify(tt.bundles, tt.digest, tt.policy)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Verify error = %v, want it to contain %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("Verify error has more than one line: %q", err)
			}
		})
	}
}

func TestBundleIsCosignV3Shape(t *testing.T) {
	k := mustKey(t)
	b := string(mustSign(t, DigestOf([]byte("m")), k))
	for _, want := range []string{BundleMediaType, "dsseEnvelope", "application/vnd.in-toto+json", "publicKey"} {
		if !strings.Contains(b, want) {
			t.Errorf("bundle lacks %q: %s", want, b)
		}
	}
}

// TestVerifyKeyless checks Fulcio-certificate bundles against a virtual
// Sigstore (its own CA, transparency log and timestamps; no network).
func TestVerifyKeyless(t *testing.T) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	module := []byte("\x00asm\x01\x00\x00\x00module")
	d := DigestOf(module)
	const issuer = "https://issuer.example"
	entity, err := vs.Sign("ci@example.com", issuer, module)
	if err != nil {
		t.Fatal(err)
	}
	tampered, err := vs.Sign("ci@example.com", issuer, []byte("other"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		entities []verify.SignedEntity
		policy   Policy
		wantErr  string
	}{
		{"good", []verify.SignedEntity{entity}, Policy{TrustedRoot: vs, Identities: []Identity{{"ci@example.com", issuer}}}, ""},
		{"wrong identity", []verify.SignedEntity{entity}, Policy{TrustedRoot: vs, Identities: []Identity{{"someone@example.com", issuer}}}, "identity someone@example.com"},
		{"wrong issuer", []verify.SignedEntity{entity}, Policy{TrustedRoot: vs, Identities: []Identity{{"ci@example.com", "https://other"}}}, "is not signed"},
		{"tampered", []verify.SignedEntity{tampered}, Policy{TrustedRoot: vs, Identities: []Identity{{"ci@example.com", issuer}}}, "is not signed"},
		{"missing", nil, Policy{TrustedRoot: vs, Identities: []Identity{{"ci@example.com", issuer}}}, "no signature"},
		{"no trusted root", []verify.SignedEntity{entity}, Policy{Identities: []Identity{{"ci@example.com", issuer}}}, "trusted root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := VerifyEntities(tt.entities, d, tt.policy)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("VerifyEntities: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("VerifyEntities error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestKeysRoundTrip(t *testing.T) {
	k := mustKey(t)
	priv, err := EncodePrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := EncodePublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := ParsePrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := ParsePublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if !k2.Equal(k) || !p2.Equal(&k.PublicKey) {
		t.Fatal("keys changed in a round trip")
	}
	if _, err := ParsePublicKey(priv); err == nil {
		t.Fatal("a private key read as a public key")
	}
}

// TestTrustedRootFile writes a virtual Sigstore's trusted root to a file,
// as `cosign trusted-root create` would, and verifies keyless signatures
// against what ReadTrustedRoot reads back.
func TestTrustedRootFile(t *testing.T) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	// The virtual Sigstore keeps a log's ID as the text of its hex; a trusted
	// root file holds the bytes.
	logs := func(m map[string]*root.TransparencyLog) map[string]*root.TransparencyLog {
		for k, l := range m {
			if l.ID, err = hex.DecodeString(k); err != nil {
				t.Fatal(err)
			}
		}
		return m
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), logs(vs.CTLogs()),
		vs.TimestampingAuthorities(), logs(vs.RekorLogs()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trusted_root.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	read, err := ReadTrustedRoot(path)
	if err != nil {
		t.Fatal(err)
	}
	module := []byte("\x00asm\x01\x00\x00\x00keyless")
	const issuer = "https://issuer.example"
	entity, err := vs.Sign("ci@example.com", issuer, module)
	if err != nil {
		t.Fatal(err)
	}
	good := Policy{TrustedRoot: read, Identities: []Identity{{"ci@example.com", issuer}}}
	if err := VerifyEntities([]verify.SignedEntity{entity}, DigestOf(module), good); err != nil {
		t.Fatalf("good: %v", err)
	}
	wrong := Policy{TrustedRoot: read, Identities: []Identity{{"mallory@example.com", issuer}}}
	if err := VerifyEntities([]verify.SignedEntity{entity}, DigestOf(module), wrong); err == nil {
		t.Fatal("wrong identity accepted")
	}
	if _, err := ReadTrustedRoot(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), "read trusted root") {
		t.Fatalf("missing file: %v", err)
	}
}
