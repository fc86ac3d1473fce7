package kopf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/guest-sdk/internal/hostcall"
)

// handleJSON serves the handle export: request bytes in, response bytes
// out. Only a request that is not JSON is a failure of the module; every
// handler failure, panics included, is an outcome in the response.
func (r *registry) handleJSON(input []byte, host hostcall.Host) ([]byte, error) {
	req, err := decodeRequest(input)
	if err != nil {
		return nil, err
	}
	return encodeResponse(r.handle(req, host))
}

func (r *registry) handle(req *abi.Request, host hostcall.Host) *abi.Response {
	h := r.lookup(req.Handler, req.Kind)
	if h == nil {
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeError,
			Message: fmt.Sprintf("module %q has no handler %q; rebuild or reload the module", r.module.Name, req.Handler)}}
	}
	ctx := &Context{req: req, handler: h, host: host, module: r.module.Name}
	switch req.Call {
	case abi.CallWhen:
		return ctx.matchWhen()
	case abi.CallInitialDelay:
		return ctx.answerInitialDelay()
	case abi.CallSelect:
		return ctx.answerSelect()
	}
	result, err := ctx.call()
	result, err = ctx.finishSubhandlers(result, err)
	ctx.release()
	resp := ctx.respond(result, err)
	if ctx.subtree != nil {
		resp.Subhandlers = ctx.subtree.outcomes
	}
	return resp
}

// call runs the handler, turning a panic into an arbitrary error whose
// stack goes to the host's log.
func (c *Context) call() (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = c.panicked(p)
		}
	}()
	return c.handler.fn(c)
}

func (c *Context) panicked(p any) error {
	err := fmt.Errorf("panic: %v", p)
	c.Logger().Error("handler panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	return err
}

func (c *Context) matchWhen() *abi.Response {
	matched := true
	if c.handler.when != nil || len(c.handler.callbacks) > 0 {
		var err error
		if matched, err = c.when(); err != nil {
			return &abi.Response{Outcome: outcome(err)}
		}
	}
	return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Matched: &matched}
}

// answerInitialDelay runs the handler's callable initial delay: its
// seconds are the result.
func (c *Context) answerInitialDelay() *abi.Response {
	if c.handler.initialDelay == nil {
		return &abi.Response{Outcome: outcome(fmt.Errorf("handler %s has no callable initial delay", c.req.Handler))}
	}
	d, err := c.initialDelay()
	if err != nil {
		return &abi.Response{Outcome: outcome(err)}
	}
	raw, err := marshal(d.Seconds())
	return &abi.Response{Outcome: outcome(err), Result: raw}
}

// answerSelect runs the handler's callable selector over the request's
// resources: one boolean per resource is the result.
func (c *Context) answerSelect() *abi.Response {
	if c.handler.selects == nil {
		return &abi.Response{Outcome: outcome(fmt.Errorf("handler %s has no callable selector", c.req.Handler))}
	}
	picked, err := c.selectResources()
	if err != nil {
		return &abi.Response{Outcome: outcome(err)}
	}
	raw, err := json.Marshal(picked)
	return &abi.Response{Outcome: outcome(err), Result: raw}
}

func (c *Context) selectResources() (picked []bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = c.panicked(p)
		}
	}()
	var resources []ResourceInfo
	if err := json.Unmarshal(c.req.Body, &resources); err != nil {
		return nil, fmt.Errorf("kopf: the resources to select from: %w", err)
	}
	picked = make([]bool, len(resources))
	for i, r := range resources {
		picked[i] = c.handler.selects(r)
	}
	return picked, nil
}

func (c *Context) initialDelay() (d time.Duration, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = c.panicked(p)
		}
	}()
	return c.handler.initialDelay(c), nil
}

func (c *Context) when() (matched bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = c.panicked(p)
		}
	}()
	for _, cb := range c.handler.callbacks {
		if !cb(c) {
			return false, nil
		}
	}
	return c.handler.when == nil || c.handler.when(c), nil
}

// respond folds a handler's return values and its context into a response.
func (c *Context) respond(result any, err error) *abi.Response {
	resp := &abi.Response{}
	if err == nil && result != nil {
		raw, merr := marshal(result)
		if merr != nil {
			err = fmt.Errorf("kopf: encode the result of %s: %w", c.req.Handler, merr)
		} else {
			resp.Result = raw
		}
	}
	patch, perr := c.patch.encode()
	if perr != nil && err == nil {
		err = perr
	}
	resp.Patch = patch
	resp.Memo = c.changedMemo()
	resp.Outcome = outcome(err)
	if c.handler.spec.Kind.IsWebhook() {
		resp.Admission = c.verdict(resp.Outcome)
	}
	if resp.Outcome.Status != abi.OutcomeSuccess {
		resp.Result = nil
	}
	return resp
}

// changedMemo returns the memo if the handler changed it.
func (c *Context) changedMemo() json.RawMessage {
	if c.memo == nil {
		return nil
	}
	now, err := marshal(map[string]any(c.memo))
	if err != nil || bytes.Equal(now, c.memoWas) {
		return nil
	}
	return now
}

// verdict is a webhook's answer: allowed on success, else denied with the
// AdmissionError's code or 500, as Kopf does.
func (c *Context) verdict(o abi.Outcome) *abi.AdmissionResponse {
	v := &abi.AdmissionResponse{Allowed: o.Status == abi.OutcomeSuccess}
	if a := c.Admission(); a != nil {
		v.Warnings = a.Warnings
	}
	if !v.Allowed {
		v.Code = admissionCode(o.Code)
		v.Message = o.Message
	}
	return v
}
