package wasmrt

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
)

// TestHandleMisbehavingRust: the limits and the loop checks hold for a
// guest that is not Go's (examples/rust/misbehave, built by rustc for
// wasm32-wasi): its loop times out, its allocations hit the memory limit,
// its trap and panic are traps, and the module recovers each time.
func TestHandleMisbehavingRust(t *testing.T) {
	r := newRuntime(t, limits)
	m, err := r.Load(t.Context(), "misbehave-rust", guestwasm.Bytes(t, guestwasm.Rust, "misbehave"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		handler string
		kind    Kind
		detail  string // in Detail
	}{
		{handler: "loop", kind: KindTimeout},
		{handler: "oom", kind: KindOutOfMemory},
		{handler: "trap", kind: KindTrap, detail: "unreachable"},
		{handler: "panic", kind: KindTrap, detail: "misbehave: deliberate panic in panic"},
	}
	for _, tt := range tests {
		t.Run(tt.handler, func(t *testing.T) {
			before := m.Stats()
			start := time.Now()
			resp, err := m.Handle(t.Context(), request(tt.handler, 100), nil)
			elapsed := time.Since(start)
			var cerr *CallError
			if !errors.As(err, &cerr) {
				t.Fatalf("got %+v, %v; want a *CallError", resp, err)
			}
			if cerr.Kind != tt.kind || cerr.Module != "misbehave-rust" || cerr.Handler != tt.handler {
				t.Errorf("error = %v (kind %s), want kind %s", cerr, cerr.Kind, tt.kind)
			}
			if !strings.Contains(cerr.Detail, tt.detail) || strings.Contains(cerr.Error(), "\n") {
				t.Errorf("detail %q lacks %q, or message %q has several lines", cerr.Detail, tt.detail, cerr.Error())
			}
			if elapsed > 10*time.Second {
				t.Errorf("took %v", elapsed)
			}
			if discarded := m.Stats().Discarded - before.Discarded; discarded != boolToUint(tt.kind.discards()) {
				t.Errorf("discarded %d instances, want %v", discarded, tt.kind.discards())
			}
			ok, err := m.Handle(t.Context(), request("ok", 100), nil)
			if err != nil || string(ok.Result) != `{"message":"ok"}` {
				t.Errorf("the module does not recover: %+v, %v", ok, err)
			}
			t.Logf("%s: %v in %v", tt.handler, cerr, elapsed.Round(time.Millisecond))
		})
	}

	// A handler's own error is an outcome, not a failure of the module.
	resp, err := m.Handle(t.Context(), request("fail", 100), nil)
	if err != nil || resp.Outcome.Status != "error" || resp.Outcome.Message != "misbehave: deliberate failure" {
		out, _ := json.Marshal(resp)
		t.Errorf("fail: %s, %v; want an arbitrary-error outcome", out, err)
	}
}
