package wasmrt

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func TestHandle(t *testing.T) {
	r := newRuntime(t, Options{})
	m := load(t, r, "good")
	for handler, result := range map[string]string{"ok": `{"message":"ok"}`, "decode": `{"message":"hello example"}`} {
		resp, err := m.Handle(t.Context(), request(handler, 100), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Outcome.Status != abi.OutcomeSuccess || string(resp.Result) != result {
			t.Errorf("%s: response = %+v, result %s, want %s", handler, resp, resp.Result, result)
		}
	}
	req := request("echo", 4096)
	resp, err := m.Handle(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Result) != string(req.Body) {
		t.Errorf("echo returned %d bytes, want the %d bytes of the body", len(resp.Result), len(req.Body))
	}
}

// limits are small enough for the misbehaving guests to hit them quickly.
var limits = Options{
	Timeout:          time.Second,
	MemoryLimitPages: 1024, // 64 MiB
	MaxOutputBytes:   64 << 10,
	PoolSize:         2,
}

func TestHandleMisbehaving(t *testing.T) {
	r := newRuntime(t, limits)
	m := load(t, r, "misbehave")
	tests := []struct {
		handler string
		param   string
		kind    Kind
		code    uint32
		detail  string // in Detail
	}{
		{handler: "loop", kind: KindTimeout},
		{handler: "oom", kind: KindOutOfMemory, detail: "out of memory"},
		{handler: "panic", kind: KindTrap, detail: "panic: misbehave: deliberate panic"},
		{handler: "exit", kind: KindExit, code: 3},
		{handler: "fail", kind: KindFailed, code: 7, detail: "misbehave: deliberate failure"},
		{handler: "badjson", kind: KindBadOutput},
		{handler: "nooutcome", kind: KindBadOutput},
		{handler: "huge", param: `{"bytes": 200000}`, kind: KindOutputTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.handler, func(t *testing.T) {
			before := m.Stats()
			req := request(tt.handler, 100)
			req.Param = json.RawMessage(tt.param)
			start := time.Now()
			resp, err := m.Handle(t.Context(), req, nil)
			elapsed := time.Since(start)
			var cerr *CallError
			if !errors.As(err, &cerr) {
				t.Fatalf("got %+v, %v; want a *CallError", resp, err)
			}
			if cerr.Kind != tt.kind || cerr.Code != tt.code || cerr.Module != "misbehave" || cerr.Handler != tt.handler {
				t.Errorf("error = %v (kind %s, code %d), want kind %s code %d", cerr, cerr.Kind, cerr.Code, tt.kind, tt.code)
			}
			if !strings.Contains(cerr.Detail, tt.detail) || strings.Contains(cerr.Error(), "\n") {
				t.Errorf("detail %q lacks %q, or message %q has several lines", cerr.Detail, tt.detail, cerr.Error())
			}
			if elapsed > 10*time.Second {
				t.Errorf("took %v", elapsed)
			}
			after := m.Stats()
			if discarded := after.Discarded - before.Discarded; discarded != boolToUint(tt.kind.discards()) {
				t.Errorf("discarded %d instances, want %v", discarded, tt.kind.discards())
			}
			// The module keeps serving, on a fresh instance if needed.
			if _, err := m.Handle(t.Context(), request("ok", 100), nil); err != nil {
				t.Errorf("the module does not recover: %v", err)
			}
			t.Logf("%s: %v in %v", tt.handler, cerr, elapsed.Round(time.Millisecond))
		})
	}
}

func TestHandleTimeoutReplacesInstance(t *testing.T) {
	opts := limits
	opts.PoolSize = 1
	opts.Timeout = 300 * time.Millisecond
	r := newRuntime(t, opts)
	m := load(t, r, "misbehave")
	_, err := m.Handle(t.Context(), request("loop", 10), nil)
	var cerr *CallError
	if !errors.As(err, &cerr) || cerr.Kind != KindTimeout || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("loop: %v, want a timeout", err)
	}
	if s := m.Stats(); s.Live != 0 || s.Discarded != 1 || s.MemoryBytes != 0 {
		t.Errorf("after the timeout: %+v, want the instance closed and its memory no longer counted", s)
	}
	if _, err := m.Handle(t.Context(), request("ok", 10), nil); err != nil {
		t.Fatal(err)
	}
	if s := m.Stats(); s.Live != 1 || s.Created != 2 {
		t.Errorf("after the next call: %+v, want a second instance", s)
	}
}

func TestHandleCanceled(t *testing.T) {
	opts := limits
	opts.PoolSize = 1
	opts.Timeout = time.Minute
	r := newRuntime(t, opts)
	m := load(t, r, "misbehave")

	// Canceled during the call: the instance is closed at once.
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := m.Handle(ctx, request("loop", 10), nil)
	var cerr *CallError
	if !errors.As(err, &cerr) || cerr.Kind != KindCanceled {
		t.Fatalf("loop with a canceled context: %v, want canceled", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("the call stopped %v after the start, want about 200ms", elapsed)
	}

	// Canceled while waiting for an instance: the only one is busy.
	busy := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := m.Handle(ctx, request("loop", 10), nil)
		busy <- err
	}()
	deadline := time.Now().Add(5 * time.Second)
	for m.Stats().Idle != 0 || m.Stats().Live != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the loop call did not start: %+v", m.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	ctx2, cancel2 := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel2()
	_, err = m.Handle(ctx2, request("ok", 10), nil)
	if !errors.As(err, &cerr) || cerr.Kind != KindCanceled || !strings.Contains(err.Error(), "waiting for a free instance") {
		t.Errorf("waiting call: %v, want canceled while waiting", err)
	}
	if err := <-busy; err == nil {
		t.Error("the loop returned")
	}
}

func boolToUint(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
