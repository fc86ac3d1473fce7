package spawning

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// worker is one running timer or daemon of one object.
type worker struct {
	handler *registry.Handler
	// version is the role of the module's version the worker runs on,
	// chosen when it started (execution.Executor.Role): a canary's share
	// change stops the worker instead of moving it between versions.
	version string
	// hard ends the guest call (closing a daemon's instance).
	hard   context.Context
	cancel context.CancelFunc

	clock clock.Clock

	mu       sync.Mutex
	stopping chan struct{} // closed when the worker is asked to stop
	reason   string
	// state, pending and seq are a timer's between its runs (timer.go):
	// while it waits, no goroutine runs for it, only the clock's callback
	// (pending, armed as the seq-th wait) is scheduled.
	state   timerState
	pending clock.Timer
	seq     uint64
	// due and rec belong to whoever continues the timer (its state says
	// who): when its next run is due, and its handler's record.
	due time.Time
	rec persistence.Record
	// calling is set while a timer calls its handler (a stop then waits
	// for the call); exited is closed once the worker has ended and left
	// its object.
	calling atomic.Bool
	exited  chan struct{}
}

// requestStop asks the worker to stop. It reports true when the worker is
// a timer waiting between its runs: its wait is cancelled, and the caller
// ends the worker (Spawner.stop), as nothing else runs for it.
func (w *worker) requestStop(reason string) bool {
	w.mu.Lock()
	if w.reason == "" {
		w.reason = reason
		close(w.stopping)
	}
	pending := w.pending
	waiting := w.state == timerWaiting
	if waiting {
		w.state, w.pending = timerDone, nil
	}
	w.mu.Unlock()
	if !waiting {
		return false
	}
	pending.Stop() // a callback that fires anyway finds the timer done
	return true
}

func (w *worker) stopReason() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reason
}

func (w *worker) terminate() { w.cancel() }

// sleep waits d, or until the worker is asked to stop; it reports whether
// the whole time passed.
func (w *worker) sleep(d time.Duration) bool {
	if d <= 0 {
		return w.stopReason() == ""
	}
	t := w.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-w.stopping:
		return false
	}
}

// spawn starts a worker for handler h on object o; s.mu is held. A daemon
// gets a goroutine for its life; a timer one until it first waits
// (startTimer).
func (s *Spawner) spawn(ctx context.Context, o *object, h *registry.Handler) {
	w := &worker{handler: h, clock: s.clock, stopping: make(chan struct{}), exited: make(chan struct{})}
	if o.body != nil {
		w.version = s.exec.Role(h, execution.NewSubject(h.Resource, false, o.body))
	}
	// Not cancelled with the operator's run: at exit, Shutdown asks the
	// worker to stop first and terminates it only when it does not.
	w.hard, w.cancel = context.WithCancel(context.WithoutCancel(ctx))
	o.workers[h.ID()] = w
	s.wg.Add(1) // for the worker's life, goroutine or not: Shutdown waits for it
	if h.Kind() != abi.KindDaemon {
		go s.startTimer(o, w)
		return
	}
	go func() {
		defer s.wg.Done()
		forever := s.runDaemon(o, w)
		w.cancel() // over: its stop's poller ends before the object is woken
		s.finished(o, w, forever)
		close(w.exited)
	}()
}

// runDaemon is a daemon's life: it runs once and again only after a
// temporary error. It reports true when the daemon ended by itself (never
// spawned again in this process).
func (s *Spawner) runDaemon(o *object, w *worker) bool {
	slots := s.slot(w.handler.Module)
	select {
	case slots <- struct{}{}:
	default:
		s.opts.Logger.Warn(fmt.Sprintf("Daemon '%s' waits: module %q runs its maximum of %d daemons",
			w.handler.ID(), w.handler.Module, s.opts.MaxDaemons), o.attrs()...)
		select {
		case slots <- struct{}{}:
		case <-w.stopping:
			return false
		}
	}
	defer func() { <-slots }()
	go s.enforceStop(o, w)
	if !w.sleep(s.initialDelay(o, w)) {
		return false
	}
	var rec persistence.Record
	for {
		step := s.call(o, w, &rec, true)
		if w.stopReason() != "" {
			return false
		}
		if step.Finished || step.Err == nil {
			return true
		}
		if !w.sleep(step.Delay) {
			return false
		}
	}
}

// initialDelay is how long the worker waits before its first run: the
// handler's initial delay, or what its guest computes from the object
// (Kopf's callable initial_delay), asked once per worker. A delay the
// guest cannot compute is logged, and the worker starts at once.
func (s *Spawner) initialDelay(o *object, w *worker) time.Duration {
	opts := w.handler.Spec.Options
	if !opts.InitialDelayCallback {
		return seconds(opts.InitialDelay)
	}
	subj := execution.NewSubject(w.handler.Resource, s.opts.StatusSubresource(o.key.Resource), s.body(o))
	d, err := s.exec.InitialDelay(w.hard, w.handler, subj)
	if err != nil {
		s.opts.Logger.Error(fmt.Sprintf("Handler '%s' starts at once: %v", w.handler.ID(), err), o.attrs()...)
		return 0
	}
	return d
}

// enforceStop terminates a daemon that is asked to stop and does not:
// after its cancellation backoff and timeout its instance is closed.
// Without a cancellation timeout the daemon is polled for as long as it
// runs (pollStop).
func (s *Spawner) enforceStop(o *object, w *worker) {
	select {
	case <-w.stopping:
	case <-w.hard.Done():
		return
	}
	opts := w.handler.Spec.Options
	if opts.CancellationTimeout <= 0 {
		s.pollStop(o, w)
		return
	}
	t := s.clock.NewTimer(seconds(opts.CancellationBackoff) + seconds(opts.CancellationTimeout))
	defer t.Stop()
	select {
	case <-t.C():
		s.opts.Logger.Warn(fmt.Sprintf("Daemon '%s' did not exit in time; its instance is closed.", w.handler.ID()))
		w.terminate()
	case <-w.hard.Done():
	}
}

// pollStop is Kopf's cancellation_polling for a daemon asked to stop that
// has no cancellation timeout: after its cancellation backoff, every
// polling period until it exits, the host checks it and logs that it still
// runs (the object keeps its finalizer). The host learns of the exit at
// once, so the check only reports; it never ends the daemon.
func (s *Spawner) pollStop(o *object, w *worker) {
	opts := w.handler.Spec.Options
	every := cmp.Or(seconds(opts.CancellationPolling), s.opts.CancellationPolling, time.Minute)
	asked := s.clock.Now()
	t := s.clock.NewTimer(seconds(opts.CancellationBackoff) + every)
	defer t.Stop()
	for {
		select {
		case <-t.C():
		case <-w.hard.Done():
			return
		}
		if w.hard.Err() != nil {
			return // both were ready: the daemon is over, say nothing
		}
		s.opts.Logger.Info(fmt.Sprintf("Daemon '%s' is still running %s after it was asked to stop (%s); it has no cancellationTimeout, so it is waited for; the next check is in %s.",
			w.handler.ID(), s.clock.Since(asked).Round(time.Second), w.stopReason(), every), execution.ObjectAttrs(s.body(o))...)
		t.Reset(every)
	}
}

// call runs the handler once and applies its result and patch, through
// the execution layer.
func (s *Spawner) call(o *object, w *worker, rec *persistence.Record, dedicated bool) execution.Step {
	h := w.handler
	subj := execution.NewSubject(h.Resource, s.opts.StatusSubresource(o.key.Resource), s.body(o))
	in := execution.Input{Subject: subj, Record: *rec}
	host := &stopHost{Host: s.exec.Host(subj), w: w, clock: s.clock}
	r, err := s.exec.Call(w.hard, h, in, execution.CallOptions{Host: host, Dedicated: dedicated, Version: w.version})
	if err != nil {
		// Terminated, shutting down, or unloaded: this run is over.
		step := execution.Step{Err: err, Finished: true}
		s.exec.Report(w.hard, subj, h, step, cmp.Or(w.stopReason(), ReasonExiting))
		*rec = persistence.Record{}
		return step
	}
	step := r.Step
	*rec = step.Record
	if step.Finished {
		*rec = persistence.Record{}
	}
	s.exec.Report(w.hard, subj, h, step, w.stopReason())
	if r.Response != nil {
		p := persistence.NewPatch(subj.Status)
		s.exec.Fold(p, subj, h, r, true)
		// The worker's own context: a result is stored even while the
		// operator stops, unless the worker is terminated.
		if _, err := s.exec.Apply(w.hard, subj, p); err != nil && !errors.Is(err, execution.ErrGone) {
			s.opts.Logger.Error(fmt.Sprintf("Handler '%s': storing its outcome failed: %v", h.ID(), err), subj.Attrs()...)
		}
	}
	return step
}

// seconds converts the ABI's float seconds.
func seconds(s float64) time.Duration {
	if s <= 0 {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}
