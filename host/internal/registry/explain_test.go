package registry

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

func TestWhyNot(t *testing.T) {
	str := func(s string) *string { return &s }
	lit := func(v string) *abi.ValueFilter { return &abi.ValueFilter{Value: json.RawMessage(v)} }
	body := map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}, "annotations": map[string]any{"a": "1"}},
		"spec": map[string]any{"size": "L"}}
	changed := func(oldSize, newSize any) *Cause {
		old := map[string]any{"spec": map[string]any{"size": oldSize}}
		nw := map[string]any{"spec": map[string]any{"size": newSize}}
		return &Cause{Reason: abi.ReasonUpdate, Body: body, Old: old, New: nw, Diff: objects.Compare(old, nw)}
	}
	same := &Cause{Reason: abi.ReasonUpdate, Body: body, Old: map[string]any{"spec": map[string]any{}}, New: map[string]any{"spec": map[string]any{}}}
	tests := []struct {
		name    string
		kind    abi.HandlerKind
		filters abi.Filters
		cause   *Cause
		when    WhenFunc
		want    string
	}{
		{"no filters", abi.KindTimer, abi.Filters{}, &Cause{Body: body}, nil, ""},
		{"label equal", abi.KindTimer, abi.Filters{Labels: map[string]abi.MetaFilter{"app": {Value: str("web")}}}, &Cause{Body: body}, nil, ""},
		{"label differs", abi.KindTimer, abi.Filters{Labels: map[string]abi.MetaFilter{"app": {Value: str("db")}}}, &Cause{Body: body}, nil,
			`its labels filter wants app="db", the object has app="web"`},
		{"label missing", abi.KindDaemon, abi.Filters{Labels: map[string]abi.MetaFilter{"tier": {Present: true}}}, &Cause{Body: body}, nil,
			"its labels filter wants tier present, the object has none"},
		{"annotation should be absent", abi.KindEvent, abi.Filters{Annotations: map[string]abi.MetaFilter{"a": {Absent: true}}}, &Cause{Body: body}, nil,
			`its annotations filter wants a absent, the object has "1"`},
		{"field absent", abi.KindTimer, abi.Filters{Field: "spec.replicas"}, &Cause{Body: body}, nil, "its field spec.replicas is absent"},
		{"value differs", abi.KindTimer, abi.Filters{Field: "spec.size", Value: lit(`"S"`)}, &Cause{Body: body}, nil,
			`its field spec.size does not match the value filter "S"`},
		{"field did not change", abi.KindField, abi.Filters{Field: "spec.size"}, changed("L", "L"), nil, "its field spec.size did not change"},
		{"field changed", abi.KindField, abi.Filters{Field: "spec.size"}, changed("S", "L"), nil, ""},
		{"old filter", abi.KindField, abi.Filters{Field: "spec.size", Old: lit(`"M"`)}, changed("S", "L"), nil,
			`the old value of spec.size does not match the old filter "M"`},
		{"new filter", abi.KindUpdate, abi.Filters{Field: "spec.size", New: &abi.ValueFilter{Absent: true}}, changed("S", "L"), nil,
			"the new value of spec.size does not match the new filter absent"},
		{"update without change", abi.KindUpdate, abi.Filters{}, same, nil, "nothing essential changed between the old and the new object"},
		{"when says no", abi.KindCreate, abi.Filters{When: true}, &Cause{Reason: abi.ReasonCreate, Body: body},
			func(*Handler, *Cause) (bool, error) { return false, nil }, "its when filter returned false"},
		{"a callable annotation filter says no", abi.KindCreate, abi.Filters{When: true, Annotations: map[string]abi.MetaFilter{"a": {Callback: true}}},
			&Cause{Reason: abi.ReasonCreate, Body: body}, func(*Handler, *Cause) (bool, error) { return false, nil },
			"its callable annotations filter on a (or its when filter, if it has one) returned false"},
		{"callable value and label filters say no", abi.KindTimer, abi.Filters{When: true, Field: "spec.size", Value: &abi.ValueFilter{Callback: true},
			Labels: map[string]abi.MetaFilter{"app": {Callback: true}, "tier": {Callback: true}}},
			&Cause{Body: body}, func(*Handler, *Cause) (bool, error) { return false, nil },
			"one of its callable filters (labels filter on app, labels filter on tier, value filter on spec.size) or its when filter, if it has one, returned false"},
		{"when says yes", abi.KindCreate, abi.Filters{When: true}, &Cause{Reason: abi.ReasonCreate, Body: body},
			func(*Handler, *Cause) (bool, error) { return true, nil }, ""},
	}
	for _, tt := range tests {
		h, err := NewHandler("m", abi.HandlerSpec{ID: "h", Kind: tt.kind, Filters: tt.filters}, abi.ResourceRef{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := WhyNot(h, tt.cause, tt.when)
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	h, _ := NewHandler("m", abi.HandlerSpec{ID: "h", Kind: abi.KindCreate, Filters: abi.Filters{When: true}}, abi.ResourceRef{})
	_, err := WhyNot(h, &Cause{Body: body}, func(*Handler, *Cause) (bool, error) { return false, errors.New("trap") })
	if err == nil || !strings.Contains(err.Error(), "trap") {
		t.Errorf("a failing when: %v", err)
	}
}
