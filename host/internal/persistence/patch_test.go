package persistence

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

func TestPatchResultsAndHandlerPatches(t *testing.T) {
	type result struct{ id, raw string }
	tests := []struct {
		name      string
		subres    bool
		results   []result
		patches   []abi.Patch
		want      string
		wantError string
	}{
		{
			name: "map results merge, status to /status", subres: true,
			results: []result{{"create_fn", `{"message":"hello"}`}, {"create_fn", `{"other":1}`}},
			want:    `status merge {"status":{"create_fn":{"message":"hello","other":1}}}`,
		},
		{
			name: "without the subresource everything goes to main", subres: false,
			results: []result{{"create_fn", `{"message":"hello"}`}},
			patches: []abi.Patch{{Merge: json.RawMessage(`{"metadata":{"labels":{"x":"y"}}}`)}},
			want:    `main merge {"metadata":{"labels":{"x":"y"}},"status":{"create_fn":{"message":"hello"}}}`,
		},
		{
			name: "scalar and list results replace; null writes nothing", subres: true,
			results: []result{{"a", `{"m":1}`}, {"a", `"text"`}, {"b", `[1,2]`}, {"c", `null`}, {"d", ``}},
			want:    `status merge {"status":{"a":"text","b":[1,2]}}`,
		},
		{
			name: "handler patch split by endpoint", subres: true,
			patches: []abi.Patch{{
				Merge: json.RawMessage(`{"spec":{"x":1},"status":{"phase":"Done"}}`),
				JSON: []abi.JSONPatchOp{
					{Op: "add", Path: "/metadata/labels/a", Value: json.RawMessage(`"b"`)},
					{Op: "remove", Path: "/status/old"},
				},
			}},
			want: `main merge {"spec":{"x":1}}` + "\n" +
				`status merge {"status":{"phase":"Done"}}` + "\n" +
				`main json [{"op":"add","path":"/metadata/labels/a","value":"b"}]` + "\n" +
				`status json [{"op":"remove","path":"/status/old"}]`,
		},
		{
			name: "later handler patches win", subres: false,
			patches: []abi.Patch{{Merge: json.RawMessage(`{"spec":{"x":1,"y":1}}`)}, {Merge: json.RawMessage(`{"spec":{"x":null}}`)}},
			want:    `main merge {"spec":{"x":null,"y":1}}`,
		},
		{name: "bad result", results: []result{{"a", `{`}}, wantError: "handler[a] returned an invalid result"},
		{name: "merge patch not an object", patches: []abi.Patch{{Merge: json.RawMessage(`[1]`)}}, wantError: "invalid merge patch"},
		{name: "unknown op", patches: []abi.Patch{{JSON: []abi.JSONPatchOp{{Op: "frob", Path: "/x"}}}}, wantError: "unknown op"},
		{name: "add without value", patches: []abi.Patch{{JSON: []abi.JSONPatchOp{{Op: "add", Path: "/x"}}}}, wantError: "no value"},
		{name: "path not a pointer", patches: []abi.Patch{{JSON: []abi.JSONPatchOp{{Op: "remove", Path: "x"}}}}, wantError: "not a JSON pointer"},
		{name: "nothing", subres: true, want: ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPatch(tt.subres)
			var err error
			for _, r := range tt.results {
				if e := p.AddResult(r.id, json.RawMessage(r.raw)); e != nil {
					err = e
				}
			}
			for i := range tt.patches {
				if e := p.MergeHandlerPatch("a", &tt.patches[i]); e != nil {
					err = e
				}
			}
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Errorf("err = %v, want %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := requests(t, p); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if p.Empty() != (tt.want == "") {
				t.Errorf("Empty = %v", p.Empty())
			}
		})
	}
	if err := NewPatch(true).MergeHandlerPatch("a", nil); err != nil {
		t.Errorf("nil patch: %v", err)
	}
}

func TestPatchMinimize(t *testing.T) {
	b := body(t, `{"metadata":{"resourceVersion":"7","annotations":{"kopf.zalando.org/last-handled-configuration":"x"}},"status":{"update_fn":{"message":"same"}}}`)
	p := NewPatch(true)
	p.Set(objects.Path{"metadata", "annotations", "kopf.zalando.org/last-handled-configuration"}, "x")
	p.Set(objects.Path{"metadata", "annotations", "kopf.zalando.org/gone"}, nil)
	if err := p.AddResult("update_fn", json.RawMessage(`{"message":"same"}`)); err != nil {
		t.Fatal(err)
	}
	if p.Empty() {
		t.Fatalf("empty before minimizing")
	}
	p.Minimize(b)
	if !p.Empty() {
		t.Errorf("not empty after minimizing: %s", requests(t, p))
	}
}

func TestFinalizers(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		add    bool
		remove bool
		has    bool
		want   string
	}{
		{
			name: "add to none", body: `{"metadata":{"resourceVersion":"5"}}`, add: true,
			want: `main merge {"metadata":{"finalizers":["kopf.zalando.org/KopfFinalizerMarker"],"resourceVersion":"5"}}`,
		},
		{
			name: "add keeps others", body: `{"metadata":{"resourceVersion":"5","finalizers":["other/one"]}}`, add: true,
			want: `main merge {"metadata":{"finalizers":["other/one","kopf.zalando.org/KopfFinalizerMarker"],"resourceVersion":"5"}}`,
		},
		{
			name: "add when present does nothing", body: `{"metadata":{"finalizers":["kopf.zalando.org/KopfFinalizerMarker"]}}`, add: true, has: true,
		},
		{
			name: "remove keeps others", body: `{"metadata":{"resourceVersion":"9","finalizers":["a/x","kopf.zalando.org/KopfFinalizerMarker","b/y"]}}`, remove: true, has: true,
			want: `main merge {"metadata":{"finalizers":["a/x","b/y"],"resourceVersion":"9"}}`,
		},
		{
			name: "remove the last one", body: `{"metadata":{"resourceVersion":"9","finalizers":["kopf.zalando.org/KopfFinalizerMarker"]}}`, remove: true, has: true,
			want: `main merge {"metadata":{"finalizers":null,"resourceVersion":"9"}}`,
		},
		{name: "remove when absent does nothing", body: `{"metadata":{"finalizers":["a/x"]}}`, remove: true},
	}
	s := kopfStorage(t, "kopf.zalando.org")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := body(t, tt.body)
			if got := s.HasFinalizer(b); got != tt.has {
				t.Errorf("HasFinalizer = %v", got)
			}
			p := NewPatch(true)
			if tt.add {
				s.AddFinalizer(p, b)
			}
			if tt.remove {
				s.RemoveFinalizer(p, b)
			}
			if got := requests(t, p); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	if !DeletionOngoing(body(t, `{"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z"}}`)) || DeletionOngoing(body(t, `{"metadata":{}}`)) {
		t.Errorf("DeletionOngoing is wrong")
	}
}
