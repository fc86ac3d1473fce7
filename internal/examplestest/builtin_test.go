package examplestest

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestBuiltin: labelled ConfigMaps get their key count, again after a
// change; unlabelled ones are left alone; deletions are logged.
func TestBuiltin(t *testing.T) {
	const ns = "ex-builtin"
	logs := operator(t, ns, "04-builtin")
	cm := func(name string, labels map[string]any, data map[string]any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "labels": labels}, "data": data}
	}
	createObject(t, configmaps, ns, cm("counted", map[string]any{"example.kopf.dev/count": "yes"}, map[string]any{"a": "1", "b": "2"}))
	createObject(t, configmaps, ns, cm("ignored", nil, map[string]any{"a": "1"}))
	keys := func(name, want string) func() error {
		return hasString(t, configmaps, ns, name, want, "metadata", "annotations", "example.kopf.dev/keys")
	}
	e2etest.Eventually(t, 30*time.Second, "count", keys("counted", "2"))
	mergePatch(t, configmaps, ns, "counted", `{"data":{"c":"3"}}`)
	e2etest.Eventually(t, 30*time.Second, "recount", keys("counted", "3"))
	if err := keys("ignored", "<nil>")(); err != nil {
		t.Errorf("an unlabelled ConfigMap was handled: %v", err)
	}
	if err := dyn.Resource(configmaps).Namespace(ns).Delete(context.Background(), "counted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e2etest.Eventually(t, 30*time.Second, "deletion", logged(logs, "counted keys", "configmap deleted"))
	e2etest.Eventually(t, 30*time.Second, "finalizer released", func() error {
		if obj := get(t, configmaps, ns, "counted"); obj != nil {
			return fmt.Errorf("still there, finalizers %q", obj.GetFinalizers())
		}
		return nil
	})
}
