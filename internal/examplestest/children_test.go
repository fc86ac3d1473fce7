package examplestest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestChildren: the parent's status lists its children, and each child Pod
// has exactly one owner reference, to the parent, and the parent's labels;
// when the parent is deleted, the garbage collector deletes the Pods.
func TestChildren(t *testing.T) {
	const ns = "ex-children"
	logs := operator(t, ns, "01-children")
	createObject(t, kopfexamples, ns, kex("family", map[string]any{"team": "a"}, map[string]any{"children": 3}))
	e2etest.Eventually(t, 30*time.Second, "status", hasString(t, kopfexamples, ns, "family", "[family-0 family-1 family-2]",
		"status", "create_children", "children"))
	parent := get(t, kopfexamples, ns, "family")
	want := []any{map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "name": "family", "uid": string(parent.GetUID()),
		"controller": true, "blockOwnerDeletion": true,
	}}
	for i := range 3 {
		name := fmt.Sprintf("family-%d", i)
		pod := get(t, pods, ns, name)
		if pod == nil {
			t.Fatalf("pod %s does not exist", name)
		}
		if refs := pod.Object["metadata"].(map[string]any)["ownerReferences"]; !reflect.DeepEqual(refs, want) {
			t.Errorf("pod %s: ownerReferences %v; want %v", name, refs, want)
		}
		if pod.GetLabels()["team"] != "a" {
			t.Errorf("pod %s: labels %v; want the parent's team=a", name, pod.GetLabels())
		}
	}
	e2etest.Eventually(t, 5*time.Second, "log", logged(logs, "child pod created", "family-2"))

	begin := time.Now()
	deleteObject(t, kopfexamples, ns, "family")
	e2etest.Eventually(t, time.Minute, "children collected", goneAll(t, ns,
		child{pods, "family-0"}, child{pods, "family-1"}, child{pods, "family-2"}))
	t.Logf("the garbage collector deleted the Pods %v after the parent's deletion", time.Since(begin).Round(time.Millisecond))
}
