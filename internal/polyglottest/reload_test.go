package polyglottest

import (
	"bytes"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestPythonPushPullReload: a Python module goes the way of every module.
// Pushed to a registry (in process) under a tag, pulled by a host that
// serves the tag, and replaced by a second version pushed to the same
// tag, which the host pulls and swaps in without a restart: objects
// created before are handled by the first version, objects created after
// by the second.
func TestPythonPushPullReload(t *testing.T) {
	v1 := guestwasm.Path(t, guestwasm.Python, "kopfexample")
	v2 := guestwasm.Build(t, guestwasm.Python, changedCopy(t, "kopfexample", "example.py", "'hello world'", "'hello again'"))

	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	ref := strings.TrimPrefix(srv.URL, "http://") + "/operators/py-kopfexample:stable"
	reg := host.Registry{CacheDir: t.TempDir(), DockerConfig: filepath.Join(t.TempDir(), "config.json")}
	push := func(file string) {
		t.Helper()
		if _, err := host.Push(t.Context(), file, ref, reg); err != nil {
			t.Fatal(err)
		}
	}
	push(v1)

	const ns = "py-reload"
	logs := operatorOpts(t, ns, host.Options{Modules: []string{ref}, Registry: reg}, func(s *settings.Settings) {
		s.Modules.ReloadInterval, s.Modules.TagPollInterval = 100*time.Millisecond, 200*time.Millisecond
	})
	example := func(name string) map[string]any {
		return map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"field": "value"}}
	}
	create(t, kopfexamples, ns, example("before"))
	e2etest.Eventually(t, 60*time.Second, "v1 handles", hasValue(t, kopfexamples, ns, "before", "hello world", "status", "create_fn", "message"))

	push(v2)
	e2etest.Eventually(t, 120*time.Second, "v2 swapped in", logged(logs, "modules reloaded"))
	create(t, kopfexamples, ns, example("after"))
	e2etest.Eventually(t, 60*time.Second, "v2 handles", hasValue(t, kopfexamples, ns, "after", "hello again", "status", "create_fn", "message"))
	if msg := get(t, kopfexamples, ns, "before").Object["status"].(map[string]any)["create_fn"].(map[string]any)["message"]; msg != "hello world" {
		t.Errorf("the object created before the swap says %v", msg)
	}
}

// changedCopy copies examples/python/<name> into a temporary folder with
// old replaced by new in file, and returns the folder.
func changedCopy(t *testing.T, name, file, old, new string) string {
	t.Helper()
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "examples", "python", name)
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dst, file)
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte(old)) {
		t.Fatalf("%s has no %s", path, old)
	}
	if err := os.WriteFile(path, bytes.Replace(body, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}
