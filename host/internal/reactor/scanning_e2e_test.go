package reactor_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

var (
	crds    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	widgets = schema.GroupVersionResource{Group: "scan.kopf.dev", Version: "v1", Resource: "widgets"}
)

// widgetCRD is a CRD created while the host runs, in the category
// "kopfscan".
func widgetCRD() *unstructured.Unstructured {
	schemaProps := map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.scan.kopf.dev"},
		"spec": map[string]any{
			"group": "scan.kopf.dev", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "categories": []any{"kopfscan"}},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema":       map[string]any{"openAPIV3Schema": schemaProps},
				"subresources": map[string]any{"status": map[string]any{}}}},
		},
	}}
}

// TestScanning: a CRD created after the host started is served without a
// swap — by the handler that names it, by the one of its category and by
// the one of every resource of its group —
// and a callable label filter is evaluated in the guest (a non-matching
// object gets nothing of that handler); removing the CRD stops its watch
// cleanly, and creating it again serves it again.
func TestScanning(t *testing.T) {
	c := startCluster(t)
	const ns = "scanning"
	createNamespace(t, c, ns)
	logs := &e2etest.LogBuffer{}
	set := settings.Default()
	set.Execution.DefaultBackoff = time.Second
	set.Watching.ScanDelays = []time.Duration{100 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second}
	// The streamed listing (not the default) answers later than a LIST from
	// the watch cache, so a CRD created while the scan starts comes in the
	// CRD watch's initial listing, which reports no change: without a rescan
	// once that listing is in, widgets were never served (5 of 9 runs).
	set.Watching.WatchList = true
	log := slog.New(slog.NewTextHandler(logs, nil))
	cfg, err := kube.LoadConfig(c.env.Kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	// The client logs to the test's buffer too: a watch that failed on
	// after its CRD went would show there.
	kc, err := kube.New(cfg, kube.Options{Settings: &set, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	mod := load(t, newRuntime(t), "scanning", "testguests/scanning")
	run(t, kc, newLoggedOperator(t, kc, ns, set, log, mod))
	defer func() {
		if t.Failed() {
			t.Logf("operator logs:\n%s", logs.String())
		}
	}()
	e2etest.Eventually(t, 30*time.Second, "the widget handler reported as not served", func() error {
		if !strings.Contains(logs.String(), "widget_fn") {
			return fmt.Errorf("not logged yet")
		}
		return nil
	})

	ctx := context.Background()
	createCRD := func() {
		t.Helper()
		e2etest.Eventually(t, 60*time.Second, "CRD created", func() error {
			_, err := c.dyn.Resource(crds).Create(ctx, widgetCRD(), metav1.CreateOptions{})
			return err // AlreadyExists while the last one is still going away
		})
	}
	createWidget := func(name, tier string) {
		t.Helper()
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "scan.kopf.dev/v1", "kind": "Widget",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"tier": tier}}, "spec": map[string]any{}}}
		e2etest.Eventually(t, 60*time.Second, "widget "+name+" created", func() error {
			_, err := c.dyn.Resource(widgets).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
			return err // NotFound until the API server serves the new CRD
		})
	}
	status := func(name string) map[string]any {
		obj, err := c.dyn.Resource(widgets).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil
		}
		st, _, _ := unstructured.NestedMap(obj.Object, "status")
		return st
	}
	handledBy := func(name string, want ...string) func() error {
		return func() error {
			st := status(name)
			for _, id := range want {
				if by, _, _ := unstructured.NestedString(st, id, "by"); by == "" {
					return fmt.Errorf("%s: no status.%s.by in %v", name, id, st)
				}
			}
			return nil
		}
	}

	start := time.Now()
	createCRD()
	createWidget("gold", "gold-1")
	served := time.Since(start)
	createWidget("silver", "silver-1")
	e2etest.Eventually(t, 60*time.Second, "gold handled by all four", handledBy("gold", "widget_fn", "category_fn", "everything_fn", "gold_fn"))
	// A figure, not an assertion: how long a new CRD takes to be served.
	t.Logf("CRD created -> its first object accepted by the API server: %s; -> handled: %s", served, time.Since(start))
	e2etest.Eventually(t, 60*time.Second, "silver handled by three", handledBy("silver", "widget_fn", "category_fn", "everything_fn"))
	if st := status("silver"); st["gold_fn"] != nil {
		t.Errorf("the callable label filter let gold_fn handle the silver widget: %v", st)
	}
	obj, err := c.dyn.Resource(widgets).Namespace(ns).Get(ctx, "silver", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k := range obj.GetAnnotations() {
		if strings.Contains(k, "gold_fn") {
			t.Errorf("progress of gold_fn stored on the silver widget: %s", k)
		}
	}

	if err := c.dyn.Resource(crds).Delete(ctx, "widgets.scan.kopf.dev", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e2etest.Eventually(t, 60*time.Second, "CRD gone", func() error {
		_, err := c.dyn.Resource(crds).Get(ctx, "widgets.scan.kopf.dev", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there: %v", err)
	})
	e2etest.Eventually(t, 60*time.Second, "the widgets watch stopped", func() error {
		if !strings.Contains(logs.String(), `"gone resources"=[widgets.v1.scan.kopf.dev]`) {
			return fmt.Errorf("no rescan dropped widgets yet")
		}
		return nil
	})
	mark := len(logs.String())
	time.Sleep(5 * time.Second)
	for _, line := range strings.Split(logs.String()[mark:], "\n") {
		if strings.Contains(line, "widgets") && (strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN")) {
			t.Errorf("after the watch stopped: %s", line)
		}
	}

	createCRD()
	createWidget("again", "gold-2")
	e2etest.Eventually(t, 60*time.Second, "served again after the CRD came back", handledBy("again", "widget_fn", "category_fn", "everything_fn", "gold_fn"))
}
