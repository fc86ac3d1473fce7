package kube

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func resolve(t *testing.T, c *Client, name string) Resource {
	t.Helper()
	res, err := c.Resolve(t.Context(), abi.ResourceSelector{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestE2EWatch(t *testing.T) {
	c, dyn := newClient(t)
	ns := namespace(t, dyn, "kube-watch")
	create(t, dyn, kexGVR, kex(ns, "before-1", map[string]string{"app": "a"}))
	create(t, dyn, kexGVR, kex(ns, "before-2", map[string]string{"app": "b"}))
	res := resolve(t, c, "kopfexamples")
	scope, _ := ParseNamespaces(ns)

	rec := newRecorder()
	w, err := c.Watch(t.Context(), res, scope, rec.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for _, name := range []string{"before-1", "before-2"} {
		if ev := rec.next(t, name); ev.Type != Added || !ev.Initial {
			t.Errorf("%s: %s initial=%v; want ADDED from the initial listing", name, ev.Type, ev.Initial)
		}
	}
	if err := w.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := w.Namespaces(); !slices.Equal(got, []string{ns}) {
		t.Errorf("Namespaces() = %q", got)
	}

	create(t, dyn, kexGVR, kex(ns, "after", nil))
	if ev := rec.next(t, "after"); ev.Type != Added || ev.Initial {
		t.Errorf("after: %s initial=%v; want ADDED, not initial", ev.Type, ev.Initial)
	}
	_, err = dyn.Resource(kexGVR).Namespace(ns).Patch(t.Context(), "after", types.MergePatchType,
		[]byte(`{"spec":{"field":"changed"}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev := rec.next(t, "after")
	if field, _, _ := unstructuredString(ev.Object, "spec", "field"); ev.Type != Modified || field != "changed" {
		t.Errorf("after the patch: %s spec.field=%q; want MODIFIED changed", ev.Type, field)
	}
	if len(ev.Object.GetManagedFields()) != 0 {
		t.Errorf("managedFields were not dropped")
	}

	// The cache serves reads.
	if obj, ok := w.Get(ns, "after"); !ok || obj.GetResourceVersion() != ev.Object.GetResourceVersion() {
		t.Errorf("Get(after) = %v, %v", obj, ok)
	}
	if _, ok := w.Get(ns, "nothing"); ok {
		t.Errorf("Get(nothing) found something")
	}
	if _, ok := w.Get("default", "after"); ok {
		t.Errorf("Get in an unwatched namespace found something")
	}
	list, ok := w.List(ns, labels.SelectorFromSet(labels.Set{"app": "b"}))
	if !ok || len(list) != 1 || list[0].GetName() != "before-2" {
		t.Errorf("List(app=b) = %d objects, %v", len(list), ok)
	}
	if all, _ := w.List(ns, nil); len(all) != 3 {
		t.Errorf("List(everything) = %d objects, want 3", len(all))
	}
	if _, ok := w.List("", nil); ok {
		t.Errorf("List of all namespaces claims to be covered by a one-namespace watch")
	}

	if err := dyn.Resource(kexGVR).Namespace(ns).Delete(t.Context(), "after", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if ev := rec.next(t, "after"); ev.Type != Deleted {
		t.Errorf("after the delete: %s; want DELETED", ev.Type)
	}
	eventually(t, "the cache to forget the deleted object", func() bool { _, ok := w.Get(ns, "after"); return !ok })

	w.Stop()
	create(t, dyn, kexGVR, kex(ns, "unseen", nil))
	rec.quiet(t, 300*time.Millisecond)
	if w.HasSynced() {
		t.Errorf("a stopped watch says it is synced")
	}
}

func TestE2EWatchClusterWide(t *testing.T) {
	c, dyn := newClient(t)
	ns1, ns2 := namespace(t, dyn, "kube-wide-1"), namespace(t, dyn, "kube-wide-2")
	create(t, dyn, kexGVR, kex(ns1, "one", nil))
	rec := newRecorder()
	w, err := c.Watch(t.Context(), resolve(t, c, "kopfexamples"), AllNamespaces(), rec.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := rec.next(t, "one"); !ev.Initial {
		t.Errorf("one: not from the initial listing")
	}
	create(t, dyn, kexGVR, kex(ns2, "two", nil))
	if ev := rec.next(t, "two"); ev.Initial || ev.Object.GetNamespace() != ns2 {
		t.Errorf("two: initial=%v namespace %s", ev.Initial, ev.Object.GetNamespace())
	}
	if got := w.Namespaces(); !slices.Equal(got, []string{""}) {
		t.Errorf("Namespaces() = %q; want one cluster-wide scope", got)
	}
	if _, ok := w.Get(ns2, "two"); !ok {
		t.Errorf("the cluster-wide cache misses %s/two", ns2)
	}
}

func TestE2EWatchFollowsNamespaces(t *testing.T) {
	c, dyn := newClient(t)
	namespace(t, dyn, "follow-early")
	create(t, dyn, kexGVR, kex("follow-early", "early", nil))
	scope, err := ParseNamespaces("follow-*,!follow-skip-*")
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	w, err := c.Watch(t.Context(), resolve(t, c, "kopfexamples"), scope, rec.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := w.WaitForSync(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ev := rec.next(t, "early"); !ev.Initial {
		t.Errorf("early: not from the initial listing")
	}
	if got := w.Namespaces(); !slices.Equal(got, []string{"follow-early"}) {
		t.Fatalf("Namespaces() = %q", got)
	}

	namespace(t, dyn, "follow-late")
	namespace(t, dyn, "follow-skip-me")
	namespace(t, dyn, "other")
	eventually(t, "follow-late to be watched", func() bool { return slices.Contains(w.Namespaces(), "follow-late") })
	create(t, dyn, kexGVR, kex("follow-late", "late", nil))
	create(t, dyn, kexGVR, kex("follow-skip-me", "skipped", nil))
	create(t, dyn, kexGVR, kex("other", "other", nil))
	if ev := rec.next(t, "late"); ev.Type != Added || ev.Object.GetNamespace() != "follow-late" {
		t.Errorf("late: %s in %s", ev.Type, ev.Object.GetNamespace())
	}
	rec.quiet(t, 300*time.Millisecond)
	if got := w.Namespaces(); !slices.Equal(got, []string{"follow-early", "follow-late"}) {
		t.Errorf("Namespaces() = %q", got)
	}

	dropNamespace(t, dyn, "follow-late")
	eventually(t, "follow-late to be dropped", func() bool { return !slices.Contains(w.Namespaces(), "follow-late") })
	if _, ok := w.Get("follow-late", "late"); ok {
		t.Errorf("the cache still serves a namespace that is gone")
	}
}
