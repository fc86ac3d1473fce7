package polyglottest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
)

// TestChildren: the richer example (examples/children in Go,
// examples/rust/children, examples/assemblyscript/children,
// examples/python/children with Kopf's own API, and the Go one built with
// TinyGo) makes the same
// outcomes in every language: a ConfigMap per object holding spec.field,
// adopted (a controller owner reference and the parent's labels); a field
// handler that copies a changed spec.field into it; a timer that counts its
// runs in the status; and, once the parent is deleted, the garbage
// collector (kube-controller-manager) deletes the ConfigMap.
func TestChildren(t *testing.T) {
	for _, m := range modules("children", "children", guestwasm.Rust, guestwasm.AssemblyScript, guestwasm.Python, guestwasm.TinyGo) {
		t.Run(m.lang, func(t *testing.T) {
			ns := "kch-" + m.lang
			logs := operator(t, ns, m.path(t))
			create(t, kopfexamples, ns, map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
				"metadata": map[string]any{"name": "family", "labels": map[string]any{"team": "a"}},
				"spec":     map[string]any{"field": "one"}})
			e2etest.Eventually(t, 30*time.Second, "create", hasValue(t, kopfexamples, ns, "family", "family-child", "status", "create_child", "child"))
			e2etest.Eventually(t, 30*time.Second, "sync on creation", hasValue(t, kopfexamples, ns, "family", "one", "status", "sync/spec.field", "field"))
			e2etest.Eventually(t, 10*time.Second, "create log", logged(logs, "child created", "configmap=family-child"))

			parent := get(t, kopfexamples, ns, "family")
			cm := get(t, configmaps, ns, "family-child")
			if cm == nil {
				t.Fatal("the ConfigMap family-child does not exist")
			}
			want := []any{map[string]any{
				"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "name": "family", "uid": string(parent.GetUID()),
				"controller": true, "blockOwnerDeletion": true,
			}}
			if refs, _, _ := unstructured.NestedFieldNoCopy(cm.Object, "metadata", "ownerReferences"); !reflect.DeepEqual(refs, want) {
				t.Errorf("ownerReferences %v; want %v", refs, want)
			}
			if cm.GetLabels()["team"] != "a" {
				t.Errorf("labels %v; want the parent's team=a", cm.GetLabels())
			}
			e2etest.Eventually(t, 10*time.Second, "data", hasValue(t, configmaps, ns, "family-child", "one", "data", "field"))
			e2etest.Eventually(t, 30*time.Second, "heartbeat", func() error {
				obj := get(t, kopfexamples, ns, "family")
				v, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "heartbeat", "beats")
				if beats, ok := v.(int64); !ok || beats < 2 { // JSON integers decode as int64
					return fmt.Errorf("status.heartbeat.beats is %v, want 2 or more", v)
				}
				return nil
			})

			mergePatch(t, kopfexamples, ns, "family", `{"spec":{"field":"two"}}`)
			e2etest.Eventually(t, 30*time.Second, "sync", hasValue(t, kopfexamples, ns, "family", "two", "status", "sync/spec.field", "field"))
			e2etest.Eventually(t, 10*time.Second, "synced data", hasValue(t, configmaps, ns, "family-child", "two", "data", "field"))
			e2etest.Eventually(t, 10*time.Second, "sync log", logged(logs, "child synced", "handler=sync/spec.field", "field=two"))

			begin := time.Now()
			remove(t, kopfexamples, ns, "family")
			e2etest.Eventually(t, 30*time.Second, "parent deleted", gone(t, kopfexamples, ns, "family"))
			e2etest.Eventually(t, time.Minute, "child collected", gone(t, configmaps, ns, "family-child"))
			t.Logf("the garbage collector deleted the ConfigMap %v after the parent's deletion", time.Since(begin).Round(time.Millisecond))
		})
	}
}
