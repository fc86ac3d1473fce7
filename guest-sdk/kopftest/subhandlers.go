package kopftest

import (
	"encoding/json"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Child is one sub-handler that a call registered.
type Child struct {
	// Parent is the full id of the handler that registered it.
	Parent string
	// Called is true when the module ran it in this call.
	Called bool
	// Err is its outcome as an error, as [Result.Err] (nil: succeeded or
	// not called).
	Err error
	// Value is its result decoded as JSON (nil when none).
	Value any
	// Options are its error options.
	Options abi.Options
}

// Children returns the sub-handlers the call registered, by full id
// ("parent/child").
func (r *Result) Children() map[string]Child {
	out := map[string]Child{}
	for _, s := range r.Response.Subhandlers {
		c := Child{Parent: s.Parent, Options: s.Options, Called: s.Outcome != nil}
		if s.Outcome != nil {
			c.Err = outcomeError(*s.Outcome)
		}
		if len(s.Result) > 0 {
			_ = json.Unmarshal(s.Result, &c.Value)
		}
		out[s.ID] = c
	}
	return out
}

// Pending reports whether the handler has unfinished sub-handlers: the
// host calls it again (Kopf's HandlerChildrenRetry).
func (r *Result) Pending() bool { return r.Response.Outcome.Status == abi.OutcomeChildren }

// Continue is the request of the next processing cycle after res answered
// req, as the host builds it: the sub-handlers' progress carried over
// (attempts counted; successes, permanent failures and errors that their
// options make final finished), the parent's retry counted. Delays are
// not waited for: every unfinished sub-handler is due.
func (h *Host) Continue(req *abi.Request, res *Result) *abi.Request {
	next := *req
	states := map[string]abi.SubhandlerState{}
	var order []string
	for _, st := range req.Subhandlers {
		states[st.ID] = st
		order = append(order, st.ID)
	}
	for _, s := range res.Response.Subhandlers {
		st, known := states[s.ID]
		if !known {
			st = abi.SubhandlerState{ID: s.ID, Started: time.Now().UTC()}
			order = append(order, s.ID)
		}
		if s.Outcome != nil && !st.Finished {
			st.Finished = final(*s.Outcome, s.Options, st.Retry)
			st.Retry++
		} else if s.Outcome == nil && !st.Finished && s.Options.Retries > 0 && st.Retry >= s.Options.Retries {
			st.Finished = true // used up: the host fails it
		}
		st.Sleeping = false
		states[s.ID] = st
	}
	next.Subhandlers = nil
	for _, id := range order {
		next.Subhandlers = append(next.Subhandlers, states[id])
	}
	next.Retry++
	return &next
}

func final(o abi.Outcome, opts abi.Options, retry int) bool {
	switch o.Status {
	case abi.OutcomeSuccess, abi.OutcomePermanent:
		return true
	case abi.OutcomeError:
		if opts.Errors == abi.ErrorsIgnored || opts.Errors == abi.ErrorsPermanent {
			return true
		}
	case abi.OutcomeChildren:
		return false
	}
	return opts.Retries > 0 && retry+1 >= opts.Retries
}

// RunCycles calls handler id for obj (old as in [Host.Run]) cycle after
// cycle, as the host does while it has unfinished sub-handlers, until it
// has none or max cycles passed, and returns every cycle's result.
func (h *Host) RunCycles(id string, obj, old map[string]any, max int) []*Result {
	h.t.Helper()
	req := h.Request(id, obj, old)
	var out []*Result
	for len(out) < max {
		res, err := h.Call(req)
		if err != nil {
			h.t.Fatalf("kopftest: handler %q: %v", id, err)
		}
		out = append(out, res)
		if !res.Pending() {
			break
		}
		req = h.Continue(req, res)
	}
	return out
}
