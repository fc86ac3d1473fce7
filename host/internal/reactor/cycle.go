package reactor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/spawning"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// process runs one processing cycle for the object behind key, on the latest
// state in the watch cache, and schedules the next one.
func (o *Operator) process(ctx context.Context, key objectKey) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	s := o.served[key.resource]
	if s == nil || s.watch == nil {
		return // no longer served after a swap of modules
	}
	if !o.indexesReady(s.res.ResourceRef) {
		o.hold(key, s.res.ResourceRef) // queued again once the indexes are complete
		return
	}
	obj, ok, complete := s.watch.Lookup(key.namespace, key.name)
	if !ok && !complete {
		// The watch is still listing (it started after a swap that re-added
		// the resource): the object may yet come, and is not taken for gone.
		o.awaitListing(ctx, key, s.watch)
		return
	}
	if !ok {
		events := o.mem.take(key) // gone: deleted and released
		if o.log.Enabled(ctx, slog.LevelDebug) && len(o.registry.ChangingIDs(s.res.ResourceRef)) > 0 {
			o.log.DebugContext(ctx, informational(registry.ReasonGone), goneAttrs(s.res, key, events)...)
		}
		if o.limiter.NumRequeues(key) > 0 {
			metrics.Unthrottled(key.resource)
		}
		o.queue.Forget(key)
		o.spawner.Forget(spawning.Key{Resource: key.resource, Namespace: key.namespace, Name: key.name})
		o.runEventHandlers(ctx, s.res, events, nil)
		o.exec.ForgetObject(s.res.ResourceRef, key.namespace, key.name)
		return
	}
	if o.foreign(key, obj) {
		return // sharding: another replica's object
	}
	if o.moving(key, execution.NewSubject(s.res.ResourceRef, s.res.Status, obj)) {
		return // rollouts: queued again when its old version's timers and daemons have stopped
	}
	now := time.Now()
	if wait := o.mem.stale(key, obj.GetResourceVersion(), now, o.opts.Settings.Persistence.ConsistencyTimeout); wait > 0 {
		o.queue.AddAfter(key, wait)
		return
	}
	if m := o.mem.get(key); len(m.unsent) > 0 {
		o.resend(ctx, s.res, key, obj, m)
		return
	}
	if o.log.Enabled(ctx, slog.LevelDebug) { // which version each cycle saw: a handler run twice can be traced in the debug log
		o.log.DebugContext(ctx, fmt.Sprintf("Processing the object at resourceVersion %s.", obj.GetResourceVersion()), execution.ObjectAttrs(obj)...)
	}
	events := o.mem.drainEvents(key)
	out, err := o.cycle(ctx, s.res, key, obj, events)
	reportCycle(ctx, key.resource, out, err, time.Since(now))
	switch {
	case errors.Is(err, execution.ErrGone):
		return
	case err != nil && ctx.Err() != nil:
		return // shutting down
	case err != nil:
		if errors.Is(err, kube.ErrTooLarge) {
			o.mem.with(key, func(m *memory) { m.tooLarge = true })
		}
		o.throttle(key, obj, err)
		return
	}
	if o.limiter.NumRequeues(key) > 0 {
		o.log.Info("Throttling is over. Switching back to normal operations.", execution.ObjectAttrs(obj)...)
		metrics.Unthrottled(key.resource)
		o.queue.Forget(key)
	}
	o.mem.with(key, func(m *memory) {
		if out.patched != "" {
			m.pending, m.since, m.released = out.patched, time.Now(), out.released
		}
	})
	if out.delay > 0 {
		o.queue.AddAfter(key, out.delay)
	} else if out.again {
		o.queue.Add(key)
	}
}

// resend sends the writes that a cycle kept when they failed (see
// memory.unsent) and processes the object again once the watch has seen
// them. A transient failure keeps them and throttles the object; any other
// failure (a conflict with a change made meanwhile, a refusal) drops them,
// and the object is processed afresh: its handlers run again, as in Kopf.
func (o *Operator) resend(ctx context.Context, res kube.Resource, key objectKey, obj *unstructured.Unstructured, kept memory) {
	subj := execution.NewSubject(res.ResourceRef, res.Status, obj)
	last, err := o.exec.Send(context.WithoutCancel(ctx), subj, kept.unsent)
	unsent := (*execution.Unsent)(nil)
	switch {
	case errors.Is(err, execution.ErrGone):
		o.mem.with(key, func(m *memory) { m.unsent = nil })
		return
	case errors.As(err, &unsent):
		o.mem.with(key, func(m *memory) { m.unsent = unsent.Requests })
		o.throttle(key, obj, err)
		return
	case err != nil:
		o.log.Warn(fmt.Sprintf("The outcome kept from a failed write could not be written (%v); processing the object afresh.", err), execution.ObjectAttrs(obj)...)
	}
	if o.limiter.NumRequeues(key) > 0 && err == nil {
		o.log.Info("Throttling is over. Switching back to normal operations.", execution.ObjectAttrs(obj)...)
		metrics.Unthrottled(key.resource)
		o.queue.Forget(key)
	}
	o.mem.with(key, func(m *memory) {
		m.unsent = nil
		if err == nil && kept.unsentHandledOnce {
			m.handledOnce = true
		}
		if last != nil {
			m.pending, m.since, m.released = last.ResourceVersion, time.Now(), kept.unsentReleases
		}
	})
	o.queue.Add(key)
}

// goneAttrs name an object that is gone: as its last watch event saw it,
// or from its key.
func goneAttrs(res kube.Resource, key objectKey, events []kube.Event) []any {
	if n := len(events); n > 0 && events[n-1].Object != nil {
		return execution.ObjectAttrs(events[n-1].Object)
	}
	return []any{slog.Group("object", "kind", res.Kind, "namespace", key.namespace, "name", key.name)}
}

// throttle delays the object after a framework error by Kopf's error
// delays (the queue's rate limiter); other objects go on.
func (o *Operator) throttle(key objectKey, obj *unstructured.Unstructured, err error) {
	metrics.Throttled(key.resource, o.limiter.NumRequeues(key) == 0)
	delay := o.limiter.When(key)
	o.log.Error(fmt.Sprintf("Throttling for %s due to an unexpected error: %v", delay, err), execution.ObjectAttrs(obj)...)
	o.queue.AddAfter(key, delay)
}

// outcome is what a cycle leads to: the resourceVersion of its last write
// ("" if none), and when to process the object again (a delay, or at once).
type outcome struct {
	patched  string
	released bool // the write released the object (memory.released)
	delay    time.Duration
	again    bool
}

// cycle detects the object's cause, runs the due handlers and writes the
// result in at most one request per endpoint.
func (o *Operator) cycle(ctx context.Context, res kube.Resource, key objectKey, obj *unstructured.Unstructured, events []kube.Event) (outcome, error) {
	body := obj.Object
	ref := res.ResourceRef
	// Event handlers see their events first, whatever happens next.
	patch := persistence.NewPatch(res.Status)
	o.runEventHandlers(ctx, res, events, patch)
	storage := o.storageFor(res)
	fresh := storage.Essence(body, o.registry.ExtraFields(ref))
	old, unknown, err := storage.FetchDiffBase(body, fresh)
	if err != nil {
		return outcome{}, fmt.Errorf("%w; remove the annotation to handle the object as new", err)
	}
	mem := o.mem.get(key)
	if mem.tooLarge {
		patch.DigestOnly()
	}
	cause := registry.DetectCause(registry.CauseInput{
		Body: body, Finalizer: storage.Finalizer(), Old: old, OldUnknown: unknown, New: fresh,
		Initial: mem.initial && !mem.handledOnce,
	})
	subj := execution.NewSubject(ref, res.Status, obj)
	subj.Cycle = nextCycleID()
	c := &cyc{o: o, ctx: ctx, res: res, key: key, subj: subj, cause: &cause, storage: storage, patch: patch}
	defer c.releaseShares()
	if cause.Reason != registry.ReasonFree && cause.Reason != registry.ReasonGone {
		if c.sel, err = o.registry.Select(ref, &cause, o.exec.When(ctx, subj, nil)); err != nil {
			return outcome{}, err
		}
		// With a canary, only the handlers of the object's version.
		c.sel.Spawned, c.sel.Due = o.declared(c.sel.Spawned, subj), o.declared(c.sel.Due, subj)
	}
	if err := c.run(); err != nil {
		return outcome{}, err
	}
	// The handlers have run: their outcome is written even if the host
	// began to stop meanwhile (a stop drains the cycles in flight, bounded
	// by settings.Process.ShutdownTimeout), or they would run again after
	// a restart.
	ctx = context.WithoutCancel(ctx)
	inStatus := storage == o.storage && c.storesDiffBaseInStatus()
	last, err := o.exec.Apply(ctx, subj, c.patch)
	if unsent := (*execution.Unsent)(nil); errors.As(err, &unsent) {
		o.mem.with(key, func(m *memory) {
			m.unsent, m.unsentReleases, m.unsentHandledOnce = unsent.Requests, c.released, c.handledOnce
		})
	}
	if err != nil {
		return outcome{}, err
	}
	if inStatus && last != nil && !hasStatusDiffBase(last) {
		if last, err = o.statusPrunes(ctx, res, subj, c.cause.New); err != nil {
			return outcome{}, err
		}
	} else {
		o.reportReduced(ctx, subj, c.patch)
	}
	if c.matched && c.delay <= 0 && !c.again {
		c.debug("Handling cycle is finished, waiting for new changes.")
	}
	var rv string
	if last != nil {
		rv = last.ResourceVersion
	}
	o.mem.with(key, func(m *memory) {
		if c.handledOnce {
			m.handledOnce = true
		}
	})
	return outcome{patched: rv, released: c.released, delay: c.delay, again: c.again}, nil
}

// cyc is the state of one processing cycle of one object.
type cyc struct {
	o       *Operator
	ctx     context.Context
	res     kube.Resource
	key     objectKey
	subj    *execution.Subject
	cause   *registry.Cause
	sel     registry.Selection // what the registry says of the object, asked once
	storage *persistence.Storage
	patch   *persistence.Patch

	delay       time.Duration
	again       bool // a handler is due again at once
	handledOnce bool
	running     int  // timers and daemons still running on a deleted object
	finished    int  // handlers that finished (succeeded or failed for good) in this cycle
	released    bool // the patch removes our finalizer from an object marked for deletion
	matched     bool // the changing cause was handled (Kopf's "matched": not stealth, no finalizer added)
	// deleteResults are the ids whose results this deletion cycle folded
	// into the patch (see dropLoneDeleteResults).
	deleteResults []string
	// held are the modules whose share of the workers the cycle holds;
	// skipped those it found at their share (shares.go), whose handlers
	// wait for the object's next cycle.
	held, skipped map[string]bool
}

func (c *cyc) spawnKey() spawning.Key {
	return spawning.Key{Resource: c.key.resource, Namespace: c.key.namespace, Name: c.key.name}
}

// spawn starts and stops the object's timers and daemons: those matching it
// run, the others stop, and all stop once it is marked for deletion.
func (c *cyc) spawn() error {
	if c.cause.Deleted() {
		c.running = c.o.spawner.Stop(c.spawnKey(), c.subj.Object)
		return nil
	}
	handlers := c.sel.Spawned
	if len(handlers) == 0 && c.o.spawner.Running(c.spawnKey()) == 0 {
		return nil
	}
	// Essential changes reset the timers' idle clock. They are told from
	// the essence this process saw last, not from the diff-base: objects
	// that only timers and daemons serve have none (stealth mode).
	essence, err := json.Marshal(c.cause.New)
	if err != nil {
		return err
	}
	var changed bool
	c.o.mem.with(c.key, func(m *memory) {
		changed = string(essence) != m.essence
		m.essence = string(essence)
	})
	c.o.spawner.Adjust(c.ctx, c.spawnKey(), c.subj.Object, handlers, changed)
	return nil
}

// run fills the cycle's patch: the finalizer, the handlers' outcomes and the
// end of the cause.
func (c *cyc) run() error {
	ref := c.res.ResourceRef
	if c.cause.Reason == registry.ReasonFree || c.cause.Reason == registry.ReasonGone {
		c.o.spawner.Forget(c.spawnKey())
		c.debug(informational(c.cause.Reason))
		c.matched = c.cause.Reason == registry.ReasonFree
		return nil
	}
	if err := c.spawn(); err != nil {
		return err
	}
	if acquiring := c.finalizer(); acquiring || !c.cause.Handling() {
		if !acquiring {
			c.debug(informational(c.cause.Reason)) // noop: the object has a diff-base, so it was handled
			c.matched = true
		}
		return nil
	}
	if !c.sel.Prematched {
		// Stealth mode: nothing of ours on objects no handler sees; only a
		// finalizer held for timers and daemons is released.
		if c.cause.Reason == abi.ReasonDelete && c.running == 0 {
			c.removeFinalizer()
		}
		return nil
	}
	c.inProgress()
	c.matched = true
	owned := c.o.registry.ChangingIDs(ref)
	state, err := c.storage.LoadState(c.cause.Body, owned)
	if err != nil {
		return err
	}
	due := c.sel.Due
	now := c.o.exec.Clock().Now()
	for purpose, n := range state.ForCause(c.patch, c.cause.Reason, registry.IDs(due), now) {
		c.o.log.Info(fmt.Sprintf("%s is superseded by %s: %d succeeded; %d failed; %d left to the moment.",
			title(purpose), c.cause.Reason, n.Success, n.Failure, n.Running), c.subj.Attrs()...)
	}
	if err := c.runHandlers(state, due, now); err != nil {
		return err
	}
	return c.conclude(state, owned)
}

// finalizer adds the finalizer when a handler needs it and removes it when
// none does any more; objects marked for deletion keep it until the delete
// handlers are done. It reports whether it adds the finalizer: the cycle
// then ends there, as Kopf's does, and the handlers run in the next one.
func (c *cyc) finalizer() (acquiring bool) {
	if c.cause.Deleted() {
		return false
	}
	if c.sel.RequiresFinalizer {
		acquiring = !c.storage.HasFinalizer(c.cause.Body)
		if acquiring {
			c.debug("Adding the finalizer, thus preventing the actual deletion.")
		}
		c.storage.AddFinalizer(c.patch, c.cause.Body)
	} else {
		if c.storage.HasFinalizer(c.cause.Body) {
			c.debug("Removing the finalizer, as there are no handlers requiring it.")
		}
		c.storage.RemoveFinalizer(c.patch, c.cause.Body)
	}
	return acquiring
}

// removeFinalizer releases an object marked for deletion.
func (c *cyc) removeFinalizer() {
	c.debug("Removing the finalizer, thus allowing the actual deletion.")
	c.storage.RemoveFinalizer(c.patch, c.cause.Body)
	c.released = true
}

// debug logs a line about the cycle's object at debug level (its
// attributes built only when the level is on: noop cycles are frequent).
func (c *cyc) debug(msg string) {
	if msg != "" && c.o.log.Enabled(c.ctx, slog.LevelDebug) {
		c.o.log.DebugContext(c.ctx, msg, c.subj.Attrs()...)
	}
}

// inProgress logs the cause on every cycle that handles it, as Kopf's
// "Creation is in progress: <body>" and, for a change of the essence,
// "Updating diff: <diff>" (debug level; the body and diff as JSON).
func (c *cyc) inProgress() {
	ctx := c.ctx
	if !c.o.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	body, err := json.Marshal(c.cause.Body)
	if err != nil {
		body = []byte(err.Error())
	}
	c.o.log.DebugContext(ctx, fmt.Sprintf("%s is in progress: %s", processing(c.cause.Reason), body), c.subj.Attrs()...)
	if len(c.cause.Diff) == 0 || c.cause.Old == nil || c.cause.New == nil {
		return
	}
	items, err := c.cause.Diff.ABI()
	if err != nil {
		return
	}
	if diff, err := json.Marshal(items); err == nil {
		c.o.log.DebugContext(ctx, fmt.Sprintf("%s diff: %s", processing(c.cause.Reason), diff), c.subj.Attrs()...)
	}
}

// informational is Kopf's line for a cause that calls no handler ("" for
// the others).
func informational(r abi.Reason) string {
	switch r {
	case registry.ReasonGone:
		return "Deleted, really deleted, and we are notified."
	case registry.ReasonFree:
		return "Deletion, but we are done with it, and we do not care."
	case registry.ReasonNoop:
		return "Something has changed, but we are not interested (the essence is the same)."
	}
	return ""
}

// conclude ends the cause when every due handler is done — progress purged,
// diff-base stored, or the finalizer released for a deletion — or stores
// the progress and the delay until the next handler is due.
func (c *cyc) conclude(state *persistence.State, owned []string) error {
	now := c.o.exec.Clock().Now()
	if !state.Done() {
		var due bool
		c.delay, due = state.Delay(now)
		c.again = due && c.delay <= 0
		if len(c.skipped) > 0 {
			// The skipped handlers are due now, but their modules queue the
			// object again when they free a worker: no sooner.
			c.delay, c.again = 0, false
		}
		return state.Store(c.patch)
	}
	// A deletion whose handlers finished in an earlier cycle (its records
	// kept while timers and daemons stopped) was reported then.
	if n := state.Counts(); n.Success+n.Failure > 0 && (c.finished > 0 || c.cause.Reason != abi.ReasonDelete) {
		c.o.log.Info(fmt.Sprintf("%s is processed: %d succeeded; %d failed.", processing(c.cause.Reason), n.Success, n.Failure),
			c.subj.Attrs()...)
	}
	c.handledOnce = true
	if c.cause.Reason == abi.ReasonDelete {
		return c.release(state, owned)
	}
	state.Purge(c.patch, owned)
	return c.storage.StoreDiffBase(c.patch, c.cause.Body, c.cause.New)
}

// release ends a deletion whose handlers are all done. Timers and daemons
// must stop before the object goes; they were asked to when the cycle
// began, and most have stopped by now. If one is still stopping, the
// finished records are kept on the object instead of purged: the spawner
// wakes the object when the last one stops, and that cycle (or one after a
// restart) finds every delete handler done and releases the object without
// calling them again.
func (c *cyc) release(state *persistence.State, owned []string) error {
	if c.o.spawner.Running(c.spawnKey()) > 0 {
		return state.Store(c.patch)
	}
	state.Purge(c.patch, owned)
	c.removeFinalizer()
	c.dropLoneDeleteResults()
	return nil
}
