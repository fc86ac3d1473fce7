package spawning_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/spawning"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

var ref = abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Namespaced: true}

var key = spawning.Key{Resource: "kopfexamples.v1.kopf.dev", Namespace: "ns", Name: "ex"}

// module is a fake module: run is each call's behaviour; calls counts them.
type module struct {
	run   func(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error)
	calls atomic.Int32
}

func (m *module) Handle(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error) {
	m.calls.Add(1)
	return m.run(ctx, req, host)
}

func (m *module) HandleDedicated(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error) {
	return m.Handle(ctx, req, host)
}

func ok(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error) {
	return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}}, nil
}

// cluster accepts every patch.
type cluster struct{}

func (cluster) Patch(context.Context, abi.ResourceRef, string, string, string, abi.PatchType, []byte) (*kube.Patched, error) {
	return &kube.Patched{ResourceVersion: "2"}, nil
}
func (cluster) PostEvent(context.Context, kube.ObjectRef, abi.EventRequest) error { return nil }
func (cluster) Do(context.Context, abi.KubeRequest) abi.KubeResponse              { return abi.KubeResponse{} }

type fixture struct {
	clock   *clocktesting.FakeClock
	mod     *module
	spawner *spawning.Spawner
	woken   chan spawning.Key
}

func newFixture(t *testing.T, run func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error)) *fixture {
	t.Helper()
	return newFixtureWith(t, run, nil)
}

// newFixtureWith is newFixture with the spawner's options changed by opts.
func newFixtureWith(t testing.TB, run func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error), opts func(*spawning.Options)) *fixture {
	t.Helper()
	f := &fixture{clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		mod: &module{run: run}, woken: make(chan spawning.Key, 16)}
	exec := execution.New(execution.Options{
		Modules: func(string) execution.Module { return f.mod }, Cluster: cluster{},
		Settings: settings.Default(), Clock: f.clock,
	})
	o := spawning.Options{Exec: exec, Modules: []string{"m"}, MaxDaemons: 2,
		Wake: func(k spawning.Key) { f.woken <- k }}
	if opts != nil {
		opts(&o)
	}
	f.spawner = spawning.New(o)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		f.spawner.Shutdown(ctx)
	})
	return f
}

func handler(t testing.TB, spec abi.HandlerSpec) *registry.Handler {
	t.Helper()
	h, err := registry.NewHandler("m", spec, ref)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func body() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "ex", "namespace": "ns"}}}
}

// settle waits (in real time) until the workers wait on the fake clock, and
// the calls so far reach want.
func (f *fixture) settle(t *testing.T, want int32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if f.mod.calls.Load() == want && f.clock.HasWaiters() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("calls = %d, want %d (clock waiters: %v)", f.mod.calls.Load(), want, f.clock.HasWaiters())
}

func TestTimerRunsAtItsInterval(t *testing.T) {
	f := newFixture(t, ok)
	h := handler(t, abi.HandlerSpec{ID: "tick", Kind: abi.KindTimer, Options: abi.Options{Interval: 10, InitialDelay: 5}})
	f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
	f.settle(t, 0) // the initial delay
	f.clock.Step(5 * time.Second)
	f.settle(t, 1)
	f.clock.Step(9 * time.Second)
	f.settle(t, 1)
	f.clock.Step(time.Second)
	f.settle(t, 2)
	f.clock.Step(10 * time.Second)
	f.settle(t, 3)
}

func TestTimerWaitsForIdleness(t *testing.T) {
	f := newFixture(t, ok)
	h := handler(t, abi.HandlerSpec{ID: "idle", Kind: abi.KindTimer, Options: abi.Options{Interval: 1, Idle: 10}})
	f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
	f.settle(t, 0)
	f.clock.Step(6 * time.Second)
	f.settle(t, 0)
	// An essential change resets the idle clock.
	f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
	f.clock.Step(5 * time.Second)
	f.settle(t, 0)
	f.clock.Step(5 * time.Second)
	f.settle(t, 1)
}

func TestTimerErrorDelayReplacesTheInterval(t *testing.T) {
	var failed atomic.Bool
	f := newFixture(t, func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error) {
		if failed.CompareAndSwap(false, true) {
			d := 3.0
			return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeTemporary, Message: "soon", Delay: &d}}, nil
		}
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}}, nil
	})
	h := handler(t, abi.HandlerSpec{ID: "tick", Kind: abi.KindTimer, Options: abi.Options{Interval: 60}})
	f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
	f.settle(t, 1)
	f.clock.Step(3 * time.Second)
	f.settle(t, 2)
	f.clock.Step(59 * time.Second)
	f.settle(t, 2)
}

// A daemon sleeping until it is stopped ends when the object is marked for
// deletion, and the spawner wakes the object so that its finalizer goes.
func TestDaemonStopsOnDeletion(t *testing.T) {
	var reason atomic.Value
	f := newFixture(t, func(ctx context.Context, _ *abi.Request, host wasmrt.Host) (*abi.Response, error) {
		r := host.SleepUntilStopped(ctx, time.Hour)
		reason.Store(r.Reason)
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}}, nil
	})
	h := handler(t, abi.HandlerSpec{ID: "watch", Kind: abi.KindDaemon})
	f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
	f.settle(t, 1)
	if n := f.spawner.Stop(key, body()); n != 1 {
		t.Fatalf("Stop says %d running, want 1", n)
	}
	select {
	case k := <-f.woken:
		if k != key {
			t.Errorf("woke %v", k)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the object was not woken after its daemon stopped")
	}
	if f.spawner.Running(key) != 0 || reason.Load() != spawning.ReasonDeleted {
		t.Errorf("running %d, stop reason %v", f.spawner.Running(key), reason.Load())
	}
}

// A daemon that ignores the stop is terminated after its cancellation
// timeout, on the clock.
func TestDaemonTerminatedAfterCancellationTimeout(t *testing.T) {
	var once sync.Once
	started := make(chan struct{})
	f := newFixture(t, func(ctx context.Context, _ *abi.Request, _ wasmrt.Host) (*abi.Response, error) {
		once.Do(func() { close(started) })
		<-ctx.Done() // only a termination ends it
		return nil, ctx.Err()
	})
	h := handler(t, abi.HandlerSpec{ID: "stubborn", Kind: abi.KindDaemon, Options: abi.Options{CancellationTimeout: 2}})
	f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
	<-started
	f.spawner.Stop(key, body())
	f.settle(t, 1) // waits on the cancellation timeout
	if f.spawner.Running(key) != 1 {
		t.Fatal("the daemon ended before its cancellation timeout")
	}
	f.clock.Step(2 * time.Second)
	select {
	case <-f.woken:
	case <-time.After(5 * time.Second):
		t.Fatal("the daemon was not terminated after its cancellation timeout")
	}
}

// A daemon that returns is done for good: it is not spawned again for the
// object in this process.
func TestFinishedDaemonIsNotRespawned(t *testing.T) {
	f := newFixture(t, ok)
	h := handler(t, abi.HandlerSpec{ID: "once", Kind: abi.KindDaemon})
	f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
	<-f.woken
	f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, false)
	if f.spawner.Running(key) != 0 || f.mod.calls.Load() != 1 {
		t.Errorf("running %d, calls %d: the finished daemon ran again", f.spawner.Running(key), f.mod.calls.Load())
	}
}

// lines is a slog handler that keeps the messages it is given.
type lines struct {
	mu   sync.Mutex
	msgs []string
}

func (l *lines) Enabled(context.Context, slog.Level) bool { return true }
func (l *lines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}
func (l *lines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *lines) WithGroup(string) slog.Handler      { return l }

func (l *lines) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

// A daemon that ignores the stop and has no cancellation timeout is
// polled, Kopf's cancellation_polling: after its cancellation backoff,
// every polling period (the handler's, else
// settings.Execution.CancellationPolling) the host checks it and says it
// still runs, holding the object; it is never closed, and the checks end
// when it exits.
func TestDaemonPolledWithoutCancellationTimeout(t *testing.T) {
	for _, tt := range []struct {
		name    string
		polling float64
		period  time.Duration
	}{{"the handler's polling", 2, 2 * time.Second}, {"the default polling", 0, 7 * time.Second}} {
		t.Run(tt.name, func(t *testing.T) {
			var once sync.Once
			started, release := make(chan struct{}), make(chan struct{})
			log := &lines{}
			f := newFixtureWith(t, func(ctx context.Context, _ *abi.Request, _ wasmrt.Host) (*abi.Response, error) {
				once.Do(func() { close(started) })
				select { // ignores the stop
				case <-release:
				case <-ctx.Done():
				}
				return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}}, nil
			}, func(o *spawning.Options) {
				o.Logger = slog.New(log)
				o.CancellationPolling = 7 * time.Second
			})
			h := handler(t, abi.HandlerSpec{ID: "stubborn", Kind: abi.KindDaemon,
				Options: abi.Options{CancellationBackoff: 1, CancellationPolling: tt.polling}})
			f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
			<-started
			f.spawner.Stop(key, body())
			const still = "Daemon 'stubborn' is still running"
			f.settle(t, 1)
			f.clock.Step(time.Second) // the cancellation backoff
			for i := 1; i <= 3; i++ {
				f.settle(t, 1)
				if n := log.count(still); n != i-1 {
					t.Fatalf("%d checks before check %d", n, i)
				}
				f.clock.Step(tt.period)
				waitFor(t, func() bool { return log.count(still) == i }, fmt.Sprintf("check %d", i))
			}
			if f.spawner.Running(key) != 1 {
				t.Fatal("a polled daemon was ended")
			}
			close(release)
			select {
			case <-f.woken:
			case <-time.After(5 * time.Second):
				t.Fatal("the object was not woken when its daemon exited")
			}
			f.clock.Step(3 * tt.period)
			time.Sleep(10 * time.Millisecond)
			if n := log.count(still); n != 3 {
				t.Errorf("%d checks after the daemon exited, want none", n-3)
			}
		})
	}
}

// waitFor waits (in real time, generously) until cond holds.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A callable initial delay (Kopf's initial_delay=fn): before the first run
// for an object the spawner asks the guest (Call "initialDelay") and waits
// what it answers, for timers and daemons alike; the guest is asked once.
func TestCallableInitialDelay(t *testing.T) {
	for _, kind := range []abi.HandlerKind{abi.KindTimer, abi.KindDaemon} {
		t.Run(string(kind), func(t *testing.T) {
			var asked, runs atomic.Int32
			f := newFixture(t, func(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error) {
				if req.Call == abi.CallInitialDelay {
					asked.Add(1)
					return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: json.RawMessage(`5`)}, nil
				}
				runs.Add(1)
				if kind == abi.KindDaemon {
					host.SleepUntilStopped(ctx, time.Hour)
				}
				return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}}, nil
			})
			h := handler(t, abi.HandlerSpec{ID: "later", Kind: kind, Options: abi.Options{Interval: 60, InitialDelayCallback: true}})
			f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
			f.settle(t, 1) // asked, then waiting
			f.clock.Step(4 * time.Second)
			f.settle(t, 1)
			if runs.Load() != 0 {
				t.Fatal("ran before its computed initial delay")
			}
			f.clock.Step(time.Second)
			f.settle(t, 2)
			if asked.Load() != 1 || runs.Load() != 1 {
				t.Errorf("asked %d times, ran %d times; want 1 and 1", asked.Load(), runs.Load())
			}
		})
	}
}

// An initial delay the guest cannot compute (an error, or a result that is
// no number of seconds) is logged and the timer starts at once.
func TestCallableInitialDelayFails(t *testing.T) {
	for name, resp := range map[string]*abi.Response{
		"error":     {Outcome: abi.Outcome{Status: abi.OutcomeError, Message: "boom"}},
		"no number": {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: json.RawMessage(`"soon"`)},
		"negative":  {Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: json.RawMessage(`-1`)},
	} {
		t.Run(name, func(t *testing.T) {
			log := &lines{}
			f := newFixtureWith(t, func(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error) {
				if req.Call == abi.CallInitialDelay {
					return resp, nil
				}
				return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}}, nil
			}, func(o *spawning.Options) { o.Logger = slog.New(log) })
			h := handler(t, abi.HandlerSpec{ID: "later", Kind: abi.KindTimer, Options: abi.Options{Interval: 60, InitialDelayCallback: true}})
			f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
			f.settle(t, 2) // asked, then run at once
			if log.count("initial delay") != 1 {
				t.Errorf("log: %v", log.msgs)
			}
		})
	}
}

// A deletion stops the object's timers: one that sits between two runs
// holds no goroutine and ends before Stop returns, with or without
// Options.TimerStopWait, so the deletion's cycle releases the object
// itself; a timer in a call is not waited for: Stop leaves it running and
// the object is woken once it ends.
func TestStopWaitsForIdleTimers(t *testing.T) {
	release := make(chan struct{})
	tests := []struct {
		name    string
		wait    time.Duration
		inCall  bool
		running int
	}{
		{"between runs, waited for", time.Minute, false, 0},
		{"between runs, no wait", 0, false, 0},
		{"in a call, not waited for", time.Minute, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixtureWith(t, func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error) {
				if tt.inCall {
					<-release
				}
				return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}}, nil
			}, func(o *spawning.Options) { o.TimerStopWait = tt.wait })
			h := handler(t, abi.HandlerSpec{ID: "tick", Kind: abi.KindTimer, Options: abi.Options{Interval: 10}})
			f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
			if tt.inCall {
				waitCalls(t, f, 1)
			} else {
				f.settle(t, 1)
			}
			if n := f.spawner.Stop(key, body()); n != tt.running {
				t.Errorf("Stop says %d running, want %d", n, tt.running)
			}
			if tt.inCall {
				release <- struct{}{}
			}
		})
	}
}

// waitCalls waits (in real time) until the module has been called want times.
func waitCalls(t *testing.T, f *fixture, want int32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for f.mod.calls.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("calls = %d, want %d", f.mod.calls.Load(), want)
		}
		time.Sleep(time.Millisecond)
	}
}
