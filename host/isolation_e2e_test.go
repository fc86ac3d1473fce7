package host_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
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
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestModuleLimits serves the hog module (beside kopfexample) from a
// Module resource whose spec.limits give it one worker and 48 MiB: of its
// two looping handlers and its growing one, one runs at a time (a loop
// until its 2 s timeout) and the others wait, and the growing one runs out
// of its budget, which its status.isolation shows (its share, the
// deferred cycles, the timeouts, the budget's refusals); raising
// spec.limits.workers takes effect on the module already served, without
// loading it again.
func TestModuleLimits(t *testing.T) {
	e := newReloadEnv(t)
	root, err := wasmtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.env.InstallCRDs(filepath.Join(root, "deploy", "crds", "modules.kopf-wasm.dev.yaml")); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref := strings.TrimPrefix(srv.URL, "http://") + "/operators/hog:v1"
	reg := host.Registry{CacheDir: t.TempDir(), DockerConfig: filepath.Join(t.TempDir(), "config.json")}
	if _, err := host.Push(context.Background(), wasmtest.Path(t, "testguests/hog"), ref, reg); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(e.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	modules := dyn.Resource(schema.GroupVersionResource{Group: "kopf-wasm.dev", Version: "v1", Resource: "modules"})
	isolation := func() map[string]any {
		obj, err := modules.Get(context.Background(), "hog", metav1.GetOptions{})
		if err != nil {
			return nil
		}
		st, _, _ := unstructured.NestedMap(obj.Object, "status", "isolation")
		return st
	}
	count := func(st map[string]any, key string) int64 {
		n, _ := st[key].(int64)
		return n
	}

	// 48 MiB for all the hog's instances: below what its growing handler
	// asks, above what two idle instances hold (a few MiB each).
	const budget = 48 << 20
	set := settings.Default()
	set.Modules.TagPollInterval = 0
	set.Execution.Workers, set.Execution.DefaultBackoff = 4, time.Second
	set.Wasm.CallTimeout = 2 * time.Second
	set.Isolation.StatusInterval = time.Second
	// Another module beside it: a host serving one module gives it every
	// worker.
	e.run(host.Options{ModuleResources: true, Registry: reg, Settings: &set, Modules: []string{wasmtest.Path(t, "kopfexample")}})

	mod := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf-wasm.dev/v1", "kind": "Module",
		"metadata": map[string]any{"name": "hog"},
		"spec":     map[string]any{"source": ref, "limits": map[string]any{"workers": int64(1), "memoryBytes": int64(budget)}}}}
	if _, err := modules.Create(context.Background(), mod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
	for name, mode := range map[string]string{"loop-1": "loop", "loop-2": "loop", "grow-1": "grow"} {
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"hog": mode}}}}
		if _, err := cms.Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	e2etest.Eventually(t, 3*time.Minute, "status.isolation shows the share, deferrals, timeouts and budget hits", func() error {
		st := isolation()
		if count(st, "workerShare") != 1 || count(st, "deferredCycles") < 1 || count(st, "timeouts") < 2 ||
			count(st, "workers") > 1 || count(st, "memoryBudget") != budget ||
			count(st, "memoryBudgetHits") < 1 || count(st, "outOfMemory") < 1 {
			return fmt.Errorf("status.isolation %v", st)
		}
		return nil
	})
	t.Logf("status.isolation: %v", isolation())

	patch := `{"spec":{"limits":{"workers":3}}}`
	if _, err := modules.Patch(context.Background(), "hog", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e2etest.Eventually(t, time.Minute, "the new share served", func() error {
		if st := isolation(); count(st, "workerShare") != 3 {
			return fmt.Errorf("status.isolation %v", st)
		}
		return nil
	})
}
