package polyglottest

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
)

// TestAssemblyScriptFeatures: the AssemblyScript SDK's features beyond
// allkinds hold on the control plane (testdata/asfeatures): one function
// under two resources of one kind, each object handled with its own param;
// a callable selector that takes ConfigMaps; kopf.EVERYTHING of the
// kopf.dev group, which takes KopfExamples and not ConfigMaps; an Error
// Event of kopf.exception; sub-handlers, one of which needs a second
// cycle; outbound HTTP to a declared host, and the host's refusal of an
// undeclared one; and an index above execution.indexInline read whole by
// a probe on the liveness endpoint.
func TestAssemblyScriptFeatures(t *testing.T) {
	var mu sync.Mutex
	var guests []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		guests = append(guests, r.Header.Get("X-Guest"))
		mu.Unlock()
		_, _ = w.Write([]byte("hello"))
	}))
	t.Cleanup(server.Close)

	const ns = "as-features"
	liveness := "http://" + freeAddr(t) + "/healthz"
	dir, err := filepath.Abs(filepath.Join("testdata", "asfeatures"))
	if err != nil {
		t.Fatal(err)
	}
	path := guestwasm.Build(t, guestwasm.AssemblyScript, dir)
	logs := operatorOpts(t, ns, host.Options{Modules: []string{path}, Health: host.HealthOptions{Liveness: liveness}},
		func(s *settings.Settings) { s.Execution.IndexInline, s.Execution.ProbeCache = 32, 0 })

	kex1 := kex("kex-1", "a")
	kex1["spec"].(map[string]any)["url"] = server.URL + "/hello"
	create(t, kopfexamples, ns, kex1)
	create(t, configmaps, ns, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm-1"}, "data": map[string]any{"k": "v"}})
	for _, c := range []struct {
		what, want string
		path       []string
	}{
		{"stamp with param kex", "kex", []string{"metadata", "annotations", "created-by"}},
		{"everything", "yes", []string{"metadata", "annotations", "everything"}},
		{"sub-handler first", "first done", []string{"status", "parent/first"}},
		{"sub-handler later, in a second cycle", "later done", []string{"status", "parent/later"}},
		{"the parent's result once both are done", "parent done", []string{"status", "parent"}},
		{"fetch status", "200", []string{"status", "fetch", "status"}},
		{"fetch body", "hello", []string{"status", "fetch", "body"}},
	} {
		e2etest.Eventually(t, 60*time.Second, c.what, hasValue(t, kopfexamples, ns, "kex-1", c.want, c.path...))
	}
	e2etest.Eventually(t, 30*time.Second, "the Error Event of kopf.exception", hasEvent(ns, "kex-1", "Error", "everything saw it: no error"))
	e2etest.Eventually(t, 60*time.Second, "stamp with param cm", hasValue(t, configmaps, ns, "cm-1", "cm", "metadata", "annotations", "created-by"))
	e2etest.Eventually(t, 60*time.Second, "selected by the callable selector", hasValue(t, configmaps, ns, "cm-1", "yes", "metadata", "annotations", "selected"))
	if got := get(t, configmaps, ns, "cm-1").GetAnnotations()["everything"]; got != "" {
		t.Errorf("kopf.EVERYTHING of kopf.dev handled a ConfigMap (annotation %q)", got)
	}
	mu.Lock()
	if len(guests) != 1 || guests[0] != "kex-1" {
		t.Errorf("the server saw requests from %q, want one from kex-1", guests)
	}
	mu.Unlock()

	// An index of two objects is above 32 bytes: the probe reads it whole.
	create(t, kopfexamples, ns, kex("kex-2", "b"))
	e2etest.Eventually(t, 30*time.Second, "index_size probe", probedValue(liveness, "index_size", "2"))

	// A host the module did not declare: the call fails with the host's refusal.
	kex3 := kex("kex-3", "c")
	kex3["spec"].(map[string]any)["url"] = strings.Replace(server.URL, "127.0.0.1", "localhost", 1)
	create(t, kopfexamples, ns, kex3)
	e2etest.Eventually(t, 30*time.Second, "the refusal of an undeclared host", logged(logs, "is not allowed: declare its host"))
	mu.Lock()
	defer mu.Unlock()
	if len(guests) != 1 {
		t.Errorf("the server saw requests from %q, want only kex-1's", guests)
	}
}
