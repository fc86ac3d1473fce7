package polyglottest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
)

var (
	widgetsV1       = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "widgets"}
	widgetsV1alpha1 = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1alpha1", Resource: "widgets"}
	crds            = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// TestConversion: the conversion example (examples/10-conversion) in
// every language converts Widgets for the API server: the host points the
// CRD's conversion at the module's convert handler, a widget written as
// v1alpha1 is read as v1 and back, one written as v1 is read as
// v1alpha1, and a size that is no number is refused with the handler's
// message. The languages run one after the other, each host setting the
// CRD's conversion to itself.
func TestConversion(t *testing.T) {
	t.Cleanup(func() {
		_, _ = dyn.Resource(crds).Patch(context.Background(), "widgets.kopf.dev", types.JSONPatchType,
			[]byte(`[{"op":"replace","path":"/spec/conversion","value":{"strategy":"None"}}]`), metav1.PatchOptions{})
	})
	for _, m := range modules("10-conversion", "conversion", guestwasm.Rust, guestwasm.AssemblyScript) {
		t.Run(m.lang, func(t *testing.T) {
			ns := "conv-" + m.lang
			logs := operatorWith(t, ns, m.path(t), func(s *settings.Settings) {
				s.Admission.Listen, s.Admission.Host, s.Admission.Managed = "127.0.0.1:0", "127.0.0.1", "conv-"+m.lang+".kopf-wasm.dev"
			})
			e2etest.Eventually(t, 60*time.Second, "the CRD's conversion set by this host", logged(logs, "CRD conversion set", `served="[v1alpha1 v1]"`))
			widget := func(res schema.GroupVersionResource, name string, spec map[string]any) error {
				_, err := dyn.Resource(res).Namespace(ns).Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
					"apiVersion": "kopf.dev/" + res.Version, "kind": "Widget", "metadata": map[string]any{"name": name}, "spec": spec}}, metav1.CreateOptions{})
				return err
			}
			// The API server takes a moment to use the new conversion (the
			// previous language's host is gone): this module's message
			// comes once it does.
			e2etest.Eventually(t, 120*time.Second, "an unconvertible widget refused by the handler", func() error {
				err := widget(widgetsV1alpha1, "bad", map[string]any{"size": "many"})
				if err == nil {
					_ = dyn.Resource(widgetsV1alpha1).Namespace(ns).Delete(context.Background(), "bad", metav1.DeleteOptions{})
					return fmt.Errorf("created")
				}
				if !strings.Contains(err.Error(), `spec.size \"many\" is not a number`) && !strings.Contains(err.Error(), `spec.size "many" is not a number`) {
					return err
				}
				return nil
			})
			if err := widget(widgetsV1alpha1, "small", map[string]any{"size": "3"}); err != nil {
				t.Fatal(err)
			}
			e2etest.Eventually(t, 10*time.Second, "v1alpha1 size 3 read as v1", hasValue(t, widgetsV1, ns, "small", "3", "spec", "replicas"))
			e2etest.Eventually(t, 10*time.Second, "read back as v1alpha1", hasValue(t, widgetsV1alpha1, ns, "small", "3", "spec", "size"))
			if err := widget(widgetsV1, "big", map[string]any{"replicas": int64(5)}); err != nil {
				t.Fatal(err)
			}
			e2etest.Eventually(t, 10*time.Second, "v1 replicas 5 read as v1alpha1", hasValue(t, widgetsV1alpha1, ns, "big", "5", "spec", "size"))
			if obj := get(t, widgetsV1alpha1, ns, "big"); obj.GetAPIVersion() != "kopf.dev/v1alpha1" {
				t.Errorf("read as v1alpha1: apiVersion %s", obj.GetAPIVersion())
			}
		})
	}
}
