package main

import (
	"encoding/json"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/guest-sdk/kopftest"
)

func kex(name, owner string, labels map[string]any) map[string]any {
	meta := map[string]any{"name": name, "namespace": "default"}
	if labels != nil {
		meta["labels"] = labels
	}
	spec := map[string]any{}
	if owner != "" {
		spec["owner"] = owner
	}
	return map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": meta, "spec": spec}
}

// The index as the host fills it (kopftest runs the index handler on each
// object by Kopf's rules), then the report of one object: the others of
// its owner by key, the owners from the whole index, and the memo the
// startup and index handlers left. A labelled object and one without an
// owner (a permanent error) are left out; a changed owner moves an object.
func TestReport(t *testing.T) {
	for _, large := range []bool{false, true} {
		h := kopftest.New(t)
		h.LargeIndexes = large
		h.Run("startup", nil, nil)
		h.IndexObjects("by_owner", kex("a1", "alice", nil), kex("a2", "alice", nil), kex("b1", "bob", nil),
			kex("hidden", "alice", map[string]any{"skip-index": "yes"}), kex("nobody", "", nil))
		h.IndexObjects("by_owner", kex("b1", "alice", nil)) // b1 changes owner
		res := h.Run("report", kex("a1", "alice", nil), nil)
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		report, _ := json.Marshal(res.Merge())
		want := `{"status":{"report":{"memo":{"indexed":1,"region":"eu-west"},"others":["a2","b1"],"owner":"alice","owners":1,"reason":"create"}}}`
		if string(report) != want {
			t.Errorf("large=%v: report = %s\nwant %s", large, report, want)
		}
	}
}
