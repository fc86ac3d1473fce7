package reactor_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

const finalizer = "kopf.zalando.org/KopfFinalizerMarker"

// TestCreateUpdateDelete runs Kopf's kopfexample module: every object is
// created, updated and deleted with its handlers' results on it, the
// finalizer held while a delete handler is pending, and few API writes.
func TestCreateUpdateDelete(t *testing.T) {
	c := startCluster(t)
	createNamespace(t, c, "ex")
	op := startOperator(t, c, "ex", settings.Default(), "kopfexample")
	const n = 5
	for i := range n {
		createExample(t, c, "ex", fmt.Sprintf("ex-%d", i), map[string]any{"field": "value"})
	}
	for i := range n {
		name := fmt.Sprintf("ex-%d", i)
		e2etest.Eventually(t, 20*time.Second, "created "+name, hasMessage(t, c, "ex", name, "create_fn", "hello world"))
		obj := get(t, c, "ex", name)
		if !slices.Contains(obj.GetFinalizers(), finalizer) {
			t.Errorf("%s has no finalizer %s: %v", name, finalizer, obj.GetFinalizers())
		}
	}
	afterCreate := op.kube.Stats()

	for i := range n {
		name := fmt.Sprintf("ex-%d", i)
		patch := []byte(`{"spec":{"field":"changed"}}`)
		if _, err := c.dyn.Resource(kopfexamples).Namespace("ex").Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		name := fmt.Sprintf("ex-%d", i)
		e2etest.Eventually(t, 20*time.Second, "updated "+name, hasMessage(t, c, "ex", name, "update_fn", "updated"))
	}
	afterUpdate := op.kube.Stats()

	for i := range n {
		if err := c.dyn.Resource(kopfexamples).Namespace("ex").Delete(context.Background(), fmt.Sprintf("ex-%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		name := fmt.Sprintf("ex-%d", i)
		e2etest.Eventually(t, 20*time.Second, "deleted "+name, func() error {
			if get(t, c, "ex", name) != nil {
				return fmt.Errorf("%s still exists", name)
			}
			return nil
		})
	}
	// Let any late cycle run, then count.
	time.Sleep(500 * time.Millisecond)
	end := op.kube.Stats()
	t.Logf("writes: create %d, update %d, delete %d", afterCreate.Writes, afterUpdate.Writes-afterCreate.Writes, end.Writes-afterUpdate.Writes)
	if w := afterCreate.Writes; w > 2*n {
		t.Errorf("creation cost %d writes for %d objects, want at most 2 per object", w, n)
	}
	if w := afterUpdate.Writes - afterCreate.Writes; w > n {
		t.Errorf("updating cost %d writes for %d objects, want at most 1 per object", w, n)
	}
	if w := end.Writes - afterUpdate.Writes; w > n {
		t.Errorf("deletion cost %d writes for %d objects, want at most 1 per object", w, n)
	}
}
