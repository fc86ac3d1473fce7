package wasmrt

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
)

// TestHandleMisbehavingRust: the limits and the loop checks hold for a
// guest that is not Go's (examples/rust/misbehave, built by rustc for
// wasm32-wasi): its loop times out, its allocations hit the memory limit,
// its sleep is ended at its timeout as its loop is, its trap and panic
// are traps, and the module recovers each time. The rows that must not
// time out run under patient limits, so no verdict depends on speed.
func TestHandleMisbehavingRust(t *testing.T) {
	short, slow := misbehavingPair(t, "misbehave-rust", guestwasm.Bytes(t, guestwasm.Rust, "misbehave"), patient)
	tests := []misbehaviour{
		{handler: "loop", kind: KindTimeout},
		{handler: "sleep", kind: KindTimeout},
		{handler: "oom", kind: KindOutOfMemory},
		{handler: "trap", kind: KindTrap, detail: "unreachable"},
		{handler: "panic", kind: KindTrap, detail: "misbehave: deliberate panic in panic"},
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

// TestLogFlood: a guest that logs in a loop does not flood the host's log:
// past wasm.logBurst and wasm.logRate its records are dropped, the first
// drop and the count are logged once each, and the call itself succeeds.
func TestLogFlood(t *testing.T) {
	logs := &e2etest.LogBuffer{}
	opts := patient
	opts.LogRate, opts.LogBurst = 100, 1000
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	r := newRuntime(t, opts)
	m, err := r.Load(t.Context(), "misbehave-rust", guestwasm.Bytes(t, guestwasm.Rust, "misbehave"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := m.Handle(t.Context(), request("flood", 100), nil)
	elapsed := time.Since(start)
	if err != nil || string(resp.Result) != `{"message":"flooded"}` {
		t.Fatalf("%+v, %v; want the call to succeed", resp, err)
	}
	text := logs.String()
	written := strings.Count(text, "misbehave: flooding the log")
	// The bucket's bound: the burst, and the rate over the call's time
	// (measured, so a slow machine only allows more).
	if bound := 1000 + int(100*elapsed.Seconds()) + 1; written > bound || written < 1000 {
		t.Errorf("%d records written in %v, want 1000 to %d", written, elapsed, bound)
	}
	if strings.Count(text, "its records are dropped") != 1 || !strings.Contains(text, fmt.Sprintf("dropped %d log records", 100000-written)) {
		t.Errorf("want one drop warning and the count of %d dropped:\n%s", 100000-written, lastLines(text, 5))
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
