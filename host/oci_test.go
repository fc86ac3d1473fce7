package host

import (
	"errors"
	"io"
	"log"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/kopf-wasm/kopf-wasm/host/internal/modules"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// testRegistry starts an in-memory registry and returns its host:port.
func testRegistry(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return srv, strings.TrimPrefix(srv.URL, "http://")
}

func testRegistryOptions(t *testing.T) Registry {
	return Registry{CacheDir: t.TempDir(), DockerConfig: filepath.Join(t.TempDir(), "config.json"),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// TestPushPullInspect: a module built from examples/kopfexample, pushed and
// pulled by another host, loads with the same manifest and digest.
func TestPushPullInspect(t *testing.T) {
	srv, addr := testRegistry(t)
	file := wasmtest.Path(t, "kopfexample")
	want, digest, err := Inspect(t.Context(), file, nil)
	if err != nil {
		t.Fatal(err)
	}
	pushed, err := Push(t.Context(), file, addr+"/examples/kopfexample:v1", testRegistryOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if pushed.ModuleDigest != digest || pushed.Name != "kopfexample" || !slices.Contains(pushed.Handlers, "create_fn=create") {
		t.Errorf("push: %+v; want module digest %s", pushed, digest)
	}
	other := testRegistryOptions(t)
	pulled, err := Pull(t.Context(), "oci://"+addr+"/examples/kopfexample:v1", other)
	if err != nil {
		t.Fatal(err)
	}
	got, gotDigest, err := Inspect(t.Context(), pulled.Path, nil)
	if err != nil || gotDigest != digest || got.Module != want.Module || len(got.Handlers) != len(want.Handlers) {
		t.Errorf("inspect of the pulled module: %+v %s %v", got.Module, gotDigest, err)
	}
	if pulled.Digest != pushed.Digest || !strings.HasPrefix(pulled.Path, other.CacheDir) {
		t.Errorf("pull: %+v; want digest %s in %s", pulled, pushed.Digest, other.CacheDir)
	}

	// What Run does with module arguments: references become cached files,
	// also with the registry gone, when they are pinned by digest.
	srv.Close()
	opts := Options{Modules: []string{file, addr + "/examples/kopfexample@" + pushed.Digest}, Registry: other}.withDefaults()
	paths, refs, err := modules.PullAll(t.Context(), opts.Modules, opts.newPuller)
	if err != nil || len(paths) != 2 || paths[0] != file || paths[1] != pulled.Path {
		t.Errorf("pullModules offline: %q, %v; want [%s %s]", paths, err, file, pulled.Path)
	}
	if ref := refs[pulled.Path]; ref != opts.Modules[1] || len(refs) != 1 {
		t.Errorf("pullModules refs: %v; want %s for %s only", refs, opts.Modules[1], pulled.Path)
	}
	opts.Modules = []string{addr + "/examples/kopfexample:v2"}
	if _, _, err := modules.PullAll(t.Context(), opts.Modules, opts.newPuller); !errors.Is(err, ErrRegistryUnreachable) {
		t.Errorf("pullModules of an unknown tag offline: %v; want ErrRegistryUnreachable", err)
	}
}

func TestPushRefusesNonModules(t *testing.T) {
	_, addr := testRegistry(t)
	text := writeFile(t, t.TempDir(), "text.wasm", "hello, I am text")
	if _, err := Push(t.Context(), text, addr+"/x/y:v1", testRegistryOptions(t)); err == nil || !strings.Contains(err.Error(), "not a WebAssembly module") {
		t.Errorf("push of a text file: %v", err)
	}
	if _, err := Push(t.Context(), filepath.Join(t.TempDir(), "nope.wasm"), addr+"/x/y:v1", testRegistryOptions(t)); err == nil ||
		!strings.Contains(err.Error(), "no such file") {
		t.Errorf("push of a missing file: %v", err)
	}
}

func TestIsReference(t *testing.T) {
	dir := t.TempDir()
	odd := writeFile(t, dir, "odd:name.wasm", "")
	t.Chdir(dir)
	for _, tc := range []struct {
		arg  string
		want bool
	}{
		{"ghcr.io/acme/handlers:v1", true},
		{"localhost:5000/handlers@sha256:0123", true},
		{"oci://localhost:5000/handlers:v1", true},
		{"oci://" + odd, true},
		{odd, false},
		{"odd:name.wasm", false},
		{"handlers.wasm", false},
		{"./modules/", false},
		{dir, false},
	} {
		if got := IsReference(tc.arg); got != tc.want {
			t.Errorf("IsReference(%q) = %v, want %v", tc.arg, got, tc.want)
		}
	}
	_ = os.Remove(odd)
}
