package host_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

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

// TestReloadRefusesUnsignedTag moves a served tag to a version signed with
// an untrusted key: it is refused in one log line (not one per poll), the
// old version keeps serving, and once signed with the trusted key it is
// swapped in.
func TestReloadRefusesUnsignedTag(t *testing.T) {
	e := newReloadEnv(t)
	trusted, trustedPub := writeSigningKey(t)
	other, _ := writeSigningKey(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/operators/reload:stable"
	reg := host.Registry{CacheDir: t.TempDir(), DockerConfig: filepath.Join(t.TempDir(), "config.json")}
	pushSigned := func(pkg, key string) {
		if _, err := host.Push(context.Background(), wasmtest.Path(t, pkg), ref, reg); err != nil {
			t.Fatal(err)
		}
		if _, err := host.Sign(context.Background(), ref, key, reg); err != nil {
			t.Fatal(err)
		}
	}
	pushSigned("testguests/reloadv1", trusted)
	set := settings.Default()
	set.Modules.ReloadInterval, set.Modules.TagPollInterval = 100*time.Millisecond, 200*time.Millisecond
	logs := e.run(host.Options{Modules: []string{ref}, Registry: reg, Settings: &set,
		Verify: host.VerifyPolicy{Keys: []string{trustedPub}}})
	e.create("first")
	e.has("first", "create_fn", "v1")

	pushSigned("testguests/reloadv2", other)
	const refused = "the tag's new version is refused; the old one keeps serving"
	waitFor(t, "v2 refused", func() bool { return strings.Contains(logs.String(), refused) })
	time.Sleep(time.Second) // five more polls
	if n := strings.Count(logs.String(), refused); n != 1 {
		t.Fatalf("the refusal was logged %d times; want once", n)
	}
	e.create("second")
	e.has("second", "create_fn", "v1")

	if _, err := host.Sign(context.Background(), ref, trusted, reg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "v2 swapped in", func() bool { return strings.Contains(logs.String(), "modules reloaded") })
	e.create("third")
	e.has("third", "create_fn", "v2")
}

// TestModuleResourceRefusesUnsigned points a Module resource at a version
// signed with an untrusted key: the refusal is its status.error, v1 keeps
// serving.
func TestModuleResourceRefusesUnsigned(t *testing.T) {
	e := newReloadEnv(t)
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.env.InstallCRDs(filepath.Join(root, "deploy", "crds", "modules.kopf-wasm.dev.yaml")); err != nil {
		t.Fatal(err)
	}
	trusted, trustedPub := writeSigningKey(t)
	other, _ := writeSigningKey(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	repo := strings.TrimPrefix(srv.URL, "http://") + "/operators/reload"
	reg := host.Registry{CacheDir: t.TempDir(), DockerConfig: filepath.Join(t.TempDir(), "config.json")}
	for _, v := range []struct{ tag, pkg, key string }{{"v1", "testguests/reloadv1", trusted}, {"v2", "testguests/reloadv2", other}} {
		if _, err := host.Push(context.Background(), wasmtest.Path(t, v.pkg), repo+":"+v.tag, reg); err != nil {
			t.Fatal(err)
		}
		if _, err := host.Sign(context.Background(), repo+":"+v.tag, v.key, reg); err != nil {
			t.Fatal(err)
		}
	}
	dyn, err := dynamic.NewForConfig(e.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	modules := dyn.Resource(schema.GroupVersionResource{Group: "kopf-wasm.dev", Version: "v1", Resource: "modules"})
	statusOf := func(field string) string {
		obj, err := modules.Get(context.Background(), "reload", metav1.GetOptions{})
		if err != nil {
			return ""
		}
		v, _, _ := unstructured.NestedString(obj.Object, "status", field)
		return v
	}
	set := settings.Default()
	set.Modules.TagPollInterval = 0
	e.run(host.Options{ModuleResources: true, Registry: reg, Settings: &set, Verify: host.VerifyPolicy{Keys: []string{trustedPub}}})
	mod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf-wasm.dev/v1", "kind": "Module",
		"metadata": map[string]any{"name": "reload"}, "spec": map[string]any{"source": repo + ":v1"}}}
	if _, err := modules.Create(context.Background(), mod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "v1 loaded", func() bool { return statusOf("version") == "1.0.0" })
	e.create("first")
	e.has("first", "create_fn", "v1")

	patch := fmt.Sprintf(`{"spec":{"source":%q}}`, repo+":v2")
	if _, err := modules.Patch(context.Background(), "reload", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "v2 refused", func() bool {
		return strings.Contains(statusOf("error"), "module refused by the verification policy")
	})
	if msg := statusOf("error"); strings.Contains(msg, "\n") || !strings.Contains(msg, "is not signed by any of key") {
		t.Fatalf("status.error = %q; want one line naming the keys", msg)
	}
	e.create("second")
	e.has("second", "create_fn", "v1")
}
