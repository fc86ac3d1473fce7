package reactor

import (
	"context"
	"errors"
	"fmt"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
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
	var rec persistence.Record
	for {
		r, err := o.exec.Call(ctx, h, execution.Input{Record: rec}, execution.CallOptions{})
		var gone *execution.NotLoadedError
		switch {
		case errors.As(err, &gone):
			return nil // unloaded meanwhile: nothing left to run
		case err != nil:
			return err
		}
		step := r.Step
		rec = step.Record
		o.exec.Report(ctx, nil, h, step, "")
		var ignored *execution.IgnoredError
		switch {
		case step.Err == nil || errors.As(step.Err, &ignored):
			return nil
		case step.Finished:
			return &ActivityError{Handler: h.ID(), Module: h.Module, Err: step.Err}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-o.exec.Clock().After(step.Delay):
		}
	}
}
