package kube

import (
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func TestE2EPatch(t *testing.T) {
	c, dyn := newClient(t)
	ns := namespace(t, dyn, "kube-patch")
	obj := create(t, dyn, kexGVR, kex(ns, "p", nil))
	ref := resolve(t, c, "kopfexamples").ResourceRef
	ctx := t.Context()
	get := func() *unstructured.Unstructured {
		t.Helper()
		got, err := dyn.Resource(kexGVR).Namespace(ns).Get(ctx, "p", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	before := c.Stats()

	// Main object: the status in a main patch is ignored (subresource).
	out, err := c.Patch(ctx, ref, ns, "p", "", abi.PatchMerge,
		[]byte(`{"metadata":{"annotations":{"a":"1"}},"status":{"ignored":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	got := get()
	if got.GetAnnotations()["a"] != "1" {
		t.Errorf("the patch did not stick: %v", got.GetAnnotations())
	}
	if out.ResourceVersion != got.GetResourceVersion() || out.ResourceVersion == obj.GetResourceVersion() {
		t.Errorf("the patch returned resourceVersion %q, the object has %q (was %q)", out.ResourceVersion, got.GetResourceVersion(), obj.GetResourceVersion())
	}
	if _, found, _ := unstructured.NestedBool(got.Object, "status", "ignored"); found || out.StatusHas("ignored") {
		t.Errorf("status changed through the main endpoint")
	}

	// Status.
	out, err = c.Patch(ctx, ref, ns, "p", "status", abi.PatchMerge, []byte(`{"status":{"create_fn":{"message":"hi"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if msg, _, _ := unstructured.NestedString(get().Object, "status", "create_fn", "message"); msg != "hi" {
		t.Errorf("status.create_fn.message = %q", msg)
	}
	if !out.StatusHas("create_fn", "message") || out.StatusHas("create_fn", "nothing") || out.StatusHas("kopf") {
		t.Errorf("the patched status as returned: %s", out.Status)
	}

	// A JSON patch guarded by the current resourceVersion passes.
	guarded := func(rv string) []byte {
		return fmt.Appendf(nil, `[{"op":"test","path":"/metadata/resourceVersion","value":%q},
			{"op":"add","path":"/metadata/finalizers","value":["kopf.zalando.org/KopfFinalizerMarker"]}]`, rv)
	}
	out, err = c.Patch(ctx, ref, ns, "p", "", abi.PatchJSON, guarded(out.ResourceVersion))
	if err != nil {
		t.Fatal(err)
	}
	if got := get(); len(got.GetFinalizers()) != 1 || got.GetResourceVersion() != out.ResourceVersion {
		t.Errorf("finalizers = %v", got.GetFinalizers())
	}

	// Stale: a failed test operation, and a merge patch with an old
	// resourceVersion, are conflicts.
	_, err = c.Patch(ctx, ref, ns, "p", "", abi.PatchJSON, guarded(obj.GetResourceVersion()))
	if !errors.Is(err, ErrConflict) {
		t.Errorf("JSON patch with a stale test: %v; want ErrConflict", err)
	}
	stale := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"labels":{"x":"y"}}}`, obj.GetResourceVersion())
	_, err = c.Patch(ctx, ref, ns, "p", "", abi.PatchMerge, stale)
	var apiErr *APIError
	if !errors.Is(err, ErrConflict) || !errors.As(err, &apiErr) || apiErr.Code != 409 {
		t.Errorf("merge patch with a stale resourceVersion: %v; want ErrConflict 409", err)
	}

	// Invalid content.
	_, err = c.Patch(ctx, ref, ns, "p", "", abi.PatchMerge, []byte(`{"metadata":{"labels":{"bad key!":"x"}}}`))
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("patch with an invalid label: %v; want ErrInvalid", err)
	}

	// Gone after deletion (the finalizer goes first).
	if _, err := c.Patch(ctx, ref, ns, "p", "", abi.PatchMerge, []byte(`{"metadata":{"finalizers":null}}`)); err != nil {
		t.Fatal(err)
	}
	if err := dyn.Resource(kexGVR).Namespace(ns).Delete(ctx, "p", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"", "status"} {
		_, err = c.Patch(ctx, ref, ns, "p", sub, abi.PatchMerge, []byte(`{"metadata":{"annotations":{"a":"2"}}}`))
		if !errors.Is(err, ErrGone) {
			t.Errorf("patch %q of a deleted object: %v; want ErrGone", sub, err)
		}
	}

	// Every PATCH that reached the server is counted, and nothing else.
	after := c.Stats()
	if got := after.Patches - before.Patches; got != 9 || after.Writes-before.Writes != 9 {
		t.Errorf("counted %d patches and %d writes; want 9 and 9", got, after.Writes-before.Writes)
	}
}

func TestE2EPostEvent(t *testing.T) {
	c, dyn := newClient(t)
	ns := namespace(t, dyn, "kube-events")
	obj := create(t, dyn, kexGVR, kex(ns, "e", nil))
	ctx := t.Context()
	if err := c.PostEvent(ctx, RefOf(obj), abi.EventRequest{Type: "Warning", Reason: "Failed", Message: "it broke"}); err != nil {
		t.Fatal(err)
	}
	nsObj, err := dyn.Resource(namespacesGVR).Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PostEvent(ctx, RefOf(nsObj), abi.EventRequest{Reason: "Seen"}); err != nil {
		t.Fatal(err)
	}
	if err := c.PostEvent(ctx, ObjectRef{APIVersion: "v1", Kind: "Event", Name: "x"}, abi.EventRequest{Reason: "Loop"}); err != nil {
		t.Fatal(err)
	}
	if st := c.Stats(); st.Events != 2 || st.Creates != 2 {
		t.Errorf("stats = %+v; want 2 events (events about events are dropped)", st)
	}

	list, err := dyn.Resource(eventsGVR).Namespace(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=e"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d events about e, want 1", len(list.Items))
	}
	ev := list.Items[0].Object
	inv := ev["involvedObject"].(map[string]any)
	if ev["type"] != "Warning" || ev["reason"] != "Failed" || ev["message"] != "it broke" ||
		inv["uid"] != string(obj.GetUID()) || inv["kind"] != "KopfExample" {
		t.Errorf("event = %v", ev)
	}
	// The event about the cluster-scoped namespace went to "default".
	list, err = dyn.Resource(eventsGVR).Namespace("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + ns})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("events about namespace %s in default: %v, %v", ns, list, err)
	}

	// A failure is returned (and logged), not fatal.
	err = c.PostEvent(ctx, ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: "no-such-namespace", Name: "x"}, abi.EventRequest{Reason: "R"})
	if !errors.Is(err, ErrGone) {
		t.Errorf("an event in a missing namespace: %v; want ErrGone", err)
	}
}
