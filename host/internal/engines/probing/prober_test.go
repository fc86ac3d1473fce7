package probing_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/probing"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// fakeModule answers each probe by its id and counts the calls.
type fakeModule struct {
	respond func(req *abi.Request) (*abi.Response, error)
	calls   atomic.Int32
	memo    atomic.Value
}

func (m *fakeModule) Handle(_ context.Context, req *abi.Request, _ wasmrt.Host) (*abi.Response, error) {
	m.calls.Add(1)
	m.memo.Store(string(req.Memo))
	return m.respond(req)
}

func (m *fakeModule) HandleDedicated(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error) {
	return m.Handle(ctx, req, host)
}

func success(result string) *abi.Response {
	return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: json.RawMessage(result)}
}

func probes(t *testing.T, ids ...string) []*registry.Handler {
	t.Helper()
	var out []*registry.Handler
	for _, id := range ids {
		h, err := registry.NewHandler("m", abi.HandlerSpec{ID: id, Kind: abi.KindProbe}, abi.ResourceRef{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	return out
}

func newProber(t *testing.T, mod *fakeModule, clock *clocktesting.FakeClock, handlers []*registry.Handler) *probing.Prober {
	exec := execution.New(execution.Options{
		Modules:  func(string) execution.Module { return mod },
		Settings: settings.Default(),
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		Clock:    clock,
	})
	return probing.New(probing.Options{
		Exec: exec, Cache: 10 * time.Second,
		Handlers: func() []*registry.Handler { return handlers },
		Memo:     func(string) json.RawMessage { return json.RawMessage(`{"m":1}`) },
	})
}

// Each probe's outcome becomes its entry: results as returned, nothing
// for a probe that returned nothing, {"error": ...} for every kind of
// failure, which fails the report.
func TestProbeOutcomes(t *testing.T) {
	tests := []struct {
		name   string
		resp   *abi.Response
		err    error
		want   string
		failed bool
	}{
		{name: "result", resp: success(`{"ok":true}`), want: `{"p":{"ok":true}}`},
		{name: "scalar", resp: success(`42`), want: `{"p":42}`},
		{name: "none", resp: success(``), want: `{}`},
		{name: "null", resp: success(`null`), want: `{}`},
		{name: "arbitrary error", resp: &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeError, Message: "db down"}},
			want: `{"p":{"error":"db down"}}`, failed: true},
		{name: "temporary error", resp: &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeTemporary, Message: "later"}},
			want: `{"p":{"error":"later"}}`, failed: true},
		{name: "permanent error", resp: &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomePermanent, Message: "never"}},
			want: `{"p":{"error":"never"}}`, failed: true},
		{name: "trap", err: errors.New("wasm trap: unreachable"), want: `{"p":{"error":"wasm trap: unreachable"}}`, failed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mod := &fakeModule{respond: func(*abi.Request) (*abi.Response, error) { return tt.resp, tt.err }}
			p := newProber(t, mod, clocktesting.NewFakeClock(time.Now()), probes(t, "p"))
			r, err := p.Probe(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := string(r.JSON()); !jsonEqual(t, got, tt.want) {
				t.Errorf("JSON = %s, want %s", got, tt.want)
			}
			if r.OK() == tt.failed {
				t.Errorf("OK = %v, want %v (failed %v)", r.OK(), !tt.failed, r.Failed)
			}
			if got := mod.memo.Load(); got != `{"m":1}` {
				t.Errorf("the probe got memo %v, want the operator memo", got)
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// Rounds are cached for the cache time: every request within it gets the
// last round, concurrent requests share one round, and the first request
// after it calls the probes again.
func TestProbeCache(t *testing.T) {
	var n atomic.Int32
	mod := &fakeModule{respond: func(req *abi.Request) (*abi.Response, error) {
		return success(`{"n":` + string(rune('0'+n.Add(1))) + `}`), nil
	}}
	clock := clocktesting.NewFakeClock(time.Now())
	p := newProber(t, mod, clock, probes(t, "a", "b"))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p.Probe(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := mod.calls.Load(); got != 2 {
		t.Fatalf("8 concurrent requests made %d calls, want 2 (one round of two probes)", got)
	}
	clock.Step(9 * time.Second)
	r, _ := p.Probe(context.Background())
	if got := mod.calls.Load(); got != 2 {
		t.Errorf("a request 9 s later made calls (%d in all), want the cached round", got)
	}
	if want := `{"a":{"n":1},"b":{"n":2}}`; !jsonEqual(t, string(r.JSON()), want) {
		t.Errorf("cached JSON = %s, want %s", r.JSON(), want)
	}
	clock.Step(time.Second)
	r, _ = p.Probe(context.Background())
	if got := mod.calls.Load(); got != 4 {
		t.Errorf("a request 10 s later made %d calls in all, want 4 (a new round)", got)
	}
	if want := `{"a":{"n":3},"b":{"n":4}}`; !jsonEqual(t, string(r.JSON()), want) {
		t.Errorf("new JSON = %s, want %s", r.JSON(), want)
	}
}

// Without probe handlers the answer is {} and nothing is called.
func TestProbeNone(t *testing.T) {
	mod := &fakeModule{respond: func(*abi.Request) (*abi.Response, error) { return success(`1`), nil }}
	p := newProber(t, mod, clocktesting.NewFakeClock(time.Now()), nil)
	r, err := p.Probe(context.Background())
	if err != nil || string(r.JSON()) != "{}" || !r.OK() || mod.calls.Load() != 0 {
		t.Errorf("no probes: %s ok=%v err=%v calls=%d, want {} ok, no calls", r.JSON(), r.OK(), err, mod.calls.Load())
	}
}
