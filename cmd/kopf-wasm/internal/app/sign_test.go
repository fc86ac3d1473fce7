package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// writeKeys writes a new ECDSA P-256 key pair as PEM files and returns
// their paths (private, public).
func writeKeys(t *testing.T, name string) (string, string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kf, pf := filepath.Join(dir, name+".key"), filepath.Join(dir, name+".pub")
	if err := os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: priv}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pf, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		t.Fatal(err)
	}
	return kf, pf
}

// TestSignVerify signs a module file and a pushed module with real keys and
// verifies them against the in-process registry: good, missing, wrong key,
// a tampered file and a new version pushed under the signed tag; and run
// refuses an unsigned module before it loads it, in one line.
func TestSignVerify(t *testing.T) {
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	var tampered []string
	_, addr := tamperingRegistry(t, &tampered)
	aliceKey, alicePub := writeKeys(t, "alice")
	bobKey, bobPub := writeKeys(t, "bob")
	src := wasmtest.Path(t, "kopfexample")
	wasm, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mod := filepath.Join(dir, "kopfexample.wasm")
	if err := os.WriteFile(mod, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	unsigned := filepath.Join(dir, "unsigned.wasm")
	if err := os.WriteFile(unsigned, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	ref := addr + "/operators/kopfexample:v1"
	if r := run(t.Context(), "", "push", mod, ref); r.code != 0 {
		t.Fatalf("push: %+v", r)
	}
	if r := run(t.Context(), "", "sign", "--key", aliceKey, mod); r.code != 0 || !strings.Contains(r.out, "Bundle:  "+mod+".sigstore.json") {
		t.Fatalf("sign file: %+v", r)
	}
	if r := run(t.Context(), "", "sign", "--key", aliceKey, ref); r.code != 0 || !strings.Contains(r.out, "Digest:  sha256:") {
		t.Fatalf("sign reference: %+v", r)
	}
	kubeconfig := writeFile(t, t.TempDir(), "kubeconfig", unreachableKubeconfig)

	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"file good", []string{"verify", "--key", alicePub, mod}, 0, "Verified:"},
		{"file wrong key", []string{"verify", "--key", bobPub, mod}, 1, "is not signed by any of key"},
		{"file missing", []string{"verify", "--key", alicePub, unsigned}, 1, "no signature"},
		{"reference good", []string{"verify", "--key", alicePub, ref}, 0, "Verified:"},
		{"reference wrong key", []string{"verify", "--key", bobPub, ref}, 1, "is not signed by any of key"},
		{"reference all-of", []string{"verify", "--key", alicePub, "--key", bobPub, "--policy", "all-of", ref}, 1, "(policy all-of)"},
		{"reference any-of", []string{"verify", "--key", alicePub, "--key", bobPub, ref}, 0, "Verified:"},
		{"no policy", []string{"verify", mod}, 2, "name a public key"},
		{"bad policy", []string{"verify", "--key", alicePub, "--policy", "most-of", mod}, 2, "want any-of or all-of"},
		{"sign without key", []string{"sign", mod}, 2, "pass --key"},
		{"run refuses unsigned", []string{"run", "--kubeconfig", kubeconfig, "--verify-key", alicePub, unsigned}, 1, "module refused by the verification policy"},
		{"run loads signed", []string{"run", "--kubeconfig", kubeconfig, "--verify-key", alicePub, mod}, 1, "https://127.0.0.1:1"},
		{"run refuses wrong key", []string{"run", "--kubeconfig", kubeconfig, "--verify-key", bobPub, "oci://" + ref}, 1, "is not signed by any of key"},
		{"run loads signed reference", []string{"run", "--kubeconfig", kubeconfig, "--verify-key", alicePub, "oci://" + ref}, 1, "https://127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t.Context(), "", tt.args...)
			text := r.out + r.errOut
			if r.code != tt.code || !strings.Contains(text, tt.want) {
				t.Fatalf("kopf-wasm %s = %+v; want exit %d and %q", strings.Join(tt.args, " "), r, tt.code, tt.want)
			}
			if r.code != 0 && strings.Count(strings.TrimSpace(r.errOut), "\n") > 0 && tt.args[0] == "verify" {
				t.Fatalf("the error is more than one line: %q", r.errOut)
			}
		})
	}

	// Tampered: the file changes after signing; a new version pushed under
	// the signed tag carries none of the old version's signatures.
	if err := os.WriteFile(mod, append(wasm, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := run(t.Context(), "", "verify", "--key", alicePub, mod); r.code != 1 || !strings.Contains(r.errOut, "is not signed") {
		t.Fatalf("tampered file: %+v", r)
	}
	other := wasmtest.Path(t, "testguests/good")
	if r := run(t.Context(), "", "push", other, ref); r.code != 0 {
		t.Fatalf("push another version: %+v", r)
	}
	if r := run(t.Context(), "", "verify", "--key", alicePub, ref); r.code != 1 || !strings.Contains(r.errOut, "no signature") {
		t.Fatalf("a new version under the signed tag: %+v", r)
	}
	if r := run(t.Context(), "", "sign", "--key", bobKey, ref); r.code != 0 {
		t.Fatalf("sign the new version: %+v", r)
	}
	if r := run(t.Context(), "", "verify", "--key", bobPub, ref); r.code != 0 {
		t.Fatalf("the new version signed by bob: %+v", r)
	}

	// Tampered layer: the registry serves the signed version's module
	// altered to a host with an empty cache; nothing is loaded.
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	tampered = append(tampered, sha256File(t, other))
	r := run(t.Context(), "", "run", "--kubeconfig", kubeconfig, "--verify-key", bobPub, "oci://"+ref)
	if r.code != 1 || !strings.Contains(r.errOut, "digest mismatch") || strings.Contains(r.errOut, "127.0.0.1:1") {
		t.Fatalf("tampered layer: %+v", r)
	}
}
