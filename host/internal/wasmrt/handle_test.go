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

// patient are limits whose timeout no call reaches on a loaded machine:
// the misbehaving calls whose verdict is not a timeout (out of memory,
// traps, exits) run under them, so that their kind cannot depend on the
// machine's speed.
var patient = func() Options {
	o := limits
	o.Timeout = 10 * time.Minute
	return o
}()

// longAfter bounds how long a call stopped by its timeout may take: far
// above the timeout (a loaded machine is slow), far below what the guest
// would take unstopped (the sleepers sleep an hour).
const longAfter = 5 * time.Minute

// misbehaviour is a row of the misbehaving-guest tables: a handler, and
// the failure its call must end with.
type misbehaviour struct {
	handler string
	param   string
	kind    Kind
	code    uint32
	detail  string // in Detail
}

// runtimeFor returns the runtime a row runs on: short limits for the rows
// that must time out, patient ones for the others.
func (mb misbehaviour) runtimeFor(short, patient *Runtime) *Runtime {
	if mb.kind == KindTimeout {
		return short
	}
	return patient
}

// misbehavingPair loads wasm as name twice: under the short limits, for
// the rows that must time out, and under patient ones, for the others.
func misbehavingPair(t *testing.T, name string, wasm []byte, patientOpts Options) (short, slow *Module) {
	t.Helper()
	mods := make([]*Module, 2)
	for i, opts := range []Options{limits, patientOpts} {
		m, err := newRuntime(t, opts).Load(t.Context(), name, wasm)
		if err != nil {
			t.Fatal(err)
		}
		mods[i] = m
	}
	return mods[0], mods[1]
}

// checkMisbehaviour calls the row's handler on the module for its kind and
// checks the failure it ends with, that the instance was discarded when it
// may be broken, and that the module serves "ok" afterwards.
func checkMisbehaviour(t *testing.T, short, slow *Module, tt misbehaviour) {
	t.Helper()
	m := short
	if tt.kind != KindTimeout {
		m = slow
	}
	before := m.Stats()
	req := request(tt.handler, 100)
	req.Param = json.RawMessage(tt.param)
	start := time.Now()
	resp, err := m.Handle(t.Context(), req, nil)
	elapsed := time.Since(start)
	var cerr *CallError
	if !errors.As(err, &cerr) {
		out, _ := json.Marshal(resp)
		t.Fatalf("got %s, %v after %v; want a *CallError", out, err, elapsed.Round(time.Millisecond))
	}
	if cerr.Kind != tt.kind || cerr.Code != tt.code || cerr.Module != m.manifest.Module.Name || cerr.Handler != tt.handler {
		t.Errorf("error = %v (kind %s, code %d), want kind %s code %d", cerr, cerr.Kind, cerr.Code, tt.kind, tt.code)
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
	if ok, err := m.Handle(t.Context(), request("ok", 100), nil); err != nil || ok.Outcome.Status != abi.OutcomeSuccess {
		t.Errorf("the module does not recover: %+v, %v", ok, err)
	}
	t.Logf("%s: %v in %v", tt.handler, cerr, elapsed.Round(time.Millisecond))
}

func TestHandleMisbehaving(t *testing.T) {
	short, slow := misbehavingPair(t, "misbehave", guest(t, "misbehave"), patient)
	tests := []misbehaviour{
		{handler: "loop", kind: KindTimeout},
		{handler: "sleep", kind: KindTimeout},
		{handler: "oom", kind: KindOutOfMemory, detail: "out of memory"},
		{handler: "panic", kind: KindTrap, detail: "panic: misbehave: deliberate panic"},
		{handler: "exit", kind: KindExit, code: 3},
		{handler: "fail", kind: KindFailed, code: 7, detail: "misbehave: deliberate failure"},
		{handler: "badjson", kind: KindBadOutput},
		{handler: "nooutcome", kind: KindBadOutput},
		{handler: "huge", param: `{"bytes": 200000}`, kind: KindOutputTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.handler, func(t *testing.T) { checkMisbehaviour(t, short, slow, tt) })
	}
	napWorks(t, short)
}

// napWorks checks that a short sleep inside a handler keeps working: the
// call succeeds, and lasts at least the guest's 10 ms sleep (a lower
// bound, which no machine's speed can break).
func napWorks(t *testing.T, m *Module) {
	t.Helper()
	start := time.Now()
	resp, err := m.Handle(t.Context(), request("nap", 100), nil)
	if err != nil || resp.Outcome.Status != abi.OutcomeSuccess {
		t.Fatalf("nap: %+v, %v; want a success", resp, err)
	}
	if elapsed := time.Since(start); elapsed < 10*time.Millisecond {
		t.Errorf("nap took %v, want its 10 ms sleep at least", elapsed)
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

// TestHandleDedicatedEndsSleep: a daemon's call (on its own instance,
// bounded only by its context) that sleeps in time.Sleep ends when the
// host cancels it, as it does when the daemon ignores its stop request or
// the host shuts down; a loop ends the same way.
func TestHandleDedicatedEndsSleep(t *testing.T) {
	r := newRuntime(t, patient)
	m := load(t, r, "misbehave")
	for _, handler := range []string{"sleep", "loop"} {
		t.Run(handler, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			stopped := time.AfterFunc(100*time.Millisecond, cancel)
			defer stopped.Stop()
			start := time.Now()
			_, err := m.HandleDedicated(ctx, request(handler, 10), nil)
			var cerr *CallError
			if !errors.As(err, &cerr) || cerr.Kind != KindCanceled {
				t.Fatalf("%v, want the call canceled", err)
			}
			if elapsed := time.Since(start); elapsed > longAfter {
				t.Errorf("took %v", elapsed)
			}
		})
	}
}

// BenchmarkStopLatency measures how long after its deadline a call ends,
// for a guest that loops and one that sleeps (ms-after-deadline).
func BenchmarkStopLatency(b *testing.B) {
	opts := limits
	opts.Timeout = 50 * time.Millisecond
	opts.Logger = discardLogger()
	r := newRuntime(b, opts)
	m := load(b, r, "misbehave")
	for _, handler := range []string{"loop", "sleep"} {
		b.Run(handler, func(b *testing.B) {
			var late time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := m.Handle(b.Context(), request(handler, 10), nil); err == nil {
					b.Fatal("the call did not time out")
				}
				late += time.Since(start) - opts.Timeout
			}
			b.ReportMetric(float64(late.Microseconds())/1000/float64(b.N), "ms-after-deadline")
		})
	}
}
