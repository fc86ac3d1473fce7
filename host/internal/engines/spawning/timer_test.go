package spawning_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/spawning"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// wakes counts the spawner's Options.Wake calls per object, without
// blocking.
type wakes struct {
	mu sync.Mutex
	n  map[spawning.Key]int
}

func (w *wakes) wake(k spawning.Key) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil {
		w.n = map[spawning.Key]int{}
	}
	w.n[k]++
}

func (w *wakes) count(k spawning.Key) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n[k]
}

// stoppers are the ways a worker is asked to stop, each with the number of
// workers it reports still running when it returns (-1: it reports none).
var stoppers = []struct {
	name string
	stop func(s *spawning.Spawner) int
}{
	{"Stop (deleted)", func(s *spawning.Spawner) int { return s.Stop(key, body()) }},
	{"Forget", func(s *spawning.Spawner) int { s.Forget(key); return -1 }},
	{"Release (sharding)", func(s *spawning.Spawner) int { return s.Release(key) }},
	{"Rebind (canary)", func(s *spawning.Spawner) int {
		return s.Rebind(key, func(*registry.Handler, string) bool { return false })
	}},
	{"Pause", func(s *spawning.Spawner) int { s.Pause(); return -1 }},
	{"Reload", func(s *spawning.Spawner) int { s.Reload([]string{"m"}, []string{"m"}); return -1 }},
	{"Adjust (filters mismatch)", func(s *spawning.Spawner) int {
		s.Adjust(context.Background(), key, body(), nil, false)
		return -1
	}},
	{"Shutdown", func(s *spawning.Spawner) int { s.Shutdown(context.Background()); return -1 }},
}

// A timer waiting between its runs holds nothing but its clock callback:
// any stop ends it before the stop returns, cancels the callback, and
// wakes the object; it never runs again.
func TestStopWhileWaitingEndsTheTimerAtOnce(t *testing.T) {
	for _, tt := range stoppers {
		t.Run(tt.name, func(t *testing.T) {
			woken := &wakes{}
			f := newFixtureWith(t, ok, func(o *spawning.Options) { o.Wake = woken.wake })
			h := handler(t, abi.HandlerSpec{ID: "tick", Kind: abi.KindTimer, Options: abi.Options{Interval: 10}})
			f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
			f.settle(t, 1)
			if n := tt.stop(f.spawner); n > 0 {
				t.Errorf("the stop reports %d running, want 0", n)
			}
			if n := f.spawner.Running(key); n != 0 {
				t.Errorf("%d workers running after the stop, want 0", n)
			}
			if n := woken.count(key); n != 1 {
				t.Errorf("the object was woken %d times, want once", n)
			}
			if n := f.clock.Waiters(); n != 0 {
				t.Errorf("%d callbacks still scheduled on the clock, want 0", n)
			}
			f.clock.Step(time.Hour) // nothing is scheduled: nothing runs
			if n := f.mod.calls.Load(); n != 1 {
				t.Errorf("%d calls, want 1", n)
			}
		})
	}
}

// A timer asked to stop while its handler runs finishes the run, stores
// its outcome, sees the stop's reason, and only then ends; it schedules no
// next run.
func TestStopDuringARunWaitsForTheRun(t *testing.T) {
	for _, tt := range stoppers[:4] {
		t.Run(tt.name, func(t *testing.T) {
			woken := &wakes{}
			started, release := make(chan struct{}), make(chan struct{})
			var reason atomic.Value
			f := newFixtureWith(t, func(ctx context.Context, _ *abi.Request, host wasmrt.Host) (*abi.Response, error) {
				close(started)
				<-release
				reason.Store(host.IsStopped(ctx).Reason)
				return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}}, nil
			}, func(o *spawning.Options) { o.Wake = woken.wake; o.TimerStopWait = time.Minute })
			h := handler(t, abi.HandlerSpec{ID: "tick", Kind: abi.KindTimer, Options: abi.Options{Interval: 10}})
			f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
			<-started
			if n := tt.stop(f.spawner); n >= 0 && n != 1 {
				t.Errorf("the stop reports %d running, want the 1 in its run", n)
			}
			if f.spawner.Running(key) != 1 || woken.count(key) != 0 {
				t.Fatalf("running %d, woken %d: the timer ended in its run", f.spawner.Running(key), woken.count(key))
			}
			close(release)
			waitFor(t, func() bool { return woken.count(key) == 1 }, "the object's wake after the run")
			if n := f.spawner.Running(key); n != 0 {
				t.Errorf("%d workers running after the run, want 0", n)
			}
			if reason.Load() == "" {
				t.Error("the handler did not see the stop")
			}
			if n := f.clock.Waiters(); n != 0 {
				t.Errorf("%d callbacks scheduled after the stopped run, want 0", n)
			}
		})
	}
}

// The clock's callback and a stop race: exactly one of them ends the
// timer (one wake; the spawner's wait group balances, or Shutdown in the
// cleanup panics or hangs), and nothing stays scheduled.
func TestTimerFiringRacesAStop(t *testing.T) {
	fired := 0 // iterations where the callback came first and the timer ran again
	for i := range 200 {
		woken := &wakes{}
		f := newFixtureWith(t, ok, func(o *spawning.Options) { o.Wake = woken.wake })
		h := handler(t, abi.HandlerSpec{ID: "tick", Kind: abi.KindTimer, Options: abi.Options{Interval: 1}})
		f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
		f.settle(t, 1)
		stepped := make(chan struct{})
		go func() {
			defer close(stepped)
			f.clock.Step(time.Second)
		}()
		f.spawner.Stop(key, body())
		<-stepped
		waitFor(t, func() bool { return f.spawner.Running(key) == 0 }, fmt.Sprintf("iteration %d: the timer's end", i))
		if n := woken.count(key); n != 1 {
			t.Fatalf("iteration %d: woken %d times, want once", i, n)
		}
		if calls := f.mod.calls.Load(); calls != 1 && calls != 2 {
			t.Fatalf("iteration %d: %d calls, want 1 or 2", i, calls)
		} else if calls == 2 {
			fired++
		}
		if n := f.clock.Waiters(); n != 0 {
			t.Fatalf("iteration %d: %d callbacks scheduled after the end", i, n)
		}
	}
	t.Logf("the callback ran the timer first in %d of 200 iterations", fired)
}

// tickAt is a clock step and the calls made once it has passed.
type tickAt struct {
	step  time.Duration
	calls int32
}

// The timer's timing: interval counted from a run's end, sharp aligned to
// the interval with the run's time subtracted, idle, initial delay, a
// failure's retry delay, and a timer that runs once; every run starts
// exactly when due (lateness 0 on the fake clock).
func TestTimerTiming(t *testing.T) {
	tests := []timingCase{
		{"interval", abi.Options{Interval: 10}, 3 * time.Second, 0, 1,
			[]tickAt{{9 * time.Second, 1}, {time.Second, 2}, {10 * time.Second, 3}}, false},
		{"sharp", abi.Options{Interval: 10, Sharp: true}, 3 * time.Second, 0, 1,
			[]tickAt{{6 * time.Second, 1}, {time.Second, 2}, {7 * time.Second, 3}}, false},
		{"sharp, a run longer than the interval", abi.Options{Interval: 10, Sharp: true}, 13 * time.Second, 0, 1,
			[]tickAt{{6 * time.Second, 1}, {time.Second, 2}}, false},
		{"idle alone", abi.Options{Idle: 10}, 0, 0, 0,
			[]tickAt{{9 * time.Second, 0}, {time.Second, 1}, {9 * time.Second, 1}, {time.Second, 2}}, false},
		{"idle with an interval", abi.Options{Idle: 10, Interval: 2}, 0, 0, 0,
			[]tickAt{{10 * time.Second, 1}, {2 * time.Second, 2}}, false},
		{"initial delay", abi.Options{InitialDelay: 5, Interval: 10}, 0, 0, 0,
			[]tickAt{{4 * time.Second, 0}, {time.Second, 1}, {9 * time.Second, 1}, {time.Second, 2}}, false},
		{"a failure's retry delay", abi.Options{Interval: 60}, 0, 3, 1,
			[]tickAt{{2 * time.Second, 1}, {time.Second, 2}, {59 * time.Second, 2}, {time.Second, 3}}, false},
		{"once", abi.Options{}, 0, 0, 1, nil, true},
		{"once, retried after a failure", abi.Options{}, 0, 3, 1,
			[]tickAt{{2 * time.Second, 1}, {time.Second, 2}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			woken := &wakes{}
			var mu sync.Mutex
			var late []time.Duration
			var f *fixture
			f = newFixtureWith(t, func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error) {
				f.clock.Step(tt.took)
				if tt.failFirst > 0 && f.mod.calls.Load() == 1 {
					d := tt.failFirst
					return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeTemporary, Message: "soon", Delay: &d}}, nil
				}
				return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}}, nil
			}, func(o *spawning.Options) {
				o.Wake = woken.wake
				o.ObserveTimer = func(_ string, lateness, _ time.Duration) {
					mu.Lock()
					defer mu.Unlock()
					late = append(late, lateness)
				}
			})
			h := handler(t, abi.HandlerSpec{ID: "tick", Kind: abi.KindTimer, Options: tt.opts})
			f.spawner.Adjust(context.Background(), key, body(), []*registry.Handler{h}, true)
			settleOrEnd := func(want int32) {
				t.Helper()
				if tt.once && want == tt.last() {
					waitFor(t, func() bool { return f.mod.calls.Load() == want && f.spawner.Running(key) == 0 }, "the timer's end")
					return
				}
				f.settle(t, want)
			}
			settleOrEnd(tt.first)
			for _, tick := range tt.ticks {
				f.clock.Step(tick.step)
				settleOrEnd(tick.calls)
			}
			if tt.once && (woken.count(key) != 1 || f.clock.Waiters() != 0) {
				t.Errorf("woken %d times, %d callbacks scheduled: a run-once timer did not end", woken.count(key), f.clock.Waiters())
			}
			mu.Lock()
			defer mu.Unlock()
			for i, l := range late {
				if l != 0 {
					t.Errorf("run %d started %s late", i+1, l)
				}
			}
		})
	}
}

// TestTimersHoldNoGoroutineWhileWaiting spawns many timers and counts the
// goroutines while they wait between runs: a small constant above the
// baseline, not one per timer.
func TestTimersHoldNoGoroutineWhileWaiting(t *testing.T) {
	const n = 200
	f := newFixtureWith(t, ok, func(o *spawning.Options) { o.Wake = (&wakes{}).wake })
	h := handler(t, abi.HandlerSpec{ID: "tick", Kind: abi.KindTimer, Options: abi.Options{Interval: 60}})
	base := runtime.NumGoroutine()
	for i := range n {
		k := key
		k.Name = fmt.Sprintf("ex-%d", i)
		f.spawner.Adjust(context.Background(), k, body(), []*registry.Handler{h}, true)
	}
	for round := int32(1); round <= 2; round++ {
		waitFor(t, func() bool { return f.mod.calls.Load() == round*n && f.clock.Waiters() == n },
			fmt.Sprintf("round %d of %d timers", round, n))
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > base+10 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if g := runtime.NumGoroutine(); g > base+10 {
			t.Fatalf("round %d: %d goroutines for %d waiting timers, baseline %d: want at most %d", round, g, n, base, base+10)
		}
		t.Logf("round %d: %d goroutines for %d waiting timers, baseline %d", round, runtime.NumGoroutine(), n, base)
		f.clock.Step(time.Minute)
	}
}

// timingCase is a row of TestTimerTiming.
type timingCase struct {
	name      string
	opts      abi.Options
	took      time.Duration // each run's time, on the fake clock
	failFirst float64       // the first run fails with this retry delay
	first     int32         // calls before any step
	ticks     []tickAt
	once      bool // the timer ends on its own
}

// last is the calls the row ends with.
func (tt timingCase) last() int32 {
	if len(tt.ticks) == 0 {
		return tt.first
	}
	return tt.ticks[len(tt.ticks)-1].calls
}
