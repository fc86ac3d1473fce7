package kopf

import (
	"encoding/json"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Callable label, annotation and value filters: the manifest marks them as
// callbacks behind a when filter, and the guest's when runs them (with the
// value, nil when absent), then When.
func TestCallableFilters(t *testing.T) {
	r := fresh(t)
	var seen []any
	startsWithA := func(v any, _ *Context) bool {
		seen = append(seen, v)
		s, _ := v.(string)
		return len(s) > 0 && s[0] == 'a'
	}
	isNil := ValueFunc(func(v any, _ *Context) bool { return v == nil })
	grew := func(v any, _ *Context) bool { n, _ := v.(float64); return n > 2 }
	OnCreate("", "v1", "pods", createFn, ID("label"), Labels(map[string]any{"app": startsWithA, "tier": Present}))
	OnCreate("", "v1", "pods", createFn, ID("absent_annotation"), Annotations(map[string]any{"note": isNil}))
	OnUpdate("", "v1", "pods", createFn, ID("field"), Field("spec.replicas"), New(grew))
	OnUpdate("", "v1", "pods", createFn, ID("value"), Field("spec.replicas"), Value(grew))
	OnEvent("", "v1", "pods", createFn, ID("event_value"), Field("spec.replicas"), Value(grew),
		When(func(ctx *Context) bool { return ctx.Name() != "skip" }))

	m, err := r.manifest()
	if err != nil {
		t.Fatal(err)
	}
	specs := map[string]abi.HandlerSpec{}
	for _, h := range m.Handlers {
		specs[h.ID] = h
	}
	if f := specs["label"].Filters; !f.When || !f.Labels["app"].Callback || !f.Labels["tier"].Present {
		t.Errorf("label filters in the manifest: %+v", f)
	}
	if f := specs["field/spec.replicas"].Filters; !f.When || f.New == nil || !f.New.Callback {
		t.Errorf("new filter in the manifest: %+v", f)
	}

	tests := []struct {
		name, handler string
		req           abi.Request
		want          bool
	}{
		{"label matches", "label", abi.Request{Body: json.RawMessage(`{"metadata":{"labels":{"app":"api","tier":"x"}}}`)}, true},
		{"label does not", "label", abi.Request{Body: json.RawMessage(`{"metadata":{"labels":{"app":"web"}}}`)}, false},
		{"label absent: nil", "label", abi.Request{Body: json.RawMessage(`{"metadata":{}}`)}, false},
		{"annotation absent", "absent_annotation", abi.Request{Body: json.RawMessage(`{"metadata":{}}`)}, true},
		{"annotation present", "absent_annotation", abi.Request{Body: json.RawMessage(`{"metadata":{"annotations":{"note":""}}}`)}, false},
		{"new grew", "field/spec.replicas", abi.Request{Reason: abi.ReasonUpdate,
			Old: json.RawMessage(`{"spec":{"replicas":1}}`), New: json.RawMessage(`{"spec":{"replicas":3}}`)}, true},
		{"new shrank", "field/spec.replicas", abi.Request{Reason: abi.ReasonUpdate,
			Old: json.RawMessage(`{"spec":{"replicas":3}}`), New: json.RawMessage(`{"spec":{"replicas":1}}`)}, false},
		{"value: old or new", "value/spec.replicas", abi.Request{Reason: abi.ReasonUpdate,
			Old: json.RawMessage(`{"spec":{"replicas":3}}`), New: json.RawMessage(`{"spec":{"replicas":1}}`)}, true},
		{"value: neither", "value/spec.replicas", abi.Request{Reason: abi.ReasonUpdate,
			Old: json.RawMessage(`{"spec":{"replicas":0}}`), New: json.RawMessage(`{"spec":{"replicas":1}}`)}, false},
		{"event: the body", "event_value/spec.replicas", abi.Request{Name: "x", Body: json.RawMessage(`{"spec":{"replicas":5}}`)}, true},
		{"event: When runs last", "event_value/spec.replicas", abi.Request{Name: "skip", Body: json.RawMessage(`{"spec":{"replicas":5}}`)}, false},
		{"event: callback first", "event_value/spec.replicas", abi.Request{Name: "x", Body: json.RawMessage(`{"spec":{"replicas":1}}`)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req
			req.Call, req.Handler = abi.CallWhen, tt.handler
			resp := run(t, &recorder{}, req)
			if resp.Matched == nil || *resp.Matched != tt.want {
				t.Errorf("matched = %v, want %v (%+v)", resp.Matched, tt.want, resp.Outcome)
			}
		})
	}
	if len(seen) == 0 || seen[len(seen)-1] != nil {
		t.Errorf("an absent label must reach the function as nil; seen %v", seen)
	}
}

// A value that is neither a literal, a marker nor a function is a
// registration problem.
func TestCallableFilterMistakes(t *testing.T) {
	r := fresh(t)
	OnCreate("", "v1", "pods", createFn, ID("bad"), Labels(map[string]any{"app": 3}))
	if _, err := r.manifest(); err == nil {
		t.Fatal("want a manifest error for a label filter of type int")
	}
}

// kopf.Everything and kopf.Category select many resources.
func TestManySelectors(t *testing.T) {
	r := fresh(t)
	OnEvent("kopf.dev", "", Everything, createFn, ID("all_of_group"))
	OnEvent("", "", "", createFn, ID("in_category"), Category("all"))
	m, err := r.manifest()
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Handlers[0].Resource; !s.Everything || s.Group != "kopf.dev" || s.Name != "" {
		t.Errorf("everything selector: %+v", s)
	}
	if s := m.Handlers[1].Resource; s.Category != "all" || s.Name != "" || s.Everything {
		t.Errorf("category selector: %+v", s)
	}
}
