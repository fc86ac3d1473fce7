package host_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

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

// reloadEnv is a control plane with the kopfexamples CRD and helpers to
// create examples in "default" and read which module version handled them.
type reloadEnv struct {
	t   *testing.T
	env *testenv.Env
	ex  dynamic.ResourceInterface
}

func newReloadEnv(t *testing.T) *reloadEnv {
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
	return &reloadEnv{t: t, env: env, ex: dyn.Resource(gvr).Namespace("default")}
}

func (e *reloadEnv) create(name string) {
	e.t.Helper()
	if err := e.tryCreate(name); err != nil {
		e.t.Fatal(err)
	}
}

// tryCreate is create for goroutines other than the test's.
func (e *reloadEnv) tryCreate(name string) error {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{}}}
	_, err := e.ex.Create(context.Background(), obj, metav1.CreateOptions{})
	return err
}

// has waits until status.<id>.version of the object is want.
func (e *reloadEnv) has(name, id, want string) {
	e.t.Helper()
	waitFor(e.t, fmt.Sprintf("%s handled by %s (%s)", name, want, id), func() bool {
		return e.version(name, id) == want
	})
}

// version is status.<id>.version of the object ("" if none).
func (e *reloadEnv) version(name, id string) string {
	obj, err := e.ex.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	v, _, _ := unstructured.NestedString(obj.Object, "status", id, "version")
	return v
}

func (e *reloadEnv) annotation(name, key string) string {
	obj, err := e.ex.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	return obj.GetAnnotations()[key]
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	e2etest.Eventually(t, 30*time.Second, what, func() error {
		if cond() {
			return nil
		}
		return errors.New("not yet")
	})
}

// run runs the host until the test ends.
func (e *reloadEnv) run(opts host.Options) *e2etest.LogBuffer {
	logs := &e2etest.LogBuffer{}
	opts.Kubeconfig, opts.Namespaces = e.env.Kubeconfig, []string{"default"}
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	before := goleak.IgnoreCurrent()
	go func() { done <- host.Run(ctx, opts) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("host: %v", err)
		}
		// Every goroutine the host started is gone when Run returns.
		if err := goleak.Find(append(e2etest.LeakOptions(), before)...); err != nil {
			e.t.Errorf("goroutines outlive host.Run: %v", err)
		}
	})
	return logs
}

// TestReloadModuleFile rebuilds a served module file: the new version is
// swapped in without a restart, and a broken one leaves it serving.
func TestReloadModuleFile(t *testing.T) {
	e := newReloadEnv(t)
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
	set.Modules.ReloadInterval = 100 * time.Millisecond

	file := filepath.Join(t.TempDir(), "reload.wasm")
	replace(t, file, wasmtest.Bytes(t, "testguests/reloadv1"))
	logs := e.run(host.Options{Modules: []string{file}, Settings: &set})

	e.create("first")
	e.has("first", "create_fn", "v1")

	replace(t, file, wasmtest.Bytes(t, "testguests/reloadv2"))
	waitFor(t, "v2 swapped in", func() bool { return strings.Contains(logs.String(), "modules reloaded") })
	e.create("second")
	e.has("second", "create_fn", "v2")
	e.has("first", "resume_fn", "v2")

	replace(t, file, []byte("not a wasm module"))
	waitFor(t, "broken v3 reported", func() bool { return strings.Contains(logs.String(), "the old one keeps serving") })
	e.create("third")
	e.has("third", "create_fn", "v2")
	logSwaps(t, logs)
}

// TestReloadOCITag moves the tag a host serves to a new version: the host
// resolves the tag again, pulls the new digest and swaps it in.
func TestReloadOCITag(t *testing.T) {
	e := newReloadEnv(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/operators/reload:stable"
	reg := host.Registry{CacheDir: t.TempDir(), DockerConfig: filepath.Join(t.TempDir(), "config.json")}
	push := func(pkg string) {
		if _, err := host.Push(context.Background(), wasmtest.Path(t, pkg), ref, reg); err != nil {
			t.Fatal(err)
		}
	}
	push("testguests/reloadv1")
	set := settings.Default()
	set.Modules.ReloadInterval, set.Modules.TagPollInterval = 100*time.Millisecond, 200*time.Millisecond
	logs := e.run(host.Options{Modules: []string{ref}, Registry: reg, Settings: &set})
	e.create("obj-0")
	e.has("obj-0", "create_fn", "v1")

	// Objects are created continuously while v2 is pushed and the tag
	// moves, and for 10 more after the swap (under load the new version's
	// pull and compile take seconds: a fixed count could end before it).
	created := make(chan int)
	stop := make(chan struct{})
	go func() {
		defer close(created)
		for i := 1; ; i++ {
			if err := e.tryCreate(fmt.Sprintf("obj-%d", i)); err != nil {
				t.Error(err)
			}
			created <- i
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	total, swappedAt := 0, 0
	for i := range created {
		total = i
		switch {
		case i == 10:
			push("testguests/reloadv2")
		case swappedAt == 0 && i > 10 && strings.Contains(logs.String(), "modules reloaded"):
			swappedAt = i
		case swappedAt > 0 && i == swappedAt+10, i == 600:
			close(stop)
			for range created { // the one in flight
				total++
			}
		}
	}
	waitFor(t, "v2 swapped in", func() bool { return strings.Contains(logs.String(), "modules reloaded") })
	versions := map[string]int{}
	for i := 0; i <= total; i++ {
		name := fmt.Sprintf("obj-%d", i)
		waitFor(t, name+" handled", func() bool { return e.version(name, "create_fn") != "" })
		versions[e.version(name, "create_fn")]++
	}
	time.Sleep(time.Second) // a second run would show by now
	for i := 0; i <= total; i++ {
		name := fmt.Sprintf("obj-%d", i)
		if runs := e.annotation(name, "create-runs"); runs != "1" {
			t.Errorf("%s was created %s times", name, runs)
		}
	}
	if versions["v1"] == 0 || versions["v2"] == 0 || versions["v1"]+versions["v2"] != total+1 {
		t.Errorf("objects by version: %v", versions)
	}
	t.Logf("objects by version: %v", versions)
	logSwaps(t, logs)
}

func logSwaps(t *testing.T, logs *e2etest.LogBuffer) {
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "module changed") || strings.Contains(line, "modules reloaded") {
			t.Log(line)
		}
	}
}

// TestModuleResources drives the modules a host serves through Module
// objects: created, its source moved to another version, moved to a broken
// reference (the version before keeps serving, the status says why), and
// deleted (unloaded).
func TestModuleResources(t *testing.T) {
	e := newReloadEnv(t)
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	crd := filepath.Join(root, "deploy", "crds", "modules.kopf-wasm.dev.yaml")
	if err := e.env.InstallCRDs(crd); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	repo := strings.TrimPrefix(srv.URL, "http://") + "/operators/reload"
	reg := host.Registry{CacheDir: t.TempDir(), DockerConfig: filepath.Join(t.TempDir(), "config.json")}
	for tag, pkg := range map[string]string{"v1": "testguests/reloadv1", "v2": "testguests/reloadv2"} {
		if _, err := host.Push(context.Background(), wasmtest.Path(t, pkg), repo+":"+tag, reg); err != nil {
			t.Fatal(err)
		}
	}
	dyn, err := dynamic.NewForConfig(e.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	modules := dyn.Resource(schema.GroupVersionResource{Group: "kopf-wasm.dev", Version: "v1", Resource: "modules"})
	setSource := func(source string) {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"source":%q}}`, source)
		if _, err := modules.Patch(context.Background(), "reload", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	statusOf := func(field string) string {
		obj, err := modules.Get(context.Background(), "reload", metav1.GetOptions{})
		if err != nil {
			return ""
		}
		v, _, _ := unstructured.NestedString(obj.Object, "status", field)
		return v
	}
	set := settings.Default()
	set.Modules.TagPollInterval = 0 // never
	logs := e.run(host.Options{ModuleResources: true, Registry: reg, Settings: &set})

	mod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf-wasm.dev/v1", "kind": "Module",
		"metadata": map[string]any{"name": "reload"}, "spec": map[string]any{"source": repo + ":v1"}}}
	if _, err := modules.Create(context.Background(), mod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "v1 loaded", func() bool { return statusOf("version") == "1.0.0" && statusOf("digest") != "" })
	e.create("first")
	e.has("first", "create_fn", "v1")

	setSource(repo + ":v2")
	waitFor(t, "v2 loaded", func() bool { return statusOf("version") == "2.0.0" })
	e.create("second")
	e.has("second", "create_fn", "v2")

	setSource(repo + ":missing")
	waitFor(t, "error reported", func() bool { return statusOf("error") != "" })
	t.Logf("status.error: %s", statusOf("error"))
	waitFor(t, "a Warning Event about the Module", func() bool {
		events, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace("default").
			List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=reload,reason=LoadFailed"})
		return err == nil && len(events.Items) > 0
	})
	e.create("third")
	e.has("third", "create_fn", "v2")

	if err := modules.Delete(context.Background(), "reload", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "unloaded", func() bool { return strings.Contains(logs.String(), "module unloaded") })
	e.create("fourth")
	time.Sleep(2 * time.Second) // time to (wrongly) handle it
	obj, err := e.ex.Get(context.Background(), "fourth", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedMap(obj.Object, "status", "create_fn"); found {
		t.Errorf("an object was handled after its module's Module resource was deleted: %v", obj.Object["status"])
	}
}
