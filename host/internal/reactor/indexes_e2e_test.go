package reactor_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestIndexes runs examples/12-indexes on the real control plane.
//
//   - Pre-population: objects that exist before the host starts are all
//     indexed before the first change handler runs: the create handler of
//     every one of them (called once) already sees all the others of its
//     owner.
//   - Look-ups across objects: a new object sees the others of its owner.
//   - A deleted object, and one that stops matching the index's filter,
//     no longer contribute.
//   - Memos across kinds: the update handler sees the object's memo with
//     what the startup handler (operator memo), the index handler, the
//     event handler and the create handler put into it.
//   - A swap of the module rebuilds its indexes before its handlers run:
//     the resume handler that the swap runs for every object sees the
//     complete index.
func TestIndexes(t *testing.T) {
	c := startCluster(t)
	const ns = "ix"
	createNamespace(t, c, ns)
	alices := []string{"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7"}
	bobs := []string{"b0", "b1", "b2"}
	// Each object takes its index handler 150 ms: without the host's
	// guarantee the first objects' handlers would see a partial index.
	for _, name := range alices {
		createExample(t, c, ns, name, map[string]any{"owner": "alice", "slowIndex": 150})
	}
	for _, name := range bobs {
		createExample(t, c, ns, name, map[string]any{"owner": "bob", "slowIndex": 150})
	}
	createLabelled(t, c, ns, "hidden", map[string]string{"skip-index": "yes"}, map[string]any{"owner": "alice"})

	rt := newRuntime(t)
	kc := newKube(t, c)
	// The index (about 100 bytes) is larger than requests carry: ctx.Index
	// reads it from the host (index_lookup with all), as a large one.
	set := testSettings()
	set.Execution.IndexInline = 32
	op := run(t, kc, newOperator(t, kc, ns, set, load(t, rt, "indexes", "12-indexes")))

	without := func(names []string, drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(drop, n) })
	}
	// Every pre-existing object's one create call saw the whole index.
	for _, name := range alices {
		e2etest.Eventually(t, 60*time.Second, "pre-populated "+name, hasReport(t, c, ns, name, "create", without(alices, name), 2))
	}
	for _, name := range bobs {
		e2etest.Eventually(t, 60*time.Second, "pre-populated "+name, hasReport(t, c, ns, name, "create", without(bobs, name), 2))
	}
	e2etest.Eventually(t, 60*time.Second, "not indexed itself", hasReport(t, c, ns, "hidden", "create", alices, 2))

	createExample(t, c, ns, "c0", map[string]any{"owner": "bob"})
	e2etest.Eventually(t, 60*time.Second, "a new object", hasReport(t, c, ns, "c0", "create", bobs, 2))
	createExample(t, c, ns, "d0", map[string]any{"owner": "dave"})
	e2etest.Eventually(t, 60*time.Second, "a new owner", hasReport(t, c, ns, "d0", "create", nil, 3))

	// Deletion and filter mismatch drop an object's contributions.
	if err := c.dyn.Resource(kopfexamples).Namespace(ns).Delete(context.Background(), "a7", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e2etest.Eventually(t, 60*time.Second, "a7 deleted", func() error {
		if get(t, c, ns, "a7") != nil {
			return fmt.Errorf("a7 still exists")
		}
		return nil
	})
	patchExample(t, c, ns, "a6", `{"metadata":{"labels":{"skip-index":"yes"}}}`)
	patchExample(t, c, ns, "d0", `{"spec":{"owner":"erin"}}`)
	patchExample(t, c, ns, "a0", `{"spec":{"touched":1}}`)
	e2etest.Eventually(t, 60*time.Second, "a7 and a6 gone from the index", hasReport(t, c, ns, "a0", "update", []string{"a1", "a2", "a3", "a4", "a5"}, 3))

	// The object's memo, shared by every kind.
	obj := get(t, c, ns, "a0")
	memo, _, _ := unstructured.NestedMap(obj.Object, "status", "report", "memo")
	indexed, _ := memo["indexed"].(int64)
	events, _ := memo["events"].(int64)
	if memo["region"] != "eu-west" || indexed < 2 || events < 2 || memo["reported"] != "create" {
		t.Errorf("the update handler's memo = %v; want region eu-west (startup), the index and event handlers' calls counted (2 or more), reported create (the create handler)", memo)
	}

	// A swap rebuilds the new version's indexes before its handlers run.
	start := time.Now()
	if err := op.Swap(context.Background(), []*wasmrt.Module{load(t, rt, "indexes", "12-indexes")}); err != nil {
		t.Fatal(err)
	}
	t.Logf("swap took %s", time.Since(start))
	for _, name := range []string{"a1", "b0", "c0"} {
		want := []string{"a0", "a2", "a3", "a4", "a5"}
		if name != "a1" {
			want = without([]string{"b0", "b1", "b2", "c0"}, name)
		}
		e2etest.Eventually(t, 60*time.Second, "resumed after the swap "+name, hasReport(t, c, ns, name, "resume", want, 3))
	}
}

// hasReport checks status.report of an object: the reason, the others of
// its owner and the number of owners.
func hasReport(t *testing.T, c *cluster, ns, name, reason string, others []string, owners int64) func() error {
	return func() error {
		obj := get(t, c, ns, name)
		if obj == nil {
			return fmt.Errorf("%s does not exist", name)
		}
		r, _, _ := unstructured.NestedMap(obj.Object, "status", "report")
		got, _, _ := unstructured.NestedStringSlice(obj.Object, "status", "report", "others")
		n, _, _ := unstructured.NestedInt64(obj.Object, "status", "report", "owners")
		if r == nil || r["reason"] != reason {
			return fmt.Errorf("status.report of %s = %v, want reason %s", name, r, reason)
		}
		if strings.Join(got, ",") != strings.Join(others, ",") || n != owners {
			return fmt.Errorf("status.report of %s: others %v and %d owners, want %v and %d (which a complete index gives)", name, got, n, others, owners)
		}
		return nil
	}
}

func createLabelled(t *testing.T, c *cluster, ns, name string, labels map[string]string, spec map[string]any) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name}, "spec": spec}}
	obj.SetLabels(labels)
	if _, err := c.dyn.Resource(kopfexamples).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func patchExample(t *testing.T, c *cluster, ns, name, patch string) {
	t.Helper()
	if _, err := c.dyn.Resource(kopfexamples).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestMemosAcrossKinds runs testguests/memos: the memo the timer gets holds
// what the startup handler put into the operator memo and what the index,
// event, create and daemon handlers put into the object's memo; another
// object's memo starts again from the operator memo.
func TestMemosAcrossKinds(t *testing.T) {
	c := startCluster(t)
	const ns = "memos"
	createNamespace(t, c, ns)
	kc := newKube(t, c)
	run(t, kc, newOperator(t, kc, ns, testSettings(), load(t, newRuntime(t), "memos", "testguests/memos")))
	for _, name := range []string{"m1", "m2"} {
		createExample(t, c, ns, name, map[string]any{})
	}
	for _, name := range []string{"m1", "m2"} {
		e2etest.Eventually(t, 60*time.Second, "the memo of "+name, func() error {
			obj := get(t, c, ns, name)
			tick, _, _ := unstructured.NestedMap(obj.Object, "status", "tick")
			for key, want := range map[string]any{"region": "eu-west", "index": true, "event": true, "create": true, "daemon": true} {
				if tick[key] != want {
					return fmt.Errorf("the timer's memo of %s is %v; want %s=%v (startup, index, event, create and daemon handlers)", name, tick, key, want)
				}
			}
			return nil
		})
	}
}
