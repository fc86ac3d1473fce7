package execution

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// Sub-handlers (Kopf's @kopf.subhandler and kopf.execute). A guest cannot
// keep a handler's closures between calls, so the parent is called again
// in every processing cycle of its cause until its sub-handlers are all
// finished, and the guest runs the due ones within that same call (one
// call per parent per cycle, not one per sub-handler): the request carries
// their progress ([Input.Subrecords]), the response every registration
// with its options and, for those the guest ran, the outcome. Here each
// registration becomes a [ChildResult]: its outcome classified with its
// own options, as any handler's is; a parent with unfinished sub-handlers
// is due again when the earliest of them is (Kopf's HandlerChildrenRetry:
// an attempt counted, no look-ahead), and its record lists the ids of its
// sub-handlers of every depth in subrefs, so that they are purged with it.

// ChildResult is what a call came to for one sub-handler.
type ChildResult struct {
	// Handler is the sub-handler: its full id ("parent/child"), the
	// parent's kind, module and resource, and its own error options.
	Handler *registry.Handler
	// Parent is the full id of the handler that registered it.
	Parent string
	// Step is its new progress. For a sub-handler the guest did not call
	// it holds the record as it was, unless its timeout or retries were
	// used up (then it failed now).
	Step Step
	// Reported is true when the step is news (the guest called it, or a
	// limit failed it): it is to be logged.
	Reported bool
	// Result is the sub-handler's result, for status.<id> when the step
	// delivers it.
	Result json.RawMessage
}

// subrequest lists the sub-handlers' progress for the guest, by id.
func subrequest(records map[string]persistence.Record, now time.Time) []abi.SubhandlerState {
	if len(records) == 0 {
		return nil
	}
	out := make([]abi.SubhandlerState, 0, len(records))
	for id, rec := range records {
		out = append(out, abi.SubhandlerState{ID: id, Retry: rec.Retries, Started: rec.Started,
			Runtime: rec.Runtime(now).Seconds(), Finished: rec.Finished(), Sleeping: rec.Sleeping(now)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// settleChildren classifies the sub-handlers of a call of h whose own step
// is step, and returns them with the parent's final step.
func (e *Executor) settleChildren(h *registry.Handler, limits Limits, in Input, resp *abi.Response, now time.Time, step Step) ([]ChildResult, Step) {
	s := &settler{e: e, h: h, in: in, now: now, byID: map[string]*abi.SubhandlerOutcome{}, done: map[string]*ChildResult{}}
	for i := range resp.Subhandlers {
		sub := &resp.Subhandlers[i]
		if sub.ID == "" || sub.ID == h.ID() || s.byID[sub.ID] != nil {
			continue // malformed or repeated: the first registration counts
		}
		s.byID[sub.ID] = sub
		s.order = append(s.order, sub.ID)
	}
	out := make([]ChildResult, 0, len(s.order))
	for _, id := range s.order {
		out = append(out, *s.settle(id))
	}
	pending, delay := s.pending(h.ID())
	if st := resp.Outcome.Status; (pending && st == abi.OutcomeSuccess) || st == abi.OutcomeChildren {
		step = childrenRetry(limits, in.Record, now, delay)
	}
	step.Record.Subrefs = union(step.Record.Subrefs, s.order)
	return out, step
}

// settler classifies one call's sub-handlers, parents after children.
type settler struct {
	e     *Executor
	h     *registry.Handler
	in    Input
	now   time.Time
	byID  map[string]*abi.SubhandlerOutcome
	order []string
	done  map[string]*ChildResult
}

func (s *settler) settle(id string) *ChildResult {
	if r := s.done[id]; r != nil {
		return r
	}
	sub := s.byID[id]
	r := &ChildResult{Parent: sub.Parent, Result: sub.Result, Handler: s.child(sub)}
	s.done[id] = r // before the children: a cycle of parents ends here
	limits := s.e.Limits(r.Handler)
	prev, known := s.in.Subrecords[id]
	if !known {
		var reason abi.Reason
		if s.in.Cause != nil {
			reason = s.in.Cause.Reason
		}
		prev = persistence.NewRecord(reason, s.now)
	}
	pending, delay := s.pending(id)
	switch {
	case prev.Finished():
		r.Step = Step{Record: prev, Finished: true}
	case sub.Outcome == nil:
		if step, failed := Check(limits, prev, s.now); failed {
			r.Step, r.Reported = step, true
		} else {
			r.Step = Step{Record: prev, Delay: prev.DueIn(s.now)}
		}
	case (pending && sub.Outcome.Status == abi.OutcomeSuccess) || sub.Outcome.Status == abi.OutcomeChildren:
		r.Step, r.Reported = childrenRetry(limits, prev, s.now, delay), true
	default:
		r.Step, r.Reported = Classify(limits, prev, s.now, *sub.Outcome, nil), true
	}
	if sub.Outcome != nil {
		r.Step.Record.Subrefs = union(r.Step.Record.Subrefs, s.descendants(id))
	}
	return r
}

// pending reports whether any direct sub-handler of parent is unfinished,
// and the earliest delay among them.
func (s *settler) pending(parent string) (bool, time.Duration) {
	var pending bool
	var delay time.Duration
	for _, id := range s.order {
		if s.byID[id].Parent != parent {
			continue
		}
		r := s.settle(id)
		if r.Step.Finished || r.Step.Record.Finished() {
			continue
		}
		if !pending || r.Step.Delay < delay {
			delay = r.Step.Delay
		}
		pending = true
	}
	return pending, max(delay, 0)
}

// descendants lists the ids registered below id, of every depth.
func (s *settler) descendants(id string) []string {
	var out []string
	for _, sub := range s.order {
		if s.isBelow(sub, id) {
			out = append(out, sub)
		}
	}
	return out
}

func (s *settler) isBelow(id, ancestor string) bool {
	for seen := 0; seen <= len(s.order); seen++ {
		sub := s.byID[id]
		if sub == nil {
			return false
		}
		if sub.Parent == ancestor {
			return true
		}
		id = sub.Parent
	}
	return false // a cycle of parents
}

// child is the registry handler of a sub-handler: the parent's kind,
// module and resource with the sub-handler's own id and error options.
func (s *settler) child(sub *abi.SubhandlerOutcome) *registry.Handler {
	opts := abi.Options{Errors: sub.Options.Errors, Timeout: sub.Options.Timeout,
		Retries: sub.Options.Retries, Backoff: sub.Options.Backoff, Param: sub.Options.Param}
	return &registry.Handler{Module: s.h.Module, Resource: s.h.Resource,
		Spec: abi.HandlerSpec{ID: sub.ID, Kind: s.h.Kind(), Resource: s.h.Spec.Resource, Options: opts}}
}

// childrenRetry is the step of a handler whose sub-handlers are
// unfinished: an attempt, due again after delay, with no look-ahead on its
// limits (Kopf's HandlerChildrenRetry).
func childrenRetry(l Limits, prev persistence.Record, now time.Time, delay time.Duration) Step {
	rec := attempted(prev, now)
	rec.Delayed = now.Add(delay).UTC()
	return Step{Record: rec, Delay: delay, Err: &ChildrenRetryError{Handler: l.Handler, Delay: delay}}
}

func union(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}

// ChildrenRetryError says a handler has unfinished sub-handlers: it is not
// a failure, and it is logged at debug level, as Kopf does.
type ChildrenRetryError struct {
	Handler string
	Delay   time.Duration
}

func (e *ChildrenRetryError) Error() string {
	return fmt.Sprintf("handler[%s] has unfinished sub-handlers; retrying in %s", e.Handler, e.Delay)
}
