package main

import (
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/guest-sdk/kopftest"
)

func example(field string) map[string]any {
	return map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "kopf-example-1", "namespace": "default", "uid": "u1"},
		"spec":     map[string]any{"field": field},
	}
}

func TestManifest(t *testing.T) {
	m := kopftest.New(t).Manifest()
	if m.Module.Name != "kopfexample" || len(m.Handlers) != 3 {
		t.Fatalf("manifest = %+v", m)
	}
	want := []struct {
		id   string
		kind abi.HandlerKind
	}{{"create_fn", abi.KindCreate}, {"update_fn", abi.KindUpdate}, {"delete_fn", abi.KindDelete}}
	for i, w := range want {
		h := m.Handlers[i]
		if h.ID != w.id || h.Kind != w.kind || *h.Resource != (abi.ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}) {
			t.Errorf("handler %d = %+v, want %s (%s) on kopf.dev/v1 kopfexamples", i, h, w.id, w.kind)
		}
	}
}

func TestHandlers(t *testing.T) {
	tests := []struct {
		id      string
		obj     map[string]any
		old     map[string]any
		message string
	}{
		{"create_fn", example("a"), nil, "hello world"},
		{"update_fn", example("b"), example("a"), "updated"},
		{"delete_fn", example("b"), nil, "deleted"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			h := kopftest.New(t)
			res := h.Run(tt.id, tt.obj, tt.old)
			if res.Err != nil {
				t.Fatalf("outcome: %v", res.Err)
			}
			var result struct{ Message string }
			if err := res.Decode(&result); err != nil || result.Message != tt.message {
				t.Errorf("result = %s (%v), want the message %q", res.Response.Result, err, tt.message)
			}
			if logs := h.Logs(); len(logs) != 1 || logs[0].Level != abi.LogInfo {
				t.Errorf("logs = %+v, want one info record", logs)
			}
			if res.Response.Patch != nil || len(h.KubeRequests()) != 0 {
				t.Errorf("the handler patched or called the API: %+v", res.Response)
			}
		})
	}
}
