package polyglottest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-wasm/kopf-wasm/host"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
)

// allKindsLangs are the languages TestAllKinds runs beside Go, one a line
// (examples/<lang>/allkinds, or examples/allkinds built with TinyGo).
var allKindsLangs = []string{
	guestwasm.TinyGo,
	guestwasm.Rust,
	guestwasm.AssemblyScript,
	guestwasm.Python,
}

var (
	events             = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	validatingWebhooks = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	mutatingWebhooks   = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}
)

// TestAllKinds: the allkinds operator (examples/allkinds.md, the
// contract) in every language gives the same outcomes for every handler
// kind but convert (TestConversion's): startup and cleanup logs (the
// latter once the host stopped), sub-handlers of the create handler and
// its Event (read from the Events API), update with a callable label
// filter, a field handler's old and new values, a timer's patch, a
// daemon started and stopped, event handler logs, an index read whole by
// a probe on the liveness endpoint, validating and mutating webhooks
// called by the API server over TLS, resume after a restart of the host,
// and delete with its finalizer let go. The languages run one after the
// other, as the webhook configurations are the cluster's.
func TestAllKinds(t *testing.T) {
	for _, m := range modules("allkinds", "allkinds", allKindsLangs...) {
		t.Run(m.lang, func(t *testing.T) {
			ns := "allkinds-" + m.lang
			a := &allKinds{t: t, ns: ns, path: m.path(t), liveness: "http://" + freeAddr(t) + "/healthz",
				managed: "allkinds-" + m.lang + ".kopf-wasm.dev"}
			create(t, namespaces, "", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
			t.Setenv("KOPF_WASM_CACHE", t.TempDir())
			t.Cleanup(func() {
				_ = dyn.Resource(validatingWebhooks).Delete(context.Background(), a.managed, metav1.DeleteOptions{})
				_ = dyn.Resource(mutatingWebhooks).Delete(context.Background(), a.managed, metav1.DeleteOptions{})
			})
			a.run(t)
		})
	}
}

// allKinds is one language's run of TestAllKinds.
type allKinds struct {
	t        *testing.T
	ns, path string
	liveness string // the host's liveness URL
	managed  string // the name of its webhook configurations
}

func (a *allKinds) run(t *testing.T) {
	ns := a.ns
	logs, stop := a.start()
	e2etest.Eventually(t, 30*time.Second, "startup", logged(logs, "allkinds started"))

	// validate: the API server calls the host over TLS (once it has seen
	// the configuration) and refuses with the handler's message. The
	// creations are dry runs: one that passed before the configuration
	// was seen would leave an object that validate_fn then forbids to
	// delete (a third object in the index, a retrying cycle at the stop).
	e2etest.Eventually(t, 60*time.Second, "a forbidden field refused by validate_fn", func() error {
		_, err := dyn.Resource(kopfexamples).Namespace(ns).Create(context.Background(), &unstructured.Unstructured{Object: kex("bad", "forbidden")},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			return fmt.Errorf("created (a dry run)")
		}
		if !strings.Contains(err.Error(), "field must not be forbidden") {
			return err
		}
		return nil
	})
	// The mutating configuration may come a moment after the validating one.
	e2etest.Eventually(t, 30*time.Second, "mutating webhook", func() error {
		obj, err := dyn.Resource(mutatingWebhooks).Get(context.Background(), a.managed, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if hooks, _, _ := unstructured.NestedSlice(obj.Object, "webhooks"); len(hooks) == 0 {
			return fmt.Errorf("no mutating webhook yet")
		}
		return nil
	})

	create(t, kopfexamples, ns, kex("one", "a"))
	for _, c := range []struct {
		what, want string
		path       []string
	}{
		{"mutate", "yes", []string{"metadata", "labels", "allkinds-mutated"}},
		{"sub-handler a", "sub a", []string{"status", "create_fn/a"}},
		{"sub-handler b", "sub b", []string{"status", "create_fn/b"}},
		{"field on creation", "a", []string{"status", "field_fn/spec.field", "new"}},
		{"timer", "true", []string{"status", "ticked"}},
	} {
		e2etest.Eventually(t, 30*time.Second, c.what, hasValue(t, kopfexamples, ns, "one", c.want, c.path...))
	}
	if old, found, _ := unstructured.NestedFieldNoCopy(get(t, kopfexamples, ns, "one").Object, "status", "field_fn/spec.field", "old"); found && old != nil {
		t.Errorf("field_fn on creation: old is %v, want none", old)
	}
	e2etest.Eventually(t, 30*time.Second, "the Event of create_fn", hasEvent(ns, "one", "AllKinds", "created"))
	e2etest.Eventually(t, 10*time.Second, "event and daemon logs", logged(logs, "event MODIFIED one", "daemon started one"))

	// index and probe: two keys once a second object is indexed.
	create(t, kopfexamples, ns, kex("two", "b"))
	e2etest.Eventually(t, 30*time.Second, "index_size probe", probedValue(a.liveness, "index_size", "2"))

	// update and field.
	mergePatch(t, kopfexamples, ns, "one", `{"spec":{"field":"c"}}`)
	e2etest.Eventually(t, 30*time.Second, "update", hasValue(t, kopfexamples, ns, "one", "c", "status", "update_fn", "field"))
	e2etest.Eventually(t, 30*time.Second, "field old", hasValue(t, kopfexamples, ns, "one", "a", "status", "field_fn/spec.field", "old"))
	e2etest.Eventually(t, 30*time.Second, "field new", hasValue(t, kopfexamples, ns, "one", "c", "status", "field_fn/spec.field", "new"))

	// The callable label filter: a change of an object labelled skip=yes
	// reaches field_fn, not update_fn (handled in the same cycle, before it).
	mergePatch(t, kopfexamples, ns, "one", `{"metadata":{"labels":{"skip":"yes"}},"spec":{"field":"d"}}`)
	e2etest.Eventually(t, 30*time.Second, "field new after skip", hasValue(t, kopfexamples, ns, "one", "d", "status", "field_fn/spec.field", "new"))
	if err := hasValue(t, kopfexamples, ns, "one", "c", "status", "update_fn", "field")(); err != nil {
		t.Errorf("update_fn ran despite its callable filter: %v", err)
	}
	if get(t, kopfexamples, ns, "one").Object["status"].(map[string]any)["resume_fn"] != nil {
		t.Errorf("resume_fn ran before the host restarted")
	}

	// cleanup: logged once the host has stopped.
	stop()
	if err := logged(logs, "allkinds cleaned up")(); err != nil {
		t.Errorf("cleanup: %v", err)
	}

	// resume: a new host finds the objects.
	logs, _ = a.start()
	e2etest.Eventually(t, 30*time.Second, "resume", hasValue(t, kopfexamples, ns, "one", "resumed", "status", "resume_fn"))

	// delete: the handler runs, the finalizer lets go, the daemon stops.
	remove(t, kopfexamples, ns, "one")
	e2etest.Eventually(t, 30*time.Second, "delete", gone(t, kopfexamples, ns, "one"))
	e2etest.Eventually(t, 10*time.Second, "delete and daemon logs", logged(logs, "deleting one", "daemon stopped one"))
}

// start runs the module's host until the test ends or stop is called,
// with webhooks served to the API server and the liveness endpoint.
func (a *allKinds) start() (logs *e2etest.LogBuffer, stop func()) {
	t := a.t
	s := settings.Default()
	s.Execution.DefaultBackoff, s.Execution.ProbeCache = time.Second, 0
	s.Admission.Listen, s.Admission.Host, s.Admission.Managed = "127.0.0.1:0", "127.0.0.1", a.managed
	logs = &e2etest.LogBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- host.Run(ctx, host.Options{Modules: []string{a.path}, Kubeconfig: env.Kubeconfig, Namespaces: []string{a.ns},
			Health: host.HealthOptions{Liveness: a.liveness}, Settings: &s, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("operator: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the operator did not stop within 30s")
		}
		if t.Failed() {
			t.Logf("operator logs:\n%s", logs.String())
		}
	}
	t.Cleanup(stop)
	return logs, stop
}

// kex is a KopfExample with spec.field.
func kex(name, field string) map[string]any {
	return map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"field": field}}
}

// hasEvent is a condition: an Event about the named object has the reason
// and message.
func hasEvent(ns, name, reason, message string) func() error {
	return func() error {
		list, err := dyn.Resource(events).Namespace(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return err
		}
		var seen []string
		for _, ev := range list.Items {
			r, _, _ := unstructured.NestedString(ev.Object, "reason")
			msg, _, _ := unstructured.NestedString(ev.Object, "message")
			if r == reason && msg == message {
				return nil
			}
			seen = append(seen, r+": "+msg)
		}
		return fmt.Errorf("no event %s: %s among %q", reason, message, seen)
	}
}

// probedValue is a condition: the liveness endpoint answers 200 with the
// probe id's result printing as want.
func probedValue(url, id, want string) func() error {
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
		var m map[string]any
		if err := json.Unmarshal(body, &m); resp.StatusCode != http.StatusOK || err != nil {
			return fmt.Errorf("status %d: %s", resp.StatusCode, body)
		}
		if got := fmt.Sprint(m[id]); got != want {
			return fmt.Errorf("%s is %s, want %s: %s", id, got, want, body)
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
