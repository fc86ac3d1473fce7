package execution

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// When returns the callback-filter evaluator of one processing cycle of
// subj: each handler's callback runs in its guest at most once, however
// many of the cycle's questions (prematch, due, finalizer, timers and
// daemons) ask for it, on the subject encoded once. A cycle's answers do not
// change within it: the body is the same for all of them. A nil memo means
// each handler's module's memo of the object (see [Memos]).
func (e *Executor) When(ctx context.Context, subj *Subject, memo json.RawMessage) registry.WhenFunc {
	var mu sync.Mutex
	seen := map[*registry.Handler]bool{}
	return func(h *registry.Handler, cause *registry.Cause) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if ok, found := seen[h]; found {
			return ok, nil
		}
		ok, err := e.when(ctx, subj, memo, h, cause)
		if err != nil {
			return false, err
		}
		seen[h] = ok
		return ok, nil
	}
}

func (e *Executor) when(ctx context.Context, subj *Subject, memo json.RawMessage, h *registry.Handler, cause *registry.Cause) (bool, error) {
	return e.whenIn(ctx, h, Input{Subject: subj, Cause: cause, Memo: memo})
}

// AdmissionWhen is [Executor.When] for webhook handlers: their callback
// filters see the admission review of in (operation, dry run, user, old
// object), as Kopf passes the webhook's kwargs to when=.
func (e *Executor) AdmissionWhen(ctx context.Context, in Input) registry.WhenFunc {
	var mu sync.Mutex
	seen := map[*registry.Handler]bool{}
	return func(h *registry.Handler, _ *registry.Cause) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		if ok, found := seen[h]; found {
			return ok, nil
		}
		ok, err := e.whenIn(ctx, h, in)
		if err != nil {
			return false, err
		}
		seen[h] = ok
		return ok, nil
	}
}

// whenIn asks h's guest whether its callback filter passes for in.
func (e *Executor) whenIn(ctx context.Context, h *registry.Handler, in Input) (bool, error) {
	in.Filter, in.Now = true, e.opts.Clock.Now()
	e.memoFor(h, &in)
	e.indicesFor(h.Module, &in)
	req, err := Request(h, in)
	if err != nil {
		return false, err
	}
	v := e.version(h, in.Subject, "")
	if !v.Declared {
		return false, nil // the object's version has no such handler
	}
	mod := v.Module
	if mod == nil {
		return false, fmt.Errorf("callback filter of handler '%s': module %q is not loaded", h.ID(), h.Module)
	}
	resp, err := mod.Handle(ctx, req, nil)
	if err != nil {
		return false, fmt.Errorf("callback filter of handler '%s': %w", h.ID(), err)
	}
	return resp.Matched != nil && *resp.Matched, nil
}
