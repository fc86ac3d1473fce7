package wasmrt

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
)

// TestHandleMisbehavingAssemblyScript: the limits and the loop checks hold
// for an AssemblyScript guest (examples/assemblyscript/misbehave, built by
// asc), which imports no WASI: its loop times out; its allocations stop at
// the memory limit (a trap: its allocator does not say why it stops); its
// sleep in the host's sleep_until_stopped, outside a daemon where nothing
// asks it to stop, ends at its timeout as its loop does; its trap and its
// abort are traps, the abort with its message; and the module recovers
// each time. The rows that must not time out run under patient limits, so
// no verdict depends on speed.
func TestHandleMisbehavingAssemblyScript(t *testing.T) {
	short, slow := newRuntime(t, limits), newRuntime(t, patient)
	modules := map[*Runtime]*Module{}
	for _, r := range []*Runtime{short, slow} {
		m, err := r.Load(t.Context(), "misbehave-as", guestwasm.Bytes(t, guestwasm.AssemblyScript, "misbehave"))
		if err != nil {
			t.Fatal(err)
		}
		modules[r] = m
	}
	tests := []misbehaviour{
		{handler: "loop", kind: KindTimeout},
		{handler: "sleep", kind: KindTimeout},
		// AssemblyScript's allocator traps (unreachable) when memory.grow
		// fails, and says nothing: the limit holds, but the host cannot
		// tell this trap from another.
		{handler: "oom", kind: KindTrap, detail: "unreachable"},
		{handler: "trap", kind: KindTrap, detail: "unreachable"},
		{handler: "panic", kind: KindTrap, detail: "abort: misbehave: deliberate panic in panic"},
	}
	for _, tt := range tests {
		t.Run(tt.handler, func(t *testing.T) {
			m := modules[tt.runtimeFor(short, slow)]
			before := m.Stats()
			start := time.Now()
			resp, err := m.Handle(t.Context(), request(tt.handler, 100), nil)
			elapsed := time.Since(start)
			var cerr *CallError
			if !errors.As(err, &cerr) {
				out, _ := json.Marshal(resp)
				t.Fatalf("got %s, %v after %v; want a *CallError", out, err, elapsed.Round(time.Millisecond))
			}
			if cerr.Kind != tt.kind || cerr.Module != "misbehave-as" || cerr.Handler != tt.handler {
				t.Errorf("error = %v (kind %s), want kind %s", cerr, cerr.Kind, tt.kind)
			}
			if !strings.Contains(cerr.Detail, tt.detail) || strings.Contains(cerr.Error(), "\n") {
				t.Errorf("detail %q lacks %q, or message %q has several lines", cerr.Detail, tt.detail, cerr.Error())
			}
			if elapsed > longAfter {
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

	napWorks(t, modules[short])

	// A handler's own error is an outcome, not a failure of the module.
	resp, err := modules[slow].Handle(t.Context(), request("fail", 100), nil)
	if err != nil || resp.Outcome.Status != "error" || resp.Outcome.Message != "misbehave: deliberate failure" {
		out, _ := json.Marshal(resp)
		t.Errorf("fail: %s, %v; want an arbitrary-error outcome", out, err)
	}
}
