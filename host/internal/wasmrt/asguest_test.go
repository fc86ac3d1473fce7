package wasmrt

import (
	"encoding/json"
	"testing"

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
	short, slow := misbehavingPair(t, "misbehave-as", guestwasm.Bytes(t, guestwasm.AssemblyScript, "misbehave"), patient)
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
		t.Run(tt.handler, func(t *testing.T) { checkMisbehaviour(t, short, slow, tt) })
	}

	napWorks(t, short)

	// A handler's own error is an outcome, not a failure of the module.
	resp, err := slow.Handle(t.Context(), request("fail", 100), nil)
	if err != nil || resp.Outcome.Status != "error" || resp.Outcome.Message != "misbehave: deliberate failure" {
		out, _ := json.Marshal(resp)
		t.Errorf("fail: %s, %v; want an arbitrary-error outcome", out, err)
	}
}
