package spawning

import (
	"time"
)

// timerState is where a timer is between its runs; worker.mu guards it.
// Exactly one side ends a timer: its own goroutine when it is busy, the
// stopper (worker.requestStop) when it waits, the clock's callback never.
type timerState int

const (
	// timerBusy: a goroutine continues the timer (asks its initial delay,
	// checks its idleness, runs its handler and stores the outcome) and
	// ends it when it is asked to stop.
	timerBusy timerState = iota
	// timerWaiting: nothing runs; the clock's callback (worker.pending)
	// continues the timer unless a stop comes first and ends it.
	timerWaiting
	// timerDone: the timer has ended, or is ending.
	timerDone
)

// startTimer begins a timer on its own goroutine, which ends when the
// timer first waits: it asks the initial delay (the guest may compute it)
// and waits it.
func (s *Spawner) startTimer(o *object, w *worker) {
	delay := s.initialDelay(o, w)
	w.due = s.clock.Now().Add(delay)
	s.runTimer(o, w, delay)
}

// runTimer continues a timer after it waited d: the caller's goroutine
// runs the timer while nothing is left to wait, and returns when the timer
// waits (the clock's callback continues it then: wake) or has ended.
func (s *Spawner) runTimer(o *object, w *worker, d time.Duration) {
	for {
		if !s.park(o, w, d) {
			return
		}
		next, again, forever := s.tick(o, w)
		if !again {
			s.end(o, w, forever)
			return
		}
		d = next
	}
}

// park makes the timer wait d without a goroutine: it schedules wake on
// the clock and reports false. It reports true when d is not positive and
// the timer goes on at once; when the timer is asked to stop it ends it
// and reports false.
func (s *Spawner) park(o *object, w *worker, d time.Duration) bool {
	w.mu.Lock()
	if w.reason != "" {
		w.state = timerDone
		w.mu.Unlock()
		s.end(o, w, false)
		return false
	}
	if d <= 0 {
		w.mu.Unlock()
		return true
	}
	w.state = timerWaiting
	w.seq++
	seq := w.seq
	// The fake clock calls back with its lock held: the callback only
	// starts the goroutine that continues the timer.
	w.pending = s.clock.AfterFunc(d, func() { go s.wake(o, w, seq) })
	w.mu.Unlock()
	return false
}

// wake continues a timer whose seq-th wait has passed, unless a stop
// ended it meanwhile.
func (s *Spawner) wake(o *object, w *worker, seq uint64) {
	w.mu.Lock()
	if w.state != timerWaiting || w.seq != seq {
		w.mu.Unlock()
		return
	}
	w.state, w.pending = timerBusy, nil
	w.mu.Unlock()
	s.runTimer(o, w, 0)
}

// tick is one step of a timer whose wait has passed: with idle, while the
// object has had an essential change within idle, it only tells how long
// to wait still; else it runs the handler through the gate, applies its
// result and tells how long to wait until the next run. again is false
// when the timer ends: the gate is closed (paused: Pause stops this worker
// too), or the timer runs once and is done for good (forever).
func (s *Spawner) tick(o *object, w *worker) (next time.Duration, again, forever bool) {
	opts := w.handler.Spec.Options
	interval, idle := seconds(opts.Interval), seconds(opts.Idle)
	if idle > 0 {
		if left := idle - s.idleFor(o); left > 0 {
			w.due = s.clock.Now().Add(left)
			return left, true, false
		}
	}
	if !s.opts.Gate.Enter() {
		return 0, false, false
	}
	started := s.clock.Now()
	w.calling.Store(true)
	step := s.call(o, w, &w.rec, false)
	w.calling.Store(false)
	s.opts.Gate.Leave()
	if s.opts.ObserveTimer != nil {
		s.opts.ObserveTimer(w.handler.ID(), started.Sub(w.due), s.clock.Since(started))
	}
	if interval == 0 && idle == 0 && (step.Err == nil || step.Finished) {
		return 0, false, true // a timer without interval or idle runs once
	}
	next = interval
	if interval == 0 {
		next = idle // idle alone: at most once per idle period
	}
	if opts.Sharp && interval > 0 {
		next = interval - s.clock.Since(started)%interval
	}
	if step.Err != nil && !step.Finished {
		next = step.Delay
	}
	w.due = s.clock.Now().Add(next)
	return next, true, false
}

// end ends a worker from its own goroutine: it leaves its object (waking
// it), and Shutdown stops waiting for it.
func (s *Spawner) end(o *object, w *worker, forever bool) {
	s.finished(o, w, forever)
	close(w.exited)
	w.cancel()
	s.wg.Done()
}

// stop asks a worker to stop; s.mu is held. A timer waiting between its
// runs ends here and now: it leaves its object before stop returns, and
// the object is woken once s.mu is released (Spawner.unlock).
func (s *Spawner) stop(o *object, w *worker, reason string) {
	if !w.requestStop(reason) {
		return
	}
	s.finishedLocked(o, w, false)
	close(w.exited)
	w.cancel()
	s.wg.Done()
}
