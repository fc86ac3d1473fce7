package host_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// replace writes data to path the way build tools do: a new file renamed
// over the old one.
func replace(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestReloadModuleFile rebuilds a served module file: the new version is
// swapped in without a restart, and a broken one leaves it serving.
func TestReloadModuleFile(t *testing.T) {
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.Options{CRDPaths: []string{filepath.Join(root, "examples", "crd.yaml")}})
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
	examples := dyn.Resource(gvr).Namespace("default")
	create := func(name string) {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{}}}
		if _, err := examples.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	versionOf := func(name, id string) string {
		obj, err := examples.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return ""
		}
		v, _, _ := unstructured.NestedString(obj.Object, "status", id, "version")
		return v
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	has := func(name, id, want string) func() bool {
		return func() bool { return versionOf(name, id) == want }
	}

	// Warm the compilation cache with v2, as a platform's build pipeline or
	// an earlier host would have: the swap then measures a cached load.
	cacheDir := t.TempDir()
	warm, err := wasmrt.New(wasmrt.Options{CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := warm.Load(context.Background(), "reload", wasmtest.Bytes(t, "testguests/reloadv2")); err != nil {
		t.Fatal(err)
	}
	_ = warm.Close(context.Background())
	set := settings.Default()
	set.Wasm.CacheDir = cacheDir

	file := filepath.Join(t.TempDir(), "reload.wasm")
	replace(t, file, wasmtest.Bytes(t, "testguests/reloadv1"))
	logs := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- host.Run(ctx, host.Options{Modules: []string{file}, Kubeconfig: env.Kubeconfig, Namespaces: []string{"default"},
			Settings: &set, ReloadInterval: 100 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	}()

	create("first")
	waitFor("first handled by v1", has("first", "create_fn", "v1"))

	replace(t, file, wasmtest.Bytes(t, "testguests/reloadv2"))
	waitFor("v2 swapped in", func() bool { return strings.Contains(logs.String(), "modules reloaded") })
	create("second")
	waitFor("second handled by v2", has("second", "create_fn", "v2"))
	waitFor("first resumed by v2", has("first", "resume_fn", "v2"))

	replace(t, file, []byte("not a wasm module"))
	waitFor("broken v3 reported", func() bool { return strings.Contains(logs.String(), "the old one keeps serving") })
	create("third")
	waitFor("third handled by v2", has("third", "create_fn", "v2"))

	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "module changed") || strings.Contains(line, "modules reloaded") {
			t.Log(line)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
