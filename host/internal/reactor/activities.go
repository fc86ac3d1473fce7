package reactor

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// ActivityError says a startup activity failed for good: the operator does
// not start, as in Kopf.
type ActivityError struct {
	Handler string
	Module  string
	Err     error
}

func (e *ActivityError) Error() string {
	return fmt.Sprintf("startup handler '%s' of module %q failed: %v", e.Handler, e.Module, e.Err)
}

func (e *ActivityError) Unwrap() error { return e.Err }

// runActivities calls every module's handlers of one activity (startup or
// cleanup) in registration order, each until it is done: temporary errors
// are retried after their delay, arbitrary ones per the errors mode. A
// handler that fails for good is returned as an *ActivityError.
func (o *Operator) runActivities(ctx context.Context, kind abi.HandlerKind) error {
	o.mu.RLock()
	handlers := o.registry.Activities(kind)
	o.mu.RUnlock()
	for _, h := range handlers {
		if err := o.runActivity(ctx, h); err != nil {
			return err
		}
	}
	return nil
}

func (o *Operator) runActivity(ctx context.Context, h *registry.Handler) error {
	limits := persistence.LimitsFor(h.Spec, o.opts.Settings.Execution.DefaultBackoff)
	attrs := []any{"activity", string(h.Kind()), "handler", h.ID(), "module", h.Module}
	var rec persistence.Record
	for {
		now := time.Now()
		step, failed := persistence.Check(limits, rec, now)
		if !failed {
			req := &abi.Request{Handler: h.ID(), Kind: h.Kind(), Activity: h.Kind(), Retry: rec.Retries,
				Started: rec.Started, Runtime: rec.Runtime(now).Seconds(), Param: h.Spec.Options.Param}
			o.mu.RLock()
			mod := o.modules[h.Module] // a swap may have replaced it since
			o.mu.RUnlock()
			if mod == nil {
				return nil // unloaded meanwhile: nothing left to run
			}
			resp, err := mod.Handle(ctx, req, &guestHost{kube: o.kube, posting: o.opts.Settings.Posting})
			if err != nil && ctx.Err() != nil {
				return ctx.Err()
			}
			var out abi.Outcome
			if resp != nil {
				out = resp.Outcome
			}
			step = persistence.Classify(limits, rec, time.Now(), out, err)
		}
		rec = step.Record
		var ignored *persistence.IgnoredError
		switch {
		case step.Err == nil || errors.As(step.Err, &ignored):
			o.log.Info(fmt.Sprintf("Activity handler '%s' succeeded.", h.ID()), attrs...)
			return nil
		case step.Finished:
			o.log.Error(fmt.Sprintf("Activity handler '%s' failed permanently: %v", h.ID(), step.Err), attrs...)
			return &ActivityError{Handler: h.ID(), Module: h.Module, Err: step.Err}
		}
		o.log.Error(fmt.Sprintf("Activity handler '%s' failed and will try again in %s: %v", h.ID(), step.Delay, step.Err), attrs...)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(step.Delay):
		}
	}
}
