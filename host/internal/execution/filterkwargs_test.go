package execution_test

import (
	"encoding/json"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// A changing handler's callback filter gets the cause's reason and the
// whole object's old, new and diff (not narrowed to its field: Kopf's
// when= gets the cause's kwargs); other handlers' filters get neither old
// nor new.
func TestFilterRequestKwargs(t *testing.T) {
	sel := &abi.ResourceSelector{Name: "kopfexamples"}
	old := map[string]any{"spec": map[string]any{"field": "a", "other": 1}}
	new := map[string]any{"spec": map[string]any{"field": "b", "other": 1}}
	cause := &registry.Cause{Reason: abi.ReasonUpdate, Body: object().Object, Old: old, New: new, Diff: registryDiff(old, new)}
	tests := []struct {
		name               string
		spec               abi.HandlerSpec
		cause              *registry.Cause
		old, new, wantDiff string
	}{
		{name: "field handler: whole object", spec: abi.HandlerSpec{ID: "f/spec.field", Kind: abi.KindField, Resource: sel,
			Filters: abi.Filters{Field: "spec.field", When: true}}, cause: cause,
			old: `{"spec":{"field":"a","other":1}}`, new: `{"spec":{"field":"b","other":1}}`,
			wantDiff: `[{"op":"change","field":["spec","field"],"old":"a","new":"b"}]`},
		{name: "update handler", spec: abi.HandlerSpec{ID: "u", Kind: abi.KindUpdate, Resource: sel, Filters: abi.Filters{When: true}},
			cause: cause, old: `{"spec":{"field":"a","other":1}}`, new: `{"spec":{"field":"b","other":1}}`,
			wantDiff: `[{"op":"change","field":["spec","field"],"old":"a","new":"b"}]`},
		{name: "no essences (prematch)", spec: abi.HandlerSpec{ID: "c", Kind: abi.KindCreate, Resource: sel, Filters: abi.Filters{When: true}},
			cause: &registry.Cause{Reason: abi.ReasonCreate, Body: object().Object}},
		{name: "timer: none", spec: abi.HandlerSpec{ID: "t", Kind: abi.KindTimer, Resource: sel, Filters: abi.Filters{When: true}},
			cause: cause},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := registry.NewHandler("m", tt.spec, ref)
			if err != nil {
				t.Fatal(err)
			}
			req, err := execution.Request(h, execution.Input{Subject: execution.NewSubject(ref, true, object()), Cause: tt.cause, Filter: true})
			if err != nil {
				t.Fatal(err)
			}
			if req.Call != abi.CallWhen || req.Reason != tt.cause.Reason {
				t.Errorf("call %q reason %q", req.Call, req.Reason)
			}
			if string(req.Old) != tt.old || string(req.New) != tt.new {
				t.Errorf("old %s new %s, want %s and %s", req.Old, req.New, tt.old, tt.new)
			}
			if got := diffJSON(t, req.Diff); got != tt.wantDiff {
				t.Errorf("diff %s, want %s", got, tt.wantDiff)
			}
		})
	}
}

func registryDiff(old, new map[string]any) objects.Diff { return objects.Compare(old, new) }

func diffJSON(t *testing.T, d []abi.DiffItem) string {
	t.Helper()
	if d == nil {
		return ""
	}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
