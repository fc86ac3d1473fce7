package reactor_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

const finalizer = "kopf.zalando.org/KopfFinalizerMarker"

// TestCreateUpdateDelete runs Kopf's kopfexample module: every object is
// created, updated and deleted with its handlers' results on it, the
// finalizer held while a delete handler is pending, and few API writes:
// updates by default, merge patches when the settings ask for them or the
// credentials do not allow updates.
func TestCreateUpdateDelete(t *testing.T) {
	c := startCluster(t)
	tests := []struct {
		name     string
		writes   settings.WriteMode
		noUpdate bool // the operator may patch but not update
		// updates says whether the operator's writes are updates; the
		// others are merge patches.
		updates bool
	}{
		{name: "updates", writes: settings.WriteUpdate, updates: true},
		{name: "patches", writes: settings.WritePatch},
		{name: "updates refused", writes: settings.WriteUpdate, noUpdate: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := "ex-" + strings.ReplaceAll(tt.name, " ", "-")
			createNamespace(t, c, ns)
			set := settings.Default()
			set.Persistence.Writes = tt.writes
			kc := newKube(t, c)
			if tt.noUpdate {
				kc = patchOnlyKube(t, c, ns)
			}
			op := run(t, kc, newOperator(t, kc, ns, set, load(t, newRuntime(t), "kopfexample", "kopfexample")))
			if tt.noUpdate {
				// The first write is an update, refused; it goes out as a
				// patch, and so do all later writes.
				createExample(t, c, ns, "first", map[string]any{"field": "value"})
				e2etest.Eventually(t, 20*time.Second, "created first", hasMessage(t, c, ns, "first", "create_fn", "hello world"))
				if st := op.kube.Stats(); st.Updates != 1 {
					t.Errorf("%d updates sent before the first object was handled, want the 1 refused", st.Updates)
				}
			}
			before := op.kube.Stats()
			writes := createUpdateDelete(t, c, op, ns, 5)
			st := op.kube.Stats()
			updates, patches := st.Updates-before.Updates, st.Patches-before.Patches
			if want := map[bool]int64{true: st.Writes - before.Writes}[tt.updates]; updates != want || patches+updates != st.Writes-before.Writes {
				t.Errorf("%d writes: %d updates and %d patches; want %d updates, the rest patches", st.Writes-before.Writes, updates, patches, want)
			}
			t.Logf("writes: create %d, update %d, delete %d (%d updates, %d patches)", writes[0], writes[1], writes[2], updates, patches)
		})
	}
}

// createUpdateDelete creates n examples in ns, then changes their spec,
// then deletes them, checking after each phase that the operator handled
// every object and wrote at most once per object and change (twice on
// creation: the finalizer, then the result). It returns the writes of
// each phase.
func createUpdateDelete(t *testing.T, c *cluster, op *operator, ns string, n int) [3]int64 {
	t.Helper()
	var writes [3]int64
	last := op.kube.Stats().Writes
	phase := func(i int, name string, limit int) {
		t.Helper()
		// Let any late cycle run, then count.
		time.Sleep(300 * time.Millisecond)
		now := op.kube.Stats().Writes
		writes[i], last = now-last, now
		if writes[i] > int64(limit*n) {
			t.Errorf("%s cost %d writes for %d objects, want at most %d per object", name, writes[i], n, limit)
		}
	}
	for i := range n {
		createExample(t, c, ns, fmt.Sprintf("ex-%d", i), map[string]any{"field": "value"})
	}
	for i := range n {
		name := fmt.Sprintf("ex-%d", i)
		e2etest.Eventually(t, 20*time.Second, "created "+name, hasMessage(t, c, ns, name, "create_fn", "hello world"))
		obj := get(t, c, ns, name)
		if !slices.Contains(obj.GetFinalizers(), finalizer) {
			t.Errorf("%s has no finalizer %s: %v", name, finalizer, obj.GetFinalizers())
		}
	}
	phase(0, "creation", 2)

	for i := range n {
		patchSpec(t, c, ns, fmt.Sprintf("ex-%d", i), `{"spec":{"field":"changed"}}`)
	}
	for i := range n {
		name := fmt.Sprintf("ex-%d", i)
		e2etest.Eventually(t, 20*time.Second, "updated "+name, hasMessage(t, c, ns, name, "update_fn", "updated"))
	}
	phase(1, "updating", 1)

	for i := range n {
		if err := c.dyn.Resource(kopfexamples).Namespace(ns).Delete(context.Background(), fmt.Sprintf("ex-%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		name := fmt.Sprintf("ex-%d", i)
		e2etest.Eventually(t, 20*time.Second, "deleted "+name, func() error {
			if get(t, c, ns, name) != nil {
				return fmt.Errorf("%s still exists", name)
			}
			return nil
		})
	}
	phase(2, "deletion", 1)
	return writes
}
