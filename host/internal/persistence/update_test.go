package persistence

import (
	"encoding/json"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// TestRequestUpdated checks that every merge request renders the object
// it was made for with exactly its changes applied, and that JSON patches
// cannot go out as updates.
func TestRequestUpdated(t *testing.T) {
	const obj = `{"apiVersion":"kopf.dev/v1","kind":"KopfExample",` +
		`"metadata":{"finalizers":["other/f"],"labels":{"keep":"1","drop":"2"},"name":"x","resourceVersion":"7"},` +
		`"spec":{"field":"v","n":9007199254740993},"status":{"old":{"a":1}}}`
	s := kopfStorage(t, "kopf.zalando.org")
	tests := []struct {
		name   string
		subres bool
		build  func(p *Patch, b map[string]any)
		want   []string // per request: the updated object, or "" when it cannot be an update
		locked []bool
	}{
		{
			name: "finalizer: main, locked", subres: true,
			build: func(p *Patch, b map[string]any) { s.AddFinalizer(p, b) },
			want: []string{`{"apiVersion":"kopf.dev/v1","kind":"KopfExample",` +
				`"metadata":{"finalizers":["other/f","kopf.zalando.org/KopfFinalizerMarker"],"labels":{"drop":"2","keep":"1"},"name":"x","resourceVersion":"7"},` +
				`"spec":{"field":"v","n":9007199254740993},"status":{"old":{"a":1}}}`},
			locked: []bool{true},
		},
		{
			name: "results to /status merge into the status", subres: true,
			build: func(p *Patch, b map[string]any) {
				_ = p.AddResult("create_fn", json.RawMessage(`{"message":"hi"}`))
				p.Set(objects.Path{"status", "old", "a"}, nil)
			},
			want: []string{`{"apiVersion":"kopf.dev/v1","kind":"KopfExample",` +
				`"metadata":{"finalizers":["other/f"],"labels":{"drop":"2","keep":"1"},"name":"x","resourceVersion":"7"},` +
				`"spec":{"field":"v","n":9007199254740993},"status":{"create_fn":{"message":"hi"},"old":{}}}`},
			locked: []bool{false},
		},
		{
			name: "main and status, then a JSON patch", subres: true,
			build: func(p *Patch, b map[string]any) {
				_ = p.MergeHandlerPatch("h", &abi.Patch{
					Merge: json.RawMessage(`{"metadata":{"labels":{"drop":null,"new":"3"}},"status":{"phase":"Done"}}`),
					JSON:  []abi.JSONPatchOp{{Op: "remove", Path: "/spec/field"}},
				})
			},
			want: []string{
				`{"apiVersion":"kopf.dev/v1","kind":"KopfExample",` +
					`"metadata":{"finalizers":["other/f"],"labels":{"keep":"1","new":"3"},"name":"x","resourceVersion":"7"},` +
					`"spec":{"field":"v","n":9007199254740993},"status":{"old":{"a":1}}}`,
				`{"apiVersion":"kopf.dev/v1","kind":"KopfExample",` +
					`"metadata":{"finalizers":["other/f"],"labels":{"drop":"2","keep":"1"},"name":"x","resourceVersion":"7"},` +
					`"spec":{"field":"v","n":9007199254740993},"status":{"old":{"a":1},"phase":"Done"}}`,
				"",
			},
			locked: []bool{false, false, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := body(t, obj)
			before, _ := objects.Encode(b)
			p := NewPatch(tt.subres)
			tt.build(p, b)
			reqs, err := p.Requests()
			if err != nil {
				t.Fatal(err)
			}
			if len(reqs) != len(tt.want) {
				t.Fatalf("%d requests, want %d", len(reqs), len(tt.want))
			}
			for i, r := range reqs {
				got, ok, err := r.Updated(b)
				if err != nil {
					t.Fatal(err)
				}
				if ok != (tt.want[i] != "") || string(got) != tt.want[i] {
					t.Errorf("request %d (%s %s): updated %v\n got  %s\n want %s", i, r.Subresource, r.Type, ok, got, tt.want[i])
				}
				if r.Locked != tt.locked[i] {
					t.Errorf("request %d: Locked = %v", i, r.Locked)
				}
			}
			if after, _ := objects.Encode(b); string(after) != string(before) {
				t.Errorf("Updated changed the object:\n%s\n%s", before, after)
			}
		})
	}
}
