package kube

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// The API server stores Kopf's exception Events, of type "Error" (core/v1
// Events do not restrict the type), as Kopf posts them.
func TestE2EPostErrorEvent(t *testing.T) {
	c, dyn := newClient(t)
	ns := namespace(t, dyn, "kube-error-events")
	obj := create(t, dyn, kexGVR, kex(ns, "x", nil))
	ctx := t.Context()
	if err := c.PostEvent(ctx, RefOf(obj), abi.EventRequest{Type: abi.EventError, Reason: "ValueError", Message: "cannot: bad"}); err != nil {
		t.Fatal(err)
	}
	list, err := dyn.Resource(eventsGVR).Namespace(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Object["type"] != "Error" || list.Items[0].Object["reason"] != "ValueError" {
		t.Errorf("events about x: %v", list.Items)
	}
}
