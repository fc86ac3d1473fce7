package wasmrt

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
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

// TestRustOutboundHTTP: a Rust guest's outbound HTTP (ctx.http in
// examples/rust/outbound, over Extism's kernel) reaches a host its
// manifest allows, with its header, and gets the status, body and
// headers; a host it did not declare fails the call with the host's
// message, and the server sees nothing.
func TestRustOutboundHTTP(t *testing.T) {
	var hits atomic.Int32
	srv := replyServer(t, &hits)
	r := newRuntime(t, Options{Logger: discardLogger()})
	m, err := r.Load(t.Context(), "outbound-rust", guestwasm.Bytes(t, guestwasm.Rust, "outbound"))
	if err != nil {
		t.Fatal(err)
	}
	get := func(url string) (*abi.Response, error) {
		req := request("get", 100)
		req.Param = json.RawMessage(strconv.Quote(url))
		return m.Handle(t.Context(), req, nil)
	}
	resp, err := get(srv.URL + "/ping")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"body":"hello guest","header":"pong","status":202}`; string(resp.Result) != want {
		t.Errorf("result %s (%s), want %s", resp.Result, resp.Outcome.Message, want)
	}
	url := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/ping"
	_, err = get(url)
	var cerr *CallError
	if !errors.As(err, &cerr) || !strings.Contains(cerr.Error(), "the request to "+url+" is not allowed") {
		t.Errorf("error %v, want a call error saying the request to %s is not allowed", err, url)
	}
	if hits.Load() != 1 {
		t.Errorf("the server saw %d requests, want 1", hits.Load())
	}
}
