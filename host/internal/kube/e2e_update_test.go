package kube

import (
	"encoding/json"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestE2EUpdate(t *testing.T) {
	c, dyn := newClient(t)
	ns := namespace(t, dyn, "kube-update")
	created := create(t, dyn, kexGVR, kex(ns, "u", nil))
	ref := resolve(t, c, "kopfexamples").ResourceRef
	ctx := t.Context()
	get := func() *unstructured.Unstructured {
		t.Helper()
		got, err := dyn.Resource(kexGVR).Namespace(ns).Get(ctx, "u", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// put sends obj as the watch cache keeps it: without managedFields.
	put := func(sub string, obj *unstructured.Unstructured) (*Patched, error) {
		t.Helper()
		obj = obj.DeepCopy()
		obj.SetManagedFields(nil)
		raw, err := json.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		return c.Update(ctx, ref, ns, "u", sub, raw)
	}
	before := c.Stats()

	// Main object: the status is ignored (subresource); the managed fields
	// the request leaves out are kept.
	obj := get()
	managers := len(obj.GetManagedFields())
	obj.SetAnnotations(map[string]string{"a": "1"})
	_ = unstructured.SetNestedField(obj.Object, true, "status", "ignored")
	out, err := put("", obj)
	if err != nil {
		t.Fatal(err)
	}
	got := get()
	if got.GetAnnotations()["a"] != "1" || out.ResourceVersion != got.GetResourceVersion() {
		t.Errorf("the update did not stick: annotations %v, resourceVersion %q returned, %q stored", got.GetAnnotations(), out.ResourceVersion, got.GetResourceVersion())
	}
	if _, found, _ := unstructured.NestedBool(got.Object, "status", "ignored"); found || out.StatusHas("ignored") {
		t.Errorf("status changed through the main endpoint")
	}
	if managers == 0 || len(got.GetManagedFields()) < managers {
		t.Errorf("managedFields went from %d to %d entries; an update without them must keep them", managers, len(got.GetManagedFields()))
	}

	// Status: only the status is taken from the body.
	obj = got.DeepCopy()
	_ = unstructured.SetNestedField(obj.Object, "hi", "status", "create_fn", "message")
	_ = unstructured.SetNestedField(obj.Object, "ignored", "spec", "field")
	out, err = put("status", obj)
	if err != nil {
		t.Fatal(err)
	}
	got = get()
	if msg, _, _ := unstructured.NestedString(got.Object, "status", "create_fn", "message"); msg != "hi" || !out.StatusHas("create_fn", "message") {
		t.Errorf("status.create_fn.message = %q, returned %s", msg, out.Status)
	}
	if field, _, _ := unstructured.NestedString(got.Object, "spec", "field"); field == "ignored" {
		t.Errorf("the spec changed through /status")
	}

	// Stale: an update of an older version is a conflict, on both endpoints.
	for _, sub := range []string{"", "status"} {
		_, err = put(sub, created)
		var apiErr *APIError
		if !errors.Is(err, ErrConflict) || !errors.As(err, &apiErr) || apiErr.Code != 409 || apiErr.Verb != "update" {
			t.Errorf("update %q of a stale version: %v; want an update's ErrConflict 409", sub, err)
		}
	}

	// Invalid content.
	obj = get()
	obj.SetLabels(map[string]string{"bad key!": "x"})
	if _, err = put("", obj); !errors.Is(err, ErrInvalid) {
		t.Errorf("update with an invalid label: %v; want ErrInvalid", err)
	}

	// Gone after deletion.
	obj = get()
	if err := dyn.Resource(kexGVR).Namespace(ns).Delete(ctx, "u", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err = put("", obj); !errors.Is(err, ErrGone) {
		t.Errorf("update of a deleted object: %v; want ErrGone", err)
	}

	// Every PUT that reached the server is counted as an update.
	after := c.Stats()
	if got := after.Updates - before.Updates; got != 6 || after.Writes-before.Writes != 6 {
		t.Errorf("counted %d updates and %d writes; want 6 and 6", got, after.Writes-before.Writes)
	}
}
