package spawning

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"k8s.io/utils/clock"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/gate"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Key names one object of one resource.
type Key struct {
	Resource, Namespace, Name string
}

// Reasons for stopping, passed to the guest in abi.SleepResponse.Reason.
const (
	ReasonDeleted         = "deleted"
	ReasonFiltersMismatch = "filters-mismatch"
	ReasonExiting         = "exiting"
	ReasonReloading       = "reloading"
	// ReasonPausing: the host pauses (peering, leader election; Kopf's
	// OPERATOR_PAUSING); the worker starts again when it resumes.
	ReasonPausing = "pausing"
)

// Options configure a [Spawner].
type Options struct {
	// Exec calls the handlers, applies their results and patches and
	// reports them; its clock times the timers. Required.
	Exec *execution.Executor
	// Modules are the names of the loaded modules (each gets its daemon
	// slots).
	Modules []string
	// Wake is called when the last worker of an object stopped, so the
	// reactor can release its finalizer.
	Wake func(Key)
	// StatusSubresource says whether results go to /status.
	StatusSubresource func(resource string) bool
	// MaxDaemons caps the daemons running at once per module
	// (settings.Execution.MaxDaemons).
	MaxDaemons int
	// CancellationPolling is how often a daemon that does not exit when
	// asked, and has no cancellation timeout, is checked and reported
	// when its handler sets no polling
	// (settings.Execution.CancellationPolling). Default one minute.
	CancellationPolling time.Duration
	// TimerStopWait bounds how long [Spawner.Stop] waits for the object's
	// timers that are between a run and their next wait to exit (those
	// already waiting end at once; settings.Execution.TimerStopWait).
	// 0: no wait.
	TimerStopWait time.Duration
	// Logger receives the workers' own logs. Default slog.Default().
	Logger *slog.Logger
	// ObserveTimer, when set, is called after each timer run with how late
	// it started (its start minus when it was due: the end of its initial
	// delay, idle wait or interval) and how long the run took (the call,
	// including the wait for a pooled instance, and storing its outcome).
	// For benchmarks and metrics: it is called from the timers' goroutines
	// and must be quick.
	ObserveTimer func(handlerID string, lateness, took time.Duration)
	// Gate brackets every timer run (gate.Gate.Enter): a timer does not
	// run while the host is paused. Nil: never paused.
	Gate *gate.Gate
}

// Spawner runs timers and daemons.
type Spawner struct {
	opts  Options
	exec  *execution.Executor
	clock clock.WithDelayedExecution
	slots map[string]chan struct{} // per module: the daemon cap

	mu      sync.Mutex
	objects map[Key]*object
	paused  bool // between Pause and Resume: nothing is spawned
	// wakes are the objects whose last worker ended while s.mu was held;
	// unlock wakes them (Options.Wake) once it is released.
	wakes []Key
	wg    sync.WaitGroup // the workers alive, with a goroutine or not
}

// object is one object's live body and workers.
type object struct {
	key     Key
	body    *unstructured.Unstructured
	changed time.Time          // the last essential change, for idle
	workers map[string]*worker // by handler id
	done    map[string]string  // daemons that finished, with their module: never again in this process
}

// attrs are the log attributes naming the object (the execution layer's
// scheme, from the live body).
func (o *object) attrs() []any {
	if o.body == nil {
		return []any{slog.Group("object", "namespace", o.key.Namespace, "name", o.key.Name)}
	}
	return execution.ObjectAttrs(o.body)
}

// New returns a spawner.
func New(opts Options) *Spawner {
	if opts.MaxDaemons <= 0 {
		opts.MaxDaemons = settings.Default().Execution.MaxDaemons
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.StatusSubresource == nil {
		opts.StatusSubresource = func(string) bool { return false }
	}
	s := &Spawner{opts: opts, exec: opts.Exec, clock: opts.Exec.Clock(), slots: map[string]chan struct{}{}, objects: map[Key]*object{}}
	for _, name := range opts.Modules {
		s.slots[name] = make(chan struct{}, opts.MaxDaemons)
	}
	return s
}

// Adjust brings the object's workers in line with the handlers that match
// it now: it starts the missing ones and stops (filters-mismatch) those no
// longer listed. body is the object's latest state; changed says whether
// this state is an essential change (creation included), which resets the
// timers' idle clock.
func (s *Spawner) Adjust(ctx context.Context, key Key, body *unstructured.Unstructured, handlers []*registry.Handler, changed bool) {
	s.mu.Lock()
	defer s.unlock()
	o := s.objects[key]
	if o == nil {
		if len(handlers) == 0 {
			return
		}
		o = &object{key: key, workers: map[string]*worker{}, done: map[string]string{}, changed: s.clock.Now()}
		s.objects[key] = o
	}
	o.body = body
	if changed {
		o.changed = s.clock.Now()
	}
	want := map[string]bool{}
	for _, h := range handlers {
		want[h.ID()] = true
		if _, finished := o.done[h.ID()]; o.workers[h.ID()] == nil && !finished && !s.paused {
			s.spawn(ctx, o, h)
		}
	}
	for id, w := range o.workers {
		if !want[id] {
			s.stop(o, w, ReasonFiltersMismatch)
		}
	}
}

// Stop asks every worker of the object to stop (the object is marked for
// deletion) and returns how many are still running. Timers waiting
// between their runs end at once.
func (s *Spawner) Stop(key Key, body *unstructured.Unstructured) int {
	s.mu.Lock()
	o := s.objects[key]
	if o == nil {
		s.mu.Unlock()
		return 0
	}
	o.body = body
	var idle []chan struct{}
	for id, w := range o.workers {
		s.stop(o, w, ReasonDeleted)
		if _, running := o.workers[id]; running && w.handler.Kind() == abi.KindTimer && !w.calling.Load() {
			idle = append(idle, w.exited)
		}
	}
	s.unlock()
	s.awaitExits(idle)
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(o.workers)
}

// awaitExits waits, at most Options.TimerStopWait in all, until the
// workers whose exited channels these are have exited: timers about to
// wait (neither waiting nor in a call: asking their initial delay,
// storing an outcome) exit as soon as they see the stop, so the
// deletion's cycle can release the object itself.
func (s *Spawner) awaitExits(exited []chan struct{}) {
	if len(exited) == 0 || s.opts.TimerStopWait <= 0 {
		return
	}
	bound := s.clock.NewTimer(s.opts.TimerStopWait)
	defer bound.Stop()
	for _, ch := range exited {
		select {
		case <-ch:
		case <-bound.C():
			return
		}
	}
}

// Pause stops every worker with the reason "pausing" (the host pauses:
// peering, leader election) and spawns none until [Spawner.Resume]. It
// does not wait: the workers stop as they do for any other reason.
func (s *Spawner) Pause() {
	s.mu.Lock()
	defer s.unlock()
	s.paused = true
	for _, o := range s.objects {
		for _, w := range o.workers {
			s.stop(o, w, ReasonPausing)
		}
	}
}

// Resume lets [Spawner.Adjust] spawn again; the objects' next cycles
// start their timers and daemons.
func (s *Spawner) Resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = false
}

// Release stops every worker of one object with the reason "pausing"
// (another replica takes the object: sharding) and forgets the object once
// they have stopped, so that a later [Spawner.Adjust] starts afresh. It
// returns how many are still running; [Spawner.Running] tells when none is.
func (s *Spawner) Release(key Key) int {
	s.mu.Lock()
	defer s.unlock()
	o := s.objects[key]
	if o == nil {
		return 0
	}
	for _, w := range o.workers {
		s.stop(o, w, ReasonPausing)
	}
	o.done = nil
	if len(o.workers) == 0 {
		delete(s.objects, key)
	}
	return len(o.workers)
}

// Rebind stops, with the reason "reloading", the object's workers whose
// version keep no longer accepts (a module's canary share changed, or its
// canary came or went: host/internal/rollout), and returns how many such
// workers are still running. The reactor processes the object only once
// none is, so that two versions never handle it at once; the last one to
// stop wakes the object (Options.Wake) and its next cycle starts the
// workers on the version that handles it now.
func (s *Spawner) Rebind(key Key, keep func(h *registry.Handler, version string) bool) int {
	s.mu.Lock()
	defer s.unlock()
	o := s.objects[key]
	if o == nil {
		return 0
	}
	n := 0
	for id, w := range o.workers {
		if keep(w.handler, w.version) {
			continue
		}
		s.stop(o, w, ReasonReloading)
		if _, running := o.workers[id]; running {
			n++
		}
	}
	return n
}

// Keys lists the objects that have workers (running or stopping).
func (s *Spawner) Keys() []Key {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]Key, 0, len(s.objects))
	for key := range s.objects {
		keys = append(keys, key)
	}
	return keys
}

// Running tells how many workers of the object are running.
func (s *Spawner) Running(key Key) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.objects[key]; o != nil {
		return len(o.workers)
	}
	return 0
}

// Forget stops every worker of an object that is gone and drops it.
func (s *Spawner) Forget(key Key) {
	s.mu.Lock()
	defer s.unlock()
	o := s.objects[key]
	if o == nil {
		return
	}
	for _, w := range o.workers {
		s.stop(o, w, ReasonDeleted)
	}
	o.done = nil
	if len(o.workers) == 0 {
		delete(s.objects, key)
	}
}

// Shutdown asks every worker to stop (exiting) and waits until they have,
// or until ctx ends; then the stragglers are terminated.
func (s *Spawner) Shutdown(ctx context.Context) {
	s.mu.Lock()
	for _, o := range s.objects {
		for _, w := range o.workers {
			s.stop(o, w, ReasonExiting)
		}
	}
	s.unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.mu.Lock()
		for _, o := range s.objects {
			for _, w := range o.workers {
				w.terminate()
			}
		}
		s.mu.Unlock()
		<-done
	}
}

// body returns the object's live body.
func (s *Spawner) body(o *object) *unstructured.Unstructured {
	s.mu.Lock()
	defer s.mu.Unlock()
	return o.body
}

// idleFor tells how long the object has had no essential change.
func (s *Spawner) idleFor(o *object) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock.Since(o.changed)
}

// finished removes a worker that ended; a daemon that ended by itself is
// not spawned again in this process.
func (s *Spawner) finished(o *object, w *worker, forever bool) {
	s.mu.Lock()
	s.finishedLocked(o, w, forever)
	s.unlock()
}

// finishedLocked is finished with s.mu held: the object is woken when
// s.mu is released (unlock).
func (s *Spawner) finishedLocked(o *object, w *worker, forever bool) {
	if o.workers[w.handler.ID()] == w {
		delete(o.workers, w.handler.ID())
	}
	if forever && o.done != nil {
		o.done[w.handler.ID()] = w.handler.Module
	}
	if len(o.workers) == 0 && o.done == nil { // forgotten: the object is gone
		delete(s.objects, o.key)
	}
	// The object's next cycle releases its finalizer (no workers left) or
	// restarts a worker that stopped for a reload.
	s.wakes = append(s.wakes, o.key)
}

// unlock releases s.mu, then wakes the objects whose workers ended while
// it was held (Options.Wake is called without the spawner's lock).
func (s *Spawner) unlock() {
	wakes := s.wakes
	s.wakes = nil
	s.mu.Unlock()
	if s.opts.Wake == nil {
		return
	}
	for _, key := range wakes {
		s.opts.Wake(key)
	}
}

// Reload switches to a new set of modules (by name): workers of the
// modules named in changed stop (reloading) and start again on the new
// version in their objects' next cycles; their daemons that ended for good
// may run again.
func (s *Spawner) Reload(modules []string, changed []string) {
	s.mu.Lock()
	defer s.unlock()
	for _, name := range modules {
		if s.slots[name] == nil {
			s.slots[name] = make(chan struct{}, s.opts.MaxDaemons)
		}
	}
	reloaded := map[string]bool{}
	for _, name := range changed {
		reloaded[name] = true
	}
	for _, o := range s.objects {
		for _, w := range o.workers {
			if reloaded[w.handler.Module] {
				s.stop(o, w, ReasonReloading)
			}
		}
		for id, module := range o.done {
			if reloaded[module] {
				delete(o.done, id) // a new version may run it again
			}
		}
	}
}

// slot returns a module's daemon slots.
func (s *Spawner) slot(name string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.slots[name] == nil {
		s.slots[name] = make(chan struct{}, s.opts.MaxDaemons)
	}
	return s.slots[name]
}
