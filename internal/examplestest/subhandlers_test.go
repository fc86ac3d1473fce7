package examplestest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/wasmtest"
)

// TestSubhandlers: one sub-handler per item of spec.items, with the
// progress Kopf stores (a record per sub-handler under its own annotation,
// the parent's record listing them in subrefs) and their results under
// status.<parent/child>. The host is restarted while one sub-handler waits
// for its retry: the new host runs only that one, then the parent, and
// purges the records. Items added and removed later get their own
// sub-handlers. An object whose creation Kopf left half-done (its records
// written by hand in Kopf's format) is continued without re-running the
// sub-handler Kopf finished.
func TestSubhandlers(t *testing.T) {
	const ns = "ex-subhandlers"
	createObject(t, gvr("", "v1", "namespaces"), "", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	t.Setenv("KOPF_WASM_CACHE", t.TempDir())
	logs := &e2etest.LogBuffer{}
	defer func() {
		if t.Failed() {
			t.Logf("operator logs:\n%s", logs.String())
		}
	}()
	start := func() (stop func()) {
		s := settings.Default()
		s.Execution.DefaultBackoff = time.Second
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- host.Run(ctx, host.Options{Modules: []string{wasmtest.Path(t, "11-subhandlers")}, Kubeconfig: env.Kubeconfig,
				Namespaces: []string{ns}, Settings: &s, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		}()
		return func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("operator: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the operator did not stop within 30s")
			}
		}
	}
	stop := start()
	defer func() { stop() }()

	createObject(t, kopfexamples, ns, kex("fleet", nil, map[string]any{"items": []any{"a", "b", "slow-c"}}))
	e2etest.Eventually(t, 60*time.Second, "a and b done, slow-c retrying", func() error {
		if err := hasString(t, kopfexamples, ns, "fleet", "fleet-a", "status", "create_items/add-a", "configMap")(); err != nil {
			return err
		}
		if err := hasString(t, kopfexamples, ns, "fleet", "fleet-b", "status", "create_items/add-b", "configMap")(); err != nil {
			return err
		}
		return wantRecord(t, ns, "fleet", "create_items.add-slow-c", func(r kopfRecord) bool { return r.Retries == 1 && r.Delayed != "" && !r.Success })
	})
	// Kopf's records: the parent's lists its sub-handlers, each has its own.
	if err := wantRecord(t, ns, "fleet", "create_items", func(r kopfRecord) bool {
		return r.Purpose == "create" && !r.Success && !r.Failure && r.Delayed != "" &&
			slices.Equal(r.Subrefs, []string{"create_items/add-a", "create_items/add-b", "create_items/add-slow-c"})
	}); err != nil {
		t.Fatal(err)
	}
	if err := wantRecord(t, ns, "fleet", "create_items.add-a", func(r kopfRecord) bool {
		return r.Purpose == "create" && r.Success && r.Retries == 1 && r.Stopped != ""
	}); err != nil {
		t.Fatal(err)
	}
	if obj := get(t, kopfexamples, ns, "fleet"); obj.Object["status"].(map[string]any)["create_items"] != nil {
		t.Fatal("the parent's result is stored before its sub-handlers are done")
	}

	stop() // restart while slow-c waits for its retry
	stop = start()
	e2etest.Eventually(t, 60*time.Second, "creation done after the restart",
		hasString(t, kopfexamples, ns, "fleet", "[a b slow-c]", "status", "create_items", "items"))
	if err := hasString(t, kopfexamples, ns, "fleet", "fleet-slow-c", "status", "create_items/add-slow-c", "configMap")(); err != nil {
		t.Fatal(err)
	}
	e2etest.Eventually(t, 10*time.Second, "progress purged", noRecords(t, ns, "fleet"))
	wantCalls(t, logs, "adding item", map[string]int{"a": 1, "b": 1, "slow-c": 2})
	if get(t, configmaps, ns, "fleet-slow-c") == nil {
		t.Fatal("configmap fleet-slow-c was not created")
	}

	// Items added and removed: sub-handlers of the update handler.
	mergePatch(t, kopfexamples, ns, "fleet", `{"spec":{"items":["a","slow-c","d"]}}`)
	e2etest.Eventually(t, 60*time.Second, "update done",
		hasString(t, kopfexamples, ns, "fleet", "[a slow-c d]", "status", "update_items", "items"))
	for _, c := range []struct{ path, want string }{{"update_items/add-d", "fleet-d"}} {
		if err := hasString(t, kopfexamples, ns, "fleet", c.want, "status", c.path, "configMap")(); err != nil {
			t.Error(err)
		}
	}
	if err := hasString(t, kopfexamples, ns, "fleet", "fleet-b", "status", "update_items/remove-b", "removed")(); err != nil {
		t.Error(err)
	}
	e2etest.Eventually(t, 10*time.Second, "configmap of b removed", goneAll(t, ns, child{configmaps, "fleet-b"}))
	wantCalls(t, logs, "adding item", map[string]int{"a": 1, "b": 1, "slow-c": 2, "d": 1})
	wantCalls(t, logs, "removing item", map[string]int{"b": 1})
	e2etest.Eventually(t, 10*time.Second, "progress purged", noRecords(t, ns, "fleet"))

	// An object Kopf began to create: add-x finished, add-y not yet.
	started := time.Now().UTC().Add(-time.Minute).Format("2006-01-02T15:04:05.000000+00:00")
	obj := kex("from-kopf", nil, map[string]any{"items": []any{"x", "y"}})
	obj["metadata"].(map[string]any)["annotations"] = map[string]any{
		"kopf.zalando.org/create_items": `{"started":"` + started + `","delayed":"` + started +
			`","purpose":"create","retries":1,"success":false,"failure":false,"subrefs":["create_items/add-x"]}`,
		"kopf.zalando.org/create_items.add-x": `{"started":"` + started + `","stopped":"` + started +
			`","purpose":"create","retries":1,"success":true,"failure":false}`,
	}
	createObject(t, kopfexamples, ns, obj)
	e2etest.Eventually(t, 60*time.Second, "Kopf's creation continued",
		hasString(t, kopfexamples, ns, "from-kopf", "[x y]", "status", "create_items", "items"))
	wantCalls(t, logs, "adding item", map[string]int{"x": 0, "y": 1})
	e2etest.Eventually(t, 10*time.Second, "progress purged", noRecords(t, ns, "from-kopf"))
}

// kopfRecord is Kopf's progress record as stored in an annotation.
type kopfRecord struct {
	Started, Stopped, Delayed, Purpose, Message string
	Retries                                     int
	Success, Failure                            bool
	Subrefs                                     []string
}

// wantRecord checks the record under kopf.zalando.org/<key>.
func wantRecord(t *testing.T, ns, name, key string, ok func(kopfRecord) bool) error {
	obj := get(t, kopfexamples, ns, name)
	if obj == nil {
		return fmt.Errorf("%s does not exist", name)
	}
	raw, found := obj.GetAnnotations()["kopf.zalando.org/"+key]
	if !found {
		return fmt.Errorf("no record %s (annotations %v)", key, obj.GetAnnotations())
	}
	var r kopfRecord
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return fmt.Errorf("record %s: %w", key, err)
	}
	if !ok(r) {
		return fmt.Errorf("record %s is %s", key, raw)
	}
	return nil
}

// noRecords is a condition: the object has no progress records left.
func noRecords(t *testing.T, ns, name string) func() error {
	return func() error {
		for k := range get(t, kopfexamples, ns, name).GetAnnotations() {
			if strings.HasPrefix(k, "kopf.zalando.org/") && k != "kopf.zalando.org/last-handled-configuration" {
				return fmt.Errorf("annotation %s is still there", k)
			}
		}
		return nil
	}
}

// wantCalls checks how often the guest logged msg for each item.
func wantCalls(t *testing.T, logs *e2etest.LogBuffer, msg string, want map[string]int) {
	t.Helper()
	got := map[string]int{}
	for _, line := range strings.Split(logs.String(), "\n") {
		if !strings.Contains(line, `msg="`+msg+`"`) {
			continue
		}
		for item := range want {
			if strings.Contains(line, " item="+item+" ") {
				got[item]++
			}
		}
	}
	for item, n := range want {
		if got[item] != n {
			t.Errorf("%s %s: %d calls, want %d", msg, item, got[item], n)
		}
	}
}
