package host_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/testenv"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestInvokeKubeconfigE2E: invoke --kubeconfig reads from the real API
// server and never writes to it: the module's create lands in memory.
func TestInvokeKubeconfigE2E(t *testing.T) {
	env := testenv.Start(t, testenv.Options{})
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	services := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "services"}).Namespace("default")
	sets := dyn.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}).Namespace("default")
	create := func(r dynamic.ResourceInterface, obj map[string]any) {
		t.Helper()
		if _, err := r.Create(t.Context(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create(services, map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "db1"},
		"spec": map[string]any{"clusterIP": "None", "ports": []any{map[string]any{"port": int64(5432)}}}})
	labels := map[string]any{"app": "db1"}
	create(sets, map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": map[string]any{"name": "db1-db"},
		"spec": map[string]any{"replicas": int64(3), "serviceName": "db1", "selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "db", "image": "postgres"}}}}}})

	mod := wasmtest.Path(t, "05-database")
	db := []byte(`{"apiVersion":"demo.kopf.dev/v1","kind":"Database","metadata":{"name":"db1","namespace":"default"},"spec":{"engine":"postgres","replicas":3}}`)
	invoke := func() (string, *abi.Response) {
		t.Helper()
		var calls []string
		_, resp, err := host.Invoke(t.Context(), host.Invocation{Settings: cachedSettings(t), Module: mod, Handler: "reconcile", Object: db, Kubeconfig: env.Kubeconfig,
			KubeCalls: func(c host.KubeCall) { calls = append(calls, c.Call()+" "+c.Source) }})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(calls, "; "), resp
	}

	calls, resp := invoke()
	if calls != "get services default/db1 cluster; get statefulsets.apps default/db1-db cluster" ||
		!strings.Contains(string(resp.Patch.Merge), "statefulset has 3 replicas, spec asks 3") {
		t.Errorf("calls: %s\noutcome %+v, patch %s", calls, resp.Outcome, resp.Patch.Merge)
	}

	if err := services.Delete(t.Context(), "db1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	calls, resp = invoke()
	if calls != "get services default/db1 cluster; create services default stored; get statefulsets.apps default/db1-db cluster" ||
		!strings.Contains(string(resp.Patch.Merge), `"reason":"Recreated"`) {
		t.Errorf("calls: %s\noutcome %+v, patch %s", calls, resp.Outcome, resp.Patch.Merge)
	}
	if _, err := services.Get(t.Context(), "db1", metav1.GetOptions{}); err == nil {
		t.Error("invoke created the Service in the cluster; it must only read")
	}
}

// cachedSettings are the default settings with the tests' shared compile
// cache: the module compiles once, not once per Invoke.
func cachedSettings(t testing.TB) *settings.Settings {
	s := settings.Default()
	s.Wasm.CacheDir = wasmtest.CacheDir(t)
	return &s
}
