package kopftest_test

import (
	"encoding/json"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/guest-sdk/kopftest"
)

func inNamespace(ns, name string) map[string]any {
	obj := example(1)
	meta := obj["metadata"].(map[string]any)
	meta["namespace"], meta["name"] = ns, name
	return obj
}

// An index filled by running its handler on objects, as the host does: a
// changed object's value replaces its old one, a forgotten object's goes,
// and handlers read it from the request and by look-up; with LargeIndexes
// the request carries null and ctx.Index reads the whole index from the
// host instead, with the same answer.
func TestIndexObjects(t *testing.T) {
	for _, large := range []bool{false, true} {
		h := kopftest.New(t)
		h.LargeIndexes = large
		h.IndexObjects("byNamespace", inNamespace("default", "a"), inNamespace("default", "b"), inNamespace("other", "c"))
		h.IndexObjects("byNamespace", inNamespace("other", "b")) // b moved: keyed by namespace+name, a new object
		h.ForgetObject("default", "b")
		res := h.Run("siblings", inNamespace("default", "a"), example(2))
		want := `{"index":{"default":["a"],"other":["b","c"]},"lookup":["a"]}`
		if got := asJSON(t, res.Value); got != want {
			t.Errorf("large=%v: siblings = %s (%v), want %s", large, got, res.Err, want)
		}
		req := h.Request("siblings", inNamespace("default", "a"), nil)
		if got := string(req.Indices["byNamespace"]); large != (got == "null") {
			t.Errorf("large=%v: the request carries %s", large, got)
		}
	}
}

// The operator memo that a startup handler leaves is what objects start
// with, and each object's memo is its own afterwards.
func TestOperatorMemo(t *testing.T) {
	h := kopftest.New(t)
	h.SetMemo("", "", map[string]any{"region": "eu"})
	req := h.Request("byNamespace", inNamespace("default", "a"), nil)
	var memo map[string]any
	if err := json.Unmarshal(req.Memo, &memo); err != nil || memo["region"] != "eu" {
		t.Errorf("an object starts with memo %s, want the operator memo", req.Memo)
	}
	if req := h.Request("startup", nil, nil); string(req.Memo) != `{"region":"eu"}` {
		t.Errorf("the startup handler gets memo %s", req.Memo)
	}
}

// Kopf's tuple keys are JSON arrays: an index handler keys its result by
// kopf.IndexKey(parts...), and a look-up by the tuple ([]any) or by
// IndexKey finds it, from objects and from values seeded with SetIndex.
func TestIndexTupleKeys(t *testing.T) {
	placed := func(ns, name, place string) map[string]any {
		obj := inNamespace(ns, name)
		obj["spec"] = map[string]any{"place": place}
		obj["metadata"].(map[string]any)["labels"] = map[string]any{"neighbours": "yes"}
		return obj
	}
	for _, large := range []bool{false, true} {
		h := kopftest.New(t)
		h.LargeIndexes = large
		h.IndexObjects("byPlace", placed("default", "a", "north"), placed("default", "b", "south"), placed("other", "c", "north"))
		h.SetIndex("byPlace", []any{"default", "north"}, "seeded")
		res := h.Run("neighbours", placed("default", "a", "north"), nil)
		want := `{"lookup":["seeded","a"],"whole":["seeded","a"]}`
		if got := asJSON(t, res.Value); got != want {
			t.Errorf("large=%v: neighbours = %s (%v), want %s", large, got, res.Err, want)
		}
	}
}
