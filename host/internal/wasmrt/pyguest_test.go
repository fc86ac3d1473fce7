package wasmrt

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
	"github.com/kopf-wasm/kopf-wasm/internal/guestwasm"
)

// TestHandleMisbehavingPython: the limits hold for a Python guest
// (examples/python/misbehave, CPython for WASI pre-initialised with the
// kopf package): its loop and its time.sleep end at the call's timeout,
// as the Go and Rust guests' do, and the module recovers on a fresh
// instance. What Python itself catches is an outcome, as in Kopf: an
// exception is an arbitrary error with Kopf's log line and traceback, an
// allocation past the memory limit a MemoryError.
func TestHandleMisbehavingPython(t *testing.T) {
	wasm := guestwasm.Bytes(t, guestwasm.Python, "misbehave")
	logs := &e2etest.LogBuffer{}
	patientLogged := patient
	patientLogged.Logger = slog.New(slog.NewTextHandler(logs, nil))
	short, slow := newRuntime(t, limits), newRuntime(t, patientLogged)
	modules := map[*Runtime]*Module{}
	for _, r := range []*Runtime{short, slow} {
		m, err := r.Load(t.Context(), "misbehave-python", wasm)
		if err != nil {
			t.Fatal(err)
		}
		modules[r] = m
	}
	for _, tt := range []misbehaviour{{handler: "loop", kind: KindTimeout}, {handler: "sleep", kind: KindTimeout}} {
		t.Run(tt.handler, func(t *testing.T) {
			m := modules[tt.runtimeFor(short, slow)]
			start := time.Now()
			_, err := m.Handle(t.Context(), request(tt.handler, 100), nil)
			var cerr *CallError
			if !errors.As(err, &cerr) || cerr.Kind != tt.kind {
				t.Fatalf("%v, want a %s", err, tt.kind)
			}
			if elapsed := time.Since(start); elapsed > longAfter {
				t.Errorf("took %v", elapsed)
			}
			resp, err := m.Handle(t.Context(), request("ok", 100), nil)
			if err != nil || string(resp.Result) != `{"message":"ok"}` {
				t.Errorf("the module does not recover: %+v, %v", resp, err)
			}
		})
	}
	for _, tt := range []struct{ handler, message string }{
		{"raise", "ValueError: misbehave: deliberate failure"},
		{"oom", "MemoryError"},
	} {
		t.Run(tt.handler, func(t *testing.T) {
			host := &recordingHost{}
			resp, err := modules[slow].Handle(t.Context(), request(tt.handler, 100), host)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Outcome.Status != abi.OutcomeError || !strings.Contains(resp.Outcome.Message, tt.message) {
				t.Errorf("outcome %+v, want an arbitrary error with %q", resp.Outcome, tt.message)
			}
			// Kopf's line, and the traceback, reach the host's log.
			for _, want := range []string{"Handler '" + tt.handler + "' failed with an exception. Will retry.", "Traceback (most recent call last)", tt.message} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("the log lacks %q:\n%s", want, logs.String())
				}
			}
			ok, err := modules[slow].Handle(t.Context(), request("ok", 100), nil)
			if err != nil || string(ok.Result) != `{"message":"ok"}` {
				t.Errorf("the module does not recover: %+v, %v", ok, err)
			}
		})
	}
	napWorks(t, modules[short])
}
