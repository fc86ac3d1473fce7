package spawning

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// worker is one running timer or daemon of one object.
type worker struct {
	handler *registry.Handler
	// hard ends the guest call (closing a daemon's instance).
	hard   context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	stopping chan struct{} // closed when the worker is asked to stop
	reason   string
}

func (w *worker) requestStop(reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reason == "" {
		w.reason = reason
		close(w.stopping)
	}
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
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.stopping:
		return false
	}
}

// spawn starts a worker for handler h on object o; s.mu is held.
func (s *Spawner) spawn(ctx context.Context, o *object, h *registry.Handler) {
	w := &worker{handler: h, stopping: make(chan struct{})}
	// Not cancelled with the operator's run: at exit, Shutdown asks the
	// worker to stop first and terminates it only when it does not.
	w.hard, w.cancel = context.WithCancel(context.WithoutCancel(ctx))
	o.workers[h.ID()] = w
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer w.cancel()
		var forever bool
		if h.Kind() == abi.KindDaemon {
			forever = s.runDaemon(o, w)
		} else {
			forever = s.runTimer(o, w)
		}
		s.finished(o, w, forever)
	}()
}

// runTimer is a timer's loop; it reports true when the timer is done for
// good (it runs once).
func (s *Spawner) runTimer(o *object, w *worker) bool {
	opts := w.handler.Spec.Options
	interval, idle := seconds(opts.Interval), seconds(opts.Idle)
	due := time.Now().Add(seconds(opts.InitialDelay)) // when the next run is due
	if !w.sleep(seconds(opts.InitialDelay)) {
		return false
	}
	var rec persistence.Record
	for {
		for idle > 0 {
			left := idle - s.idleFor(o)
			if left <= 0 {
				break
			}
			due = time.Now().Add(left)
			if !w.sleep(left) {
				return false
			}
		}
		started := time.Now()
		step := s.call(o, w, &rec, false)
		if s.opts.ObserveTimer != nil {
			s.opts.ObserveTimer(w.handler.ID(), started.Sub(due), time.Since(started))
		}
		if interval == 0 && idle == 0 && (step.Err == nil || step.Finished) {
			return true // a timer without interval or idle runs once
		}
		next := interval
		if interval == 0 {
			next = idle // idle alone: at most once per idle period
		}
		if opts.Sharp && interval > 0 {
			next = interval - time.Since(started)%interval
		}
		if step.Err != nil && !step.Finished {
			next = step.Delay
		}
		due = time.Now().Add(next)
		if !w.sleep(next) {
			return false
		}
	}
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
			w.handler.ID(), w.handler.Module, s.opts.MaxDaemons), objectAttrs(o.key)...)
		select {
		case slots <- struct{}{}:
		case <-w.stopping:
			return false
		}
	}
	defer func() { <-slots }()
	go s.enforceStop(w)
	if !w.sleep(seconds(w.handler.Spec.Options.InitialDelay)) {
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

// enforceStop terminates a daemon that is asked to stop and does not:
// after its cancellation backoff and timeout its instance is closed.
// Without a cancellation timeout it waits for as long as the daemon runs.
func (s *Spawner) enforceStop(w *worker) {
	select {
	case <-w.stopping:
	case <-w.hard.Done():
		return
	}
	opts := w.handler.Spec.Options
	if opts.CancellationTimeout <= 0 {
		return
	}
	t := time.NewTimer(seconds(opts.CancellationBackoff) + seconds(opts.CancellationTimeout))
	defer t.Stop()
	select {
	case <-t.C:
		s.opts.Logger.Warn(fmt.Sprintf("Daemon '%s' did not exit in time; its instance is closed.", w.handler.ID()))
		w.terminate()
	case <-w.hard.Done():
	}
}

// call runs the handler once and applies its result and patch.
func (s *Spawner) call(o *object, w *worker, rec *persistence.Record, dedicated bool) persistence.Step {
	h := w.handler
	body := s.body(o)
	limits := persistence.LimitsFor(h.Spec, s.opts.DefaultBackoff)
	now := time.Now()
	req, err := request(h, body, *rec, now)
	if err != nil {
		return persistence.Step{Err: err, Finished: true}
	}
	host := &stopHost{Host: s.opts.Host(body), w: w}
	module := s.module(h.Module)
	if module == nil {
		return persistence.Step{Err: fmt.Errorf("module %q is not loaded", h.Module), Finished: true}
	}
	var resp *abi.Response
	if dedicated {
		resp, err = module.HandleDedicated(w.hard, req, host)
	} else {
		resp, err = module.Handle(w.hard, req, host)
	}
	var out abi.Outcome
	if resp != nil {
		out = resp.Outcome
	}
	step := persistence.Classify(limits, *rec, time.Now(), out, err)
	*rec = step.Record
	if step.Finished {
		*rec = persistence.Record{}
	}
	s.report(o, h, step, w.stopReason())
	if resp != nil {
		s.apply(o, h, resp, step.Deliver)
	}
	return step
}

// report logs a run's outcome; failures of a stopping daemon are expected.
func (s *Spawner) report(o *object, h *registry.Handler, step persistence.Step, stopping string) {
	attrs := append(objectAttrs(o.key), "handler", h.ID(), "module", h.Module)
	var ignored *persistence.IgnoredError
	switch {
	case step.Err == nil || errors.As(step.Err, &ignored):
		s.opts.Logger.Debug(fmt.Sprintf("Handler '%s' succeeded.", h.ID()), attrs...)
	case stopping != "":
		s.opts.Logger.Info(fmt.Sprintf("Handler '%s' stopped (%s): %v", h.ID(), stopping, step.Err), attrs...)
	default:
		s.opts.Logger.Error(fmt.Sprintf("Handler '%s' failed: %v", h.ID(), step.Err), attrs...)
	}
}

// apply sends a run's result and patch, one request per endpoint.
func (s *Spawner) apply(o *object, h *registry.Handler, resp *abi.Response, deliver bool) {
	body := s.body(o)
	p := persistence.NewPatch(s.opts.StatusSubresource(o.key.Resource))
	if err := p.MergeHandlerPatch(h.ID(), resp.Patch); err != nil {
		s.opts.Logger.Error(fmt.Sprintf("Handler '%s' returned a patch that cannot be applied: %v", h.ID(), err), objectAttrs(o.key)...)
	}
	if deliver {
		if err := p.AddResult(h.ID(), resp.Result); err != nil {
			s.opts.Logger.Error(fmt.Sprintf("Handler '%s' returned a result that cannot be stored: %v", h.ID(), err), objectAttrs(o.key)...)
		}
	}
	p.Minimize(body.Object)
	reqs, err := p.Requests()
	if err != nil || len(reqs) == 0 {
		return
	}
	ref := resourceRef(h, body)
	for _, r := range reqs {
		if _, err := s.opts.Kube.Patch(context.Background(), ref, o.key.Namespace, o.key.Name, r.Subresource, r.Type, r.Data); err != nil {
			s.opts.Logger.Error(fmt.Sprintf("Handler '%s': storing its outcome failed: %v", h.ID(), err), objectAttrs(o.key)...)
			return
		}
	}
}

func request(h *registry.Handler, body *unstructured.Unstructured, rec persistence.Record, now time.Time) (*abi.Request, error) {
	raw, err := json.Marshal(body.Object)
	if err != nil {
		return nil, fmt.Errorf("encode the object: %w", err)
	}
	ref := resourceRef(h, body)
	return &abi.Request{Handler: h.ID(), Kind: h.Kind(), Resource: &ref, Body: raw,
		Name: body.GetName(), Namespace: body.GetNamespace(), UID: string(body.GetUID()),
		Retry: rec.Retries, Started: rec.Started, Runtime: rec.Runtime(now).Seconds(), Param: h.Spec.Options.Param}, nil
}

func resourceRef(h *registry.Handler, body *unstructured.Unstructured) abi.ResourceRef {
	ref := h.Resource
	ref.Kind = body.GetKind()
	return ref
}

func objectAttrs(k Key) []any {
	return []any{"resource", k.Resource, "namespace", k.Namespace, "name", k.Name}
}

// seconds converts the ABI's float seconds.
func seconds(s float64) time.Duration {
	if s <= 0 {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}
