package polyglottest

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
)

var gadgets = schema.GroupVersionResource{Group: "select.kopf.dev", Version: "v1", Resource: "gadgets"}

// TestRustSelectors: the Rust SDK's resource selectors and callable
// filters as the host serves them (examples/rust/selectors): a gadget is
// handled by the handler of its category, by the one of every resource of
// its group and by the one a callable selector took (the host asked the
// module), and by the handler with a callable label filter only when the
// filter says so (asked in the guest); nothing of that handler is stored
// on the other gadget.
func TestRustSelectors(t *testing.T) {
	ctx := context.Background()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets.select.kopf.dev"},
		"spec": map[string]any{
			"group": "select.kopf.dev", "scope": "Namespaced",
			"names": map[string]any{"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "categories": []any{"kopfselect"}},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema":       map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
				"subresources": map[string]any{"status": map[string]any{}}}},
		},
	}}
	if _, err := dyn.Resource(crds).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = dyn.Resource(crds).Delete(context.Background(), "gadgets.select.kopf.dev", metav1.DeleteOptions{})
	})

	const ns = "rust-selectors"
	operator(t, ns, guestwasm.Path(t, guestwasm.Rust, "selectors"))
	gadget := func(name, tier string) {
		t.Helper()
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "select.kopf.dev/v1", "kind": "Gadget",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"tier": tier}}, "spec": map[string]any{}}}
		e2etest.Eventually(t, 60*time.Second, "gadget "+name+" created", func() error {
			_, err := dyn.Resource(gadgets).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
			return err // NotFound until the API server serves the new CRD
		})
	}
	handledBy := func(name string, ids ...string) func() error {
		return func() error {
			obj := get(t, gadgets, ns, name)
			if obj == nil {
				return fmt.Errorf("%s does not exist", name)
			}
			for _, id := range ids {
				if by, _, _ := unstructured.NestedString(obj.Object, "status", id, "by"); by == "" {
					return fmt.Errorf("%s: no status.%s.by in %v", name, id, obj.Object["status"])
				}
			}
			return nil
		}
	}
	gadget("gold", "gold-1")
	gadget("silver", "silver-1")
	e2etest.Eventually(t, 60*time.Second, "gold handled by all four", handledBy("gold", "category_fn", "everything_fn", "selected_fn", "gold_fn"))
	e2etest.Eventually(t, 60*time.Second, "silver handled by three", handledBy("silver", "category_fn", "everything_fn", "selected_fn"))
	if st, _, _ := unstructured.NestedMap(get(t, gadgets, ns, "silver").Object, "status"); st["gold_fn"] != nil {
		t.Errorf("the callable label filter let gold_fn handle the silver gadget: %v", st)
	}
}
