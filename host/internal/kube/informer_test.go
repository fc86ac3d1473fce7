package kube

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

func TestEventHandler(t *testing.T) {
	obj := func(rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetName("x")
		u.SetResourceVersion(rv)
		return u
	}
	var got []Event
	h := eventHandler(func(ev Event) { got = append(got, ev) })
	h.OnAdd(obj("1"), true)
	h.OnAdd(obj("2"), false)
	h.OnUpdate(obj("2"), obj("2")) // a relist: nothing new
	h.OnUpdate(obj("2"), obj("3"))
	h.OnDelete(obj("3"))
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "x", Obj: obj("4")})
	h.OnAdd("not an object", false)
	want := []struct {
		typ     EventType
		rv      string
		initial bool
	}{{Added, "1", true}, {Added, "2", false}, {Modified, "3", false}, {Deleted, "3", false}, {Deleted, "4", false}}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].Type != w.typ || got[i].Object.GetResourceVersion() != w.rv || got[i].Initial != w.initial {
			t.Errorf("event %d = %s rv %s initial %v; want %s %s %v", i, got[i].Type,
				got[i].Object.GetResourceVersion(), got[i].Initial, w.typ, w.rv, w.initial)
		}
	}
}
