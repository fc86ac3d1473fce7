package host_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/internal/signing"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// writeSigningKey writes a new ECDSA P-256 key pair and returns the files
// (private, public).
func writeSigningKey(t *testing.T) (string, string) {
	t.Helper()
	k, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	priv, err := signing.EncodePrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := signing.EncodePublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "key"), priv, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "key.pub"), pub, 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "key"), filepath.Join(dir, "key.pub")
}

// signedCopy signs the module pkg with key and returns its bytes and bundle.
func signedCopy(t *testing.T, pkg, key string) ([]byte, []byte) {
	t.Helper()
	wasm := wasmtest.Bytes(t, pkg)
	f := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(f, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := host.Sign(context.Background(), f, key, host.Registry{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f + host.BundleSuffix)
	if err != nil {
		t.Fatal(err)
	}
	return wasm, b
}

// TestReloadRefusesUnsigned serves a signed module file under a policy: a
// new version signed with another key is refused in one log line and the
// old version keeps serving; the same version signed with the trusted key
// is then swapped in.
func TestReloadRefusesUnsigned(t *testing.T) {
	e := newReloadEnv(t)
	trusted, trustedPub := writeSigningKey(t)
	other, _ := writeSigningKey(t)
	set := settings.Default()
	set.Modules.ReloadInterval = 100 * time.Millisecond

	file := filepath.Join(t.TempDir(), "reload.wasm")
	v1, v1Bundle := signedCopy(t, "testguests/reloadv1", trusted)
	replace(t, file+host.BundleSuffix, v1Bundle)
	replace(t, file, v1)
	logs := e.run(host.Options{Modules: []string{file}, Settings: &set, Verify: host.VerifyPolicy{Keys: []string{trustedPub}}})
	e.create("first")
	e.has("first", "create_fn", "v1")

	v2, wrong := signedCopy(t, "testguests/reloadv2", other)
	replace(t, file+host.BundleSuffix, wrong)
	replace(t, file, v2)
	const refused = "the new version is refused; the old one keeps serving"
	waitFor(t, "v2 refused", func() bool { return strings.Contains(logs.String(), refused) })
	var lines []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, refused) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "is not signed by any of key") {
		t.Fatalf("refusal log lines: %q; want one naming the keys", lines)
	}
	e.create("second")
	e.has("second", "create_fn", "v1")

	_, right := signedCopy(t, "testguests/reloadv2", trusted)
	replace(t, file+host.BundleSuffix, right)
	replace(t, file, v2) // a new modification time: the reloader looks again
	waitFor(t, "v2 swapped in", func() bool { return strings.Contains(logs.String(), "modules reloaded") })
	e.create("third")
	e.has("third", "create_fn", "v2")
}
