package reactor_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// testSettings are the defaults with short delays, so that retries after
// arbitrary errors happen within a test's patience.
func testSettings() settings.Settings {
	s := settings.Default()
	s.Execution.DefaultBackoff = time.Second
	return s
}

// TestHandlers runs the reactor test module on one control plane with one
// operator, each case in a namespace of its own.
func TestHandlers(t *testing.T) {
	c := startCluster(t)
	for _, ns := range []string{"h-errors", "h-field", "h-filters", "h-conflict", "h-loop"} {
		createNamespace(t, c, ns)
	}
	logs := &logRecorder{}
	kc := newKube(t, c)
	run(t, kc, newLoggedOperator(t, kc, "h-*", testSettings(), slog.New(logs), load(t, newRuntime(t), "reactor", "testguests/reactor")))

	t.Run("temporary error is retried after its delay", func(t *testing.T) {
		start := time.Now()
		createExample(t, c, "h-errors", "temporary", map[string]any{"create": "temporary", "times": 2, "delay": 1})
		e2etest.Eventually(t, 30*time.Second, "created", hasMessage(t, c, "h-errors", "temporary", "create_fn", "created"))
		obj := get(t, c, "h-errors", "temporary")
		retry, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "create_fn", "retry")
		if fmt.Sprint(retry) != "2" {
			t.Errorf("the handler succeeded at retry %v, want 2", retry)
		}
		if elapsed := time.Since(start); elapsed < 2*time.Second {
			t.Errorf("two retries with a 1s delay took only %s", elapsed)
		}
		if runs := obj.GetAnnotations()["create-runs"]; runs != "3" {
			t.Errorf("the handler's own patch was applied %s times, want 3 (every attempt)", runs)
		}
		assertNoProgress(t, obj)
	})

	t.Run("permanent error is not retried", func(t *testing.T) {
		createExample(t, c, "h-errors", "permanent", map[string]any{"create": "permanent"})
		e2etest.Eventually(t, 20*time.Second, "warning event", hasEvent(t, c, "h-errors", "permanent", "cannot ever work"))
		time.Sleep(1500 * time.Millisecond)
		obj := get(t, c, "h-errors", "permanent")
		if msg := statusMessage(obj, "create_fn"); msg != "" {
			t.Errorf("a permanently failed handler stored a result: %q", msg)
		}
		if runs := obj.GetAnnotations()["create-runs"]; runs != "1" {
			t.Errorf("the handler ran %s times, want once", runs)
		}
		assertNoProgress(t, obj)
	})

	t.Run("arbitrary error is retried after the backoff", func(t *testing.T) {
		createExample(t, c, "h-errors", "arbitrary", map[string]any{"create": "arbitrary"})
		e2etest.Eventually(t, 20*time.Second, "three attempts", func() error {
			if runs := get(t, c, "h-errors", "arbitrary").GetAnnotations()["create-runs"]; runs < "3" {
				return fmt.Errorf("%q attempts so far", runs)
			}
			return nil
		})
		e2etest.Eventually(t, 5*time.Second, "warning event", hasEvent(t, c, "h-errors", "arbitrary", "something unexpected"))
	})

	t.Run("retries limit fails the handler", func(t *testing.T) {
		createExampleWith(t, c, "h-errors", "limited", map[string]string{"mode": "limited"}, map[string]any{})
		e2etest.Eventually(t, 20*time.Second, "created", hasMessage(t, c, "h-errors", "limited", "create_fn", "created"))
		e2etest.Eventually(t, 20*time.Second, "retries exceeded", hasEvent(t, c, "h-errors", "limited", "limited_fn"))
		e2etest.Eventually(t, 20*time.Second, "cause done", func() error {
			return progressLeft(get(t, c, "h-errors", "limited"))
		})
	})

	t.Run("field handler sees old and new values", func(t *testing.T) {
		createExample(t, c, "h-field", "f", map[string]any{"field": "a"})
		e2etest.Eventually(t, 20*time.Second, "created", hasMessage(t, c, "h-field", "f", "create_fn", "created"))
		e2etest.Eventually(t, 5*time.Second, "field on create", hasField(t, c, "h-field", "f", nil, "a"))
		patchSpec(t, c, "h-field", "f", `{"spec":{"field":"b"}}`)
		e2etest.Eventually(t, 20*time.Second, "field changed", hasField(t, c, "h-field", "f", "a", "b"))
		patchSpec(t, c, "h-field", "f", `{"spec":{"other":"x"}}`)
		e2etest.Eventually(t, 20*time.Second, "update", hasMessage(t, c, "h-field", "f", "update_fn", "updated"))
		if err := hasField(t, c, "h-field", "f", "a", "b")(); err != nil {
			t.Errorf("the field handler ran on a change of another field: %v", err)
		}
	})

	t.Run("label filters", func(t *testing.T) {
		createExampleWith(t, c, "h-filters", "with", map[string]string{"mode": "labelled"}, map[string]any{})
		createExampleWith(t, c, "h-filters", "without", map[string]string{"mode": "other"}, map[string]any{})
		e2etest.Eventually(t, 20*time.Second, "labelled", hasMessage(t, c, "h-filters", "with", "labelled_fn", "labelled"))
		e2etest.Eventually(t, 20*time.Second, "created", hasMessage(t, c, "h-filters", "without", "create_fn", "created"))
		if msg := statusMessage(get(t, c, "h-filters", "without"), "labelled_fn"); msg != "" {
			t.Errorf("a handler ran on an object its label filter excludes: %q", msg)
		}
	})

	t.Run("built-in resources, namespaced and cluster-scoped", func(t *testing.T) {
		mark := map[string]any{"kopf-wasm-test": "yes"}
		for _, o := range []struct{ resource, ns, name string }{{"configmaps", "h-filters", "cm"}, {"namespaces", "", "h-builtin"}} {
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": kindOf(o.resource),
				"metadata": map[string]any{"name": o.name, "labels": mark}}}
			gvr := schema.GroupVersionResource{Version: "v1", Resource: o.resource}
			if _, err := c.dyn.Resource(gvr).Namespace(o.ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"configmaps": "configmap_fn", "namespaces": "namespace_fn"}[o.resource]
			e2etest.Eventually(t, 20*time.Second, o.resource, func() error {
				got, err := c.dyn.Resource(gvr).Namespace(o.ns).Get(context.Background(), o.name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				if by := got.GetAnnotations()["handled-by"]; by != want {
					return fmt.Errorf("handled-by is %q, want %q", by, want)
				}
				// Without a status subresource the diff-base stays in
				// its annotation: a status here would be dropped.
				if _, ok := got.GetAnnotations()["kopf.zalando.org/last-handled-configuration"]; !ok {
					return fmt.Errorf("no diff-base annotation: %v", got.GetAnnotations())
				}
				return nil
			})
		}
	})

	t.Run("a conflicting write is retried from fresh state", func(t *testing.T) {
		createExample(t, c, "h-conflict", "c", map[string]any{"create": "conflict"})
		e2etest.Eventually(t, 30*time.Second, "created", hasMessage(t, c, "h-conflict", "c", "create_fn", "created"))
		obj := get(t, c, "h-conflict", "c")
		if obj.GetLabels()["touched"] != "yes" {
			t.Errorf("the other writer's change is lost: labels %v", obj.GetLabels())
		}
		if !hasFinalizer(obj) {
			t.Errorf("no finalizer: %v", obj.GetFinalizers())
		}
		if f, _, _ := unstructured.NestedBool(obj.Object, "status", "create_fn", "finalized"); !f {
			t.Error("the create handler ran before the finalizer was stored (Kopf adds it in a cycle of its own)")
		}
		// The handler's own write changed the object during the cycle: the
		// cycle's patches (unlocked) still apply at once, without a throttle
		// and another run of the handler.
		if throttled := logs.about("c", "Throttling"); len(throttled) > 0 {
			t.Errorf("the conflict throttled the object: %q", throttled)
		}
		if runs := obj.GetAnnotations()["create-runs"]; runs != "1" {
			t.Errorf("the create handler's annotation says %s runs, want 1", runs)
		}
	})

	t.Run("a looping handler does not stop the others", func(t *testing.T) {
		createExample(t, c, "h-loop", "loop", map[string]any{"create": "loop"})
		time.Sleep(200 * time.Millisecond)
		createExample(t, c, "h-loop", "fine", map[string]any{})
		e2etest.Eventually(t, 10*time.Second, "the other object", hasMessage(t, c, "h-loop", "fine", "create_fn", "created"))
		e2etest.Eventually(t, 30*time.Second, "timeout reported", hasEvent(t, c, "h-loop", "loop", "timeout"))
		if msg := statusMessage(get(t, c, "h-loop", "loop"), "create_fn"); msg != "" {
			t.Errorf("the looping handler stored a result: %q", msg)
		}
	})
}

func kindOf(resource string) string {
	return map[string]string{"configmaps": "ConfigMap", "namespaces": "Namespace"}[resource]
}

func createExampleWith(t *testing.T, c *cluster, ns, name string, labels map[string]string, spec map[string]any) {
	t.Helper()
	meta := map[string]any{"name": name}
	if labels != nil {
		l := map[string]any{}
		for k, v := range labels {
			l[k] = v
		}
		meta["labels"] = l
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": meta, "spec": spec}}
	if _, err := c.dyn.Resource(kopfexamples).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func patchSpec(t *testing.T, c *cluster, ns, name, patch string) {
	t.Helper()
	if _, err := c.dyn.Resource(kopfexamples).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

func hasField(t *testing.T, c *cluster, ns, name string, old, new any) func() error {
	return func() error {
		obj := get(t, c, ns, name)
		got, _, _ := unstructured.NestedMap(obj.Object, "status", "field_fn/spec.field")
		if fmt.Sprint(got["old"]) != fmt.Sprint(old) || fmt.Sprint(got["new"]) != fmt.Sprint(new) {
			return fmt.Errorf("status.field_fn/spec.field is %v, want old=%v new=%v", got, old, new)
		}
		return nil
	}
}

// hasEvent finds an Event about the object whose message contains text.
func hasEvent(t *testing.T, c *cluster, ns, name, text string) func() error {
	return func() error {
		list, err := c.dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(ns).
			List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return err
		}
		var seen []string
		for _, ev := range list.Items {
			msg, _, _ := unstructured.NestedString(ev.Object, "message")
			if strings.Contains(msg, text) {
				return nil
			}
			seen = append(seen, msg)
		}
		return fmt.Errorf("no event with %q among %q", text, seen)
	}
}

func hasFinalizer(obj *unstructured.Unstructured) bool {
	for _, f := range obj.GetFinalizers() {
		if f == finalizer {
			return true
		}
	}
	return false
}

// progressLeft fails while the object carries progress records.
func progressLeft(obj *unstructured.Unstructured) error {
	for key := range obj.GetAnnotations() {
		if strings.HasPrefix(key, "kopf.zalando.org/") && !strings.HasSuffix(key, "last-handled-configuration") {
			return fmt.Errorf("progress left in annotation %s", key)
		}
	}
	return nil
}

func assertNoProgress(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	if err := progressLeft(obj); err != nil {
		t.Error(err)
	}
}
