package examplestest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestActivities: the startup handler ran before anything else, the
// cleanup handler when the host stopped; the probe handlers answer on the
// liveness endpoint as Kopf's {probe_id: result}, a failing probe turns it
// to 500 with the probe's error, and it recovers with the probe.
func TestActivities(t *testing.T) {
	const ns = "ex-activities"
	createObject(t, gvr("", "v1", "namespaces"), "", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	logs := &e2etest.LogBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := settings.Default()
	s.Execution.ProbeCache = time.Second
	liveness := "http://" + freeAddr(t) + "/healthz"
	done := make(chan error, 1)
	go func() {
		done <- host.Run(ctx, host.Options{Modules: []string{wasmtest.Path(t, "06-activities")}, Kubeconfig: env.Kubeconfig,
			Namespaces: []string{ns}, Health: host.HealthOptions{Liveness: liveness}, Settings: &s, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	}()
	defer func() {
		if t.Failed() {
			t.Logf("operator logs:\n%s", logs.String())
		}
	}()
	stamp := func(key string) func() error {
		return hasStringSet(t, ns, key)
	}
	e2etest.Eventually(t, 30*time.Second, "startup", stamp("started"))
	createObject(t, kopfexamples, ns, kex("served", nil, map[string]any{}))
	e2etest.Eventually(t, 30*time.Second, "served", hasString(t, kopfexamples, ns, "served", "created", "status", "create_fn", "message"))

	started, _, _ := unstructured.NestedString(get(t, configmaps, ns, "activities").Object, "data", "started")
	e2etest.Eventually(t, 30*time.Second, "probes answered", probed(liveness, http.StatusOK, func(m map[string]any) error {
		if m["version"] != "0.1.0" || m["started"] != started || len(m) != 2 {
			return fmt.Errorf("want version 0.1.0 and started %q", started)
		}
		return nil
	}))
	deleteObject(t, configmaps, ns, "activities")
	e2etest.Eventually(t, 30*time.Second, "failing probe reported", probed(liveness, http.StatusInternalServerError, func(m map[string]any) error {
		failure, _ := m["started"].(map[string]any)
		if m["version"] != "0.1.0" || failure == nil || failure["error"] == nil {
			return fmt.Errorf(`want version 0.1.0 and started {"error": ...}`)
		}
		return nil
	}))
	createObject(t, configmaps, ns, map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "activities", "namespace": ns}, "data": map[string]any{"started": started}})
	e2etest.Eventually(t, 30*time.Second, "probe recovered", probed(liveness, http.StatusOK, func(m map[string]any) error {
		if m["started"] != started {
			return fmt.Errorf("want started %q", started)
		}
		return nil
	}))

	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := stamp("stopped")(); err != nil {
		t.Errorf("cleanup: %v\n%s", err, logs.String())
	}
	if err := stamp("started")(); err != nil {
		t.Errorf("the cleanup stamp took the startup stamp away: %v", err)
	}
}

// probed checks the liveness endpoint's status code and its JSON object.
func probed(url string, code int, check func(map[string]any) error) func() error {
	return func() error {
		resp, err := http.Get(url)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != code {
			return fmt.Errorf("status %d, want %d: %s", resp.StatusCode, code, body)
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			return fmt.Errorf("not a JSON object: %s", body)
		}
		if err := check(m); err != nil {
			return fmt.Errorf("%w; got %s", err, body)
		}
		return nil
	}
}

// freeAddr is a free local address.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}
