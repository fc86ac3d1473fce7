package execution

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// InitialDelay asks h's guest for the callable initial delay of a timer or
// daemon on subj (Kopf's initial_delay=fn; abi.CallInitialDelay): the
// seconds it answers as its result, a number of 0 or more. The guest sees
// what the timer or daemon would, and must not act.
func (e *Executor) InitialDelay(ctx context.Context, h *registry.Handler, subj *Subject) (time.Duration, error) {
	in := Input{Subject: subj, Now: e.opts.Clock.Now()}
	e.memoFor(h, &in)
	e.indicesFor(h.Module, &in)
	req, err := Request(h, in)
	if err != nil {
		return 0, err
	}
	req.Call = abi.CallInitialDelay
	mod := e.version(h, subj, "").Module
	if mod == nil {
		return 0, fmt.Errorf("initial delay of handler '%s': module %q is not loaded", h.ID(), h.Module)
	}
	resp, err := mod.Handle(ctx, req, nil)
	if err != nil {
		return 0, fmt.Errorf("initial delay of handler '%s': %w", h.ID(), err)
	}
	if resp.Outcome.Status != abi.OutcomeSuccess {
		return 0, fmt.Errorf("initial delay of handler '%s': %s: %s", h.ID(), resp.Outcome.Status, resp.Outcome.Message)
	}
	var secs float64
	if err := json.Unmarshal(resp.Result, &secs); err != nil || secs < 0 {
		return 0, fmt.Errorf("initial delay of handler '%s': the module answered %s; return a number of seconds, 0 or more", h.ID(), resp.Result)
	}
	return time.Duration(secs * float64(time.Second)), nil
}
