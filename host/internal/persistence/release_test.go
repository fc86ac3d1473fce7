package persistence

import (
	"encoding/json"
	"fmt"
	"testing"
)

// A patch that releases an object marked for deletion sends everything
// else first (the delete handlers' results reach status before the
// object goes) and relocks its main merge patch to the resourceVersion of
// the request before it.
func TestReleaseGoesLast(t *testing.T) {
	s, err := New(Options{Prefix: "kopf.zalando.org", Finalizer: "kopf.zalando.org/KopfFinalizerMarker"})
	if err != nil {
		t.Fatal(err)
	}
	body := func(deleting bool) map[string]any {
		meta := map[string]any{"name": "x", "resourceVersion": "7", "finalizers": []any{"kopf.zalando.org/KopfFinalizerMarker"}}
		if deleting {
			meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
		}
		return map[string]any{"metadata": meta}
	}
	tests := []struct {
		name              string
		deleting, status  bool
		subresource, want string
	}{
		{"deletion with a result: status, then the release", true, true, "status", `[status {"status":{"delete_fn":{"m":1}}} false] [ {"metadata":{"finalizers":null,"resourceVersion":"7"}} true]`},
		{"deletion without a result: the release alone", true, false, "status", `[ {"metadata":{"finalizers":null,"resourceVersion":"7"}} false]`},
		{"no status subresource: one request", true, true, "", `[ {"metadata":{"finalizers":null,"resourceVersion":"7"},"status":{"delete_fn":{"m":1}}} false]`},
		{"not deleting (filters no longer match): Kopf's order", false, true, "status", `[ {"metadata":{"finalizers":null,"resourceVersion":"7"}} false] [status {"status":{"delete_fn":{"m":1}}} false]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPatch(tt.subresource == "status")
			b := body(tt.deleting)
			if tt.status {
				if err := p.AddResult("delete_fn", json.RawMessage(`{"m":1}`)); err != nil {
					t.Fatal(err)
				}
			}
			s.RemoveFinalizer(p, b)
			reqs, err := p.Requests()
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for i, r := range reqs {
				if i > 0 {
					got += " "
				}
				got += fmt.Sprintf("[%s %s %v]", r.Subresource, r.Data, r.Relock)
			}
			if got != tt.want {
				t.Errorf("requests:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
	relocked, err := Request{Data: []byte(`{"metadata":{"finalizers":null,"resourceVersion":"7"}}`), Relock: true}.Relocked("8")
	if err != nil || string(relocked.Data) != `{"metadata":{"finalizers":null,"resourceVersion":"8"}}` || relocked.Relock {
		t.Errorf("relocked = %s %v (%v)", relocked.Data, relocked.Relock, err)
	}
}

// Results alone in the /status patch of a release are dropped on request;
// with anything else there, or without the status subresource, they stay.
func TestDropLoneResults(t *testing.T) {
	tests := []struct {
		name        string
		subresource bool
		other       bool
		dropped     bool
	}{
		{"alone", true, false, true},
		{"with another result", true, true, false},
		{"no status subresource", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPatch(tt.subresource)
			if err := p.AddResult("delete_fn", json.RawMessage(`{"m":1}`)); err != nil {
				t.Fatal(err)
			}
			if tt.other {
				if err := p.AddResult("event_fn", json.RawMessage(`1`)); err != nil {
					t.Fatal(err)
				}
			}
			if got := p.DropLoneResults([]string{"delete_fn"}); got != tt.dropped {
				t.Fatalf("dropped = %v, want %v", got, tt.dropped)
			}
			if p.Empty() != tt.dropped {
				t.Errorf("empty = %v after the drop", p.Empty())
			}
		})
	}
}
