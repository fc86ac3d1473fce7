package execution

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution/recording"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/rollout"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Module is what the executor calls: a loaded wasm module
// (*wasmrt.Module), or a fake in unit tests.
type Module interface {
	// Handle calls the module on a pooled instance.
	Handle(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error)
	// HandleDedicated calls the module on an instance of the call's own
	// (daemons), closed when ctx ends.
	HandleDedicated(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error)
}

// Cluster is what the executor asks of the API server: *kube.Client, or a
// fake in unit tests. Nil when offline: guests' requests and Events then
// answer "not available", and there is nothing to apply patches to.
type Cluster interface {
	Patch(ctx context.Context, ref abi.ResourceRef, namespace, name, subresource string, kind abi.PatchType, patch []byte) (*kube.Patched, error)
	PostEvent(ctx context.Context, about kube.ObjectRef, ev abi.EventRequest) error
	Do(ctx context.Context, req abi.KubeRequest) abi.KubeResponse
}

var _ Cluster = (*kube.Client)(nil)

// Options configure an [Executor].
type Options struct {
	// Modules returns the current version of a module by name (nil when it
	// is not loaded). Required.
	Modules func(name string) Module
	// Cluster sends patches and Events and serves the guests' Kubernetes
	// requests. Nil offline.
	Cluster Cluster
	// Settings are the host's settings: execution (backoff) and posting.
	Settings settings.Settings
	// Logger receives the reports. Default slog.Default().
	Logger *slog.Logger
	// Clock tells the time of calls and records, and waits; its AfterFunc
	// schedules the timers' runs (host/internal/engines/spawning). Default
	// the real clock.
	Clock clock.WithDelayedExecution
	// Route, when set, picks the version of a module that handles an
	// object, for modules with a canary (route.go). Nil: Modules.
	Route RouteFunc
	// Shadow, when set, returns a module's shadow version and its
	// counters (nil when it has none): the calls of its stable version
	// about objects are repeated on it and compared (shadow.go).
	Shadow func(name string) (Module, *rollout.ShadowCounters)
	// Recorder, when set, is given every handler call (kopf-wasm replay).
	// Default: a recorder of Settings.Recording.Path when it is set.
	Recorder *recording.Recorder
	// Limits returns a module's bounds (its request rate limit). Default:
	// none (offline, where no request reaches a cluster).
	Limits func(module string) settings.ModuleLimits
}

// Executor calls handlers; see the package documentation. It is safe for
// concurrent use.
type Executor struct {
	opts  Options
	log   *slog.Logger
	memos *Memos
	// indices serve the modules' indexes (nil: none, look-ups answer 501).
	indices Indices
	// opened is the recorder New opened from the settings, closed by
	// CloseRecorder.
	opened *recording.Recorder
	// rates are the modules' request rate limits (isolation.go).
	rates *rates
	// shadows bounds the shadow calls in flight
	// (settings.Rollouts.ShadowConcurrency); shadowing waits for them.
	shadows   chan struct{}
	shadowing sync.WaitGroup
}

// New returns an executor.
func New(opts Options) *Executor {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	var opened *recording.Recorder
	if opts.Recorder == nil && opts.Settings.Recording.Path != "" {
		r, err := recording.Open(opts.Settings.Recording.Path, opts.Settings.Recording.MaxBytes, opts.Logger)
		if err != nil {
			opts.Logger.Error(fmt.Sprintf("Nothing is recorded: %v", err))
		}
		opts.Recorder, opened = r, r
	}
	if opts.Limits == nil {
		opts.Limits = func(string) settings.ModuleLimits { return settings.ModuleLimits{} }
	}
	return &Executor{opts: opts, log: opts.Logger, memos: newMemos(), opened: opened,
		rates:   &rates{limits: opts.Limits, buckets: map[string]*bucket{}},
		shadows: make(chan struct{}, max(1, opts.Settings.Rollouts.ShadowConcurrency))}
}

// Clock is the executor's clock.
func (e *Executor) Clock() clock.WithDelayedExecution { return e.opts.Clock }

// Logger is the executor's logger.
func (e *Executor) Logger() *slog.Logger { return e.log }

// Limits resolves h's error options against the settings.
func (e *Executor) Limits(h *registry.Handler) Limits {
	return LimitsFor(h.Spec, e.opts.Settings.Execution.DefaultBackoff)
}

// Result is what one call of a handler came to.
type Result struct {
	// Step is the classified outcome with the handler's new record.
	Step Step
	// Request is what the handler was called with (nil when it was not
	// called: a limit was reached).
	Request *abi.Request
	// Response is the guest's response; nil when the handler was not
	// called or the call failed.
	Response *abi.Response
	// CallErr is the module's own failure (a trap, a timeout, bad output),
	// which the step counts as the handler's arbitrary error.
	CallErr error
	// Children are the sub-handlers the call registered, in registration
	// order (see ChildResult).
	Children []ChildResult
}

// CallOptions vary how [Executor.Call] calls.
type CallOptions struct {
	// Host serves the guest's host functions. Default [Executor.Host] of
	// the input's subject.
	Host wasmrt.Host
	// Dedicated runs the call on an instance of its own (daemons).
	Dedicated bool
	// Version is the role of the module's version the call is bound to
	// (a timer's or daemon's, [Executor.Role]); "": the object's version
	// now.
	Version string
}

// Call makes one attempt of h: it fails the handler without calling it
// when its timeout or retries are used up, and otherwise builds the
// request, calls the module and classifies the outcome against
// in.Record. The error is not the handler's failure (that is in the
// step) but a reason not to go on: ctx ended (shutting down), the object
// could not be encoded, or the module is no longer loaded (a
// *NotLoadedError: a swap removed it).
func (e *Executor) Call(ctx context.Context, h *registry.Handler, in Input, opts CallOptions) (Result, error) {
	limits := e.Limits(h)
	if in.Now.IsZero() {
		in.Now = e.opts.Clock.Now()
	}
	if step, failed := Check(limits, in.Record, in.Now); failed {
		return Result{Step: step}, nil
	}
	e.memoFor(h, &in)
	e.indicesFor(h.Module, &in)
	req, err := Request(h, in)
	if err != nil {
		return Result{}, err
	}
	v := e.version(h, in.Subject, opts.Version)
	mod := v.Module
	if mod == nil || !v.Declared {
		return Result{}, fmt.Errorf("handler '%s': %w", h.ID(), &NotLoadedError{Module: h.Module})
	}
	host := opts.Host
	if host == nil {
		host = e.Host(in.Subject)
	}
	host = e.throttled(h.Module, e.withIndices(h.Module, host))
	var rec *recording.Host
	if e.opts.Recorder != nil {
		rec = recording.Wrap(host)
		host = rec
	}
	var resp *abi.Response
	called := e.opts.Clock.Now()
	req.Deadline = e.deadline(ctx, called, opts.Dedicated)
	if opts.Dedicated {
		resp, err = mod.HandleDedicated(ctx, req, host)
	} else {
		resp, err = mod.Handle(ctx, req, host)
	}
	if err != nil && ctx.Err() != nil {
		return Result{}, ctx.Err() // shutting down: not the handler's fault
	}
	if rec != nil {
		e.record(h.Module, mod, req, resp, err, rec.Calls())
	}
	var out abi.Outcome
	if resp != nil {
		out = resp.Outcome
		e.keepMemo(h, in, resp)
	}
	if v.Role != "" {
		failed := err != nil || out.Status != abi.OutcomeSuccess
		v.Counters.Call(failed)
		metrics.RolloutCall(h.Module, v.Role, failed)
	}
	if v.Role != rollout.Canary && !opts.Dedicated {
		e.shadow(h, in.Subject, req, resp, err)
	}
	now := e.opts.Clock.Now()
	step := Classify(limits, in.Record, now, out, err)
	observe(h, step, now.Sub(called), err)
	e.countFailure(h.Module, err)
	var children []ChildResult
	if resp != nil && err == nil && h.Kind().IsChanging() && (len(resp.Subhandlers) > 0 || out.Status == abi.OutcomeChildren) {
		children, step = e.settleChildren(h, limits, in, resp, now, step)
	}
	return Result{Step: step, Request: req, Response: resp, CallErr: err, Children: children}, nil
}

// record gives a call to the recorder.
func (e *Executor) record(name string, mod Module, req *abi.Request, resp *abi.Response, err error, calls []recording.HostCall) {
	r := recording.Record{Module: name, Request: req, HostCalls: calls}
	if d, ok := mod.(interface{ Digest() string }); ok {
		r.Digest = d.Digest()
	}
	if err != nil {
		r.Error = err.Error()
	} else if resp != nil {
		out := resp.Outcome
		r.Outcome, r.Result, r.Patch = &out, resp.Result, resp.Patch
	}
	e.opts.Recorder.Add(r)
}

// Fold merges a call's patch into p, and its result into
// status.<handler-id> when the step delivers one and keep is set, and so
// the results of its sub-handlers into status.<parent/child>. Problems
// with either are logged; the rest of the cycle goes on.
func (e *Executor) Fold(p *persistence.Patch, subj *Subject, h *registry.Handler, r Result, keep bool) {
	if r.Response == nil || p == nil {
		return
	}
	if err := p.MergeHandlerPatch(h.ID(), r.Response.Patch); err != nil {
		e.log.Error(fmt.Sprintf("Handler '%s' returned a patch that cannot be applied: %v", h.ID(), err), e.attrs(subj, h)...)
	}
	if !keep {
		return
	}
	if r.Step.Deliver {
		e.addResult(p, subj, h, r.Response.Result)
	}
	for _, c := range r.Children {
		if c.Reported && c.Step.Deliver {
			e.addResult(p, subj, c.Handler, c.Result)
		}
	}
}

func (e *Executor) addResult(p *persistence.Patch, subj *Subject, h *registry.Handler, result []byte) {
	if err := p.AddResult(h.ID(), result); err != nil {
		e.log.Error(fmt.Sprintf("Handler '%s' returned a result that cannot be stored: %v", h.ID(), err), e.attrs(subj, h)...)
	}
}

// attrs are the log attributes of a call: the object (when there is one),
// the handler and its module.
func (e *Executor) attrs(subj *Subject, h *registry.Handler) []any {
	var out []any
	if subj != nil {
		out = subj.Attrs()
	}
	return append(out, "handler", h.ID(), "module", h.Module)
}

// deadline is when the host stops a call started at now: the wasm call
// timeout, or ctx's deadline when sooner (a review's timeout); a dedicated
// call (a daemon) has only ctx's.
func (e *Executor) deadline(ctx context.Context, now time.Time, dedicated bool) time.Time {
	var d time.Time
	if t := e.opts.Settings.Wasm.CallTimeout; t > 0 && !dedicated {
		d = now.Add(t)
	}
	if c, ok := ctx.Deadline(); ok && (d.IsZero() || c.Before(d)) {
		d = c
	}
	return d
}

// Replay calls mod with a recorded request as it was sent, but for its
// deadline (wasm.callTimeout from now), with host answering its host calls
// (kopf-wasm replay). The response is not classified: a replay compares it.
func (e *Executor) Replay(ctx context.Context, mod Module, req *abi.Request, host wasmrt.Host) (*abi.Response, error) {
	r := *req
	r.Deadline = e.deadline(ctx, e.opts.Clock.Now(), false)
	return mod.Handle(ctx, &r, host)
}

// CloseRecorder closes the file of the recorder the executor opened from
// its settings (recording.path); nil when there is none.
func (e *Executor) CloseRecorder() error {
	if e.opened == nil {
		return nil
	}
	return e.opened.Close()
}
