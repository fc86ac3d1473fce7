package kopf

import (
	"log/slog"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Sub-handlers, as Kopf's @kopf.subhandler and kopf.execute().
//
// A wasm module cannot keep a handler's closures from one call to the
// next, so the host calls the parent handler again in every processing
// cycle of its cause until all its sub-handlers are finished, sending
// their progress. In each call the parent registers its sub-handlers
// anew ([Context.Subhandler]); the SDK then runs, in the same call, those
// that are neither finished nor waiting for a retry, each with its own
// retry, started and runtime, and tells the host every registration with
// its options and outcome. The host keeps each sub-handler's progress on
// the object under its id "parent/child", stores its result under
// status.<parent/child>, and lists the ids in the parent's "subrefs", as
// Kopf does: an object that Kopf was handling goes on where Kopf stopped,
// and the other way round. The parent's own result is stored once all its
// sub-handlers are finished; finished ones are not called again.
//
// Sub-handlers share the parent's [Patch] and memo. They may register
// sub-handlers of their own ("parent/child/grandchild"). Their log records
// carry the field subhandler=<id> beside the host's handler=<parent id>.

// subhandling is the state of one call's sub-handlers, shared by the
// parent's context and those of its sub-handlers.
type subhandling struct {
	states   map[string]abi.SubhandlerState // from the request
	outcomes []abi.SubhandlerOutcome
}

// subhandler is one registration.
type subhandler struct {
	id      string
	h       *handler
	problem string
}

// subOptions are the options a sub-handler takes: Kopf's error options,
// param, and the filters on labels, annotations and the whole object.
var subOptions = map[string]bool{"Param": true, "Errors": true, "Retries": true, "Timeout": true, "Backoff": true,
	"Labels": true, "Annotations": true, "When": true}

// HandlerChildrenRetry is the error of [Context.Execute] while some
// sub-handlers are unfinished: return it (or anything wrapping it) from
// the handler, and the host calls the handler again when the earliest of
// them is due. It is not a failure, as Kopf's HandlerChildrenRetry.
type HandlerChildrenRetry struct{}

// Error says what it means.
func (HandlerChildrenRetry) Error() string { return "unfinished sub-handlers" }

func (HandlerChildrenRetry) outcome(string) abi.Outcome {
	return abi.Outcome{Status: abi.OutcomeChildren}
}

// Subhandler registers a sub-handler of the running changing handler
// (Kopf's @kopf.subhandler): fn runs under the id "<handler id>/<id>"
// (the function's name when id is empty) with its own progress and
// retries. It accepts the options [Param], [Errors], [Retries], [Timeout],
// [Backoff], and the filters [Labels], [Annotations] and [When]: a
// sub-handler they filter out is not run and not waited for, as in Kopf.
// Registered sub-handlers run when the handler returns
// without an error, or earlier with [Context.Execute]. Register the same
// sub-handlers in every call: one not registered in a call is not run in
// it.
func (c *Context) Subhandler(id string, fn Handler, opts ...Option) {
	if id == "" && fn != nil {
		id = funcName(fn)
	}
	s := &subhandler{id: c.req.Handler + "/" + id}
	h := &handler{spec: abi.HandlerSpec{ID: s.id, Kind: c.req.Kind}, fn: fn}
	for _, o := range opts {
		if !subOptions[o.name] {
			s.problem = "option " + o.name + " does not apply to sub-handlers"
			continue
		}
		if err := o.apply(h); err != nil && s.problem == "" {
			s.problem = "option " + o.name + ": " + err.Error()
		}
	}
	switch {
	case fn == nil:
		s.problem = "the sub-handler has no function"
	case !c.req.Kind.IsChanging():
		s.problem = "sub-handlers of " + string(c.req.Kind) + " handlers are not supported (only of changing handlers, as in Kopf)"
	}
	s.h = h
	c.subs = append(c.subs, s)
}

// Execute runs the sub-handlers registered so far (Kopf's kopf.execute())
// and returns nil once they are all finished, or [HandlerChildrenRetry] to
// return while some are not: the code after it then runs only in the
// call where every sub-handler is finished. Without it, the sub-handlers
// run when the handler returns; once a handler called it, sub-handlers
// it registers later run only by another Execute (Kopf's explicit
// execute() replaces the implicit one too).
func (c *Context) Execute() error {
	c.executed = true
	pending := false
	subs := c.subs
	c.subs = nil
	for _, s := range subs {
		if !c.runSub(s) {
			pending = true
		}
	}
	if pending {
		return HandlerChildrenRetry{}
	}
	return nil
}

// finishSubhandlers runs the sub-handlers that the handler registered and
// did not execute itself, once it returned without an error.
func (c *Context) finishSubhandlers(result any, err error) (any, error) {
	if err != nil || len(c.subs) == 0 {
		return result, err
	}
	if c.executed {
		return result, err // as Kopf: an explicit execute() replaces the implicit one
	}
	if err := c.Execute(); err != nil {
		return nil, err
	}
	return result, nil
}

func (c *Context) tree() *subhandling {
	if c.subtree == nil {
		c.subtree = &subhandling{states: make(map[string]abi.SubhandlerState, len(c.req.Subhandlers))}
		for _, st := range c.req.Subhandlers {
			c.subtree.states[st.ID] = st
		}
	}
	return c.subtree
}

// runSub runs one sub-handler if it is due and reports whether it is
// finished (as far as the guest can tell; the host decides).
func (c *Context) runSub(s *subhandler) (finished bool) {
	t := c.tree()
	for _, o := range t.outcomes {
		if o.ID == s.id {
			return true // registered twice: the first registration counts
		}
	}
	st, known := t.states[s.id]
	if !known {
		st = abi.SubhandlerState{ID: s.id, Started: time.Now().UTC()}
	}
	o := s.h.spec.Options
	req := *c.req
	req.Handler, req.Retry, req.Started, req.Runtime, req.Param = s.id, st.Retry, st.Started, st.Runtime, o.Param
	child := &Context{req: &req, handler: s.h, host: c.host, module: c.module, root: c.rootContext(), subtree: t}
	// The host names the called handler in its log records; the field
	// names the sub-handler.
	child.logger = slog.New(&logHandler{host: c.host, min: minLevel(req.LogLevel)}).With("subhandler", s.id)
	defer child.release()
	if s.problem == "" && !child.matches() {
		return true // filtered out: not run, not waited for
	}
	i := len(t.outcomes)
	t.outcomes = append(t.outcomes, abi.SubhandlerOutcome{ID: s.id, Parent: c.req.Handler, Options: o})
	switch {
	case known && st.Finished:
		return true
	case known && st.Sleeping:
		return false
	case s.problem != "":
		t.outcomes[i].Outcome = &abi.Outcome{Status: abi.OutcomePermanent, Message: s.problem}
		return true
	}
	if (o.Timeout > 0 && st.Runtime >= o.Timeout) || (o.Retries > 0 && st.Retry >= o.Retries) {
		return true // used up: the host fails it without a call
	}
	result, err := child.call()
	result, err = child.finishSubhandlers(result, err)
	out := outcome(err)
	if out.Status == abi.OutcomeSuccess && result != nil {
		raw, merr := marshal(result)
		if merr != nil {
			out = abi.Outcome{Status: abi.OutcomeError, Message: "kopf: encode the result of " + s.id + ": " + merr.Error()}
		} else {
			t.outcomes[i].Result = raw
		}
	}
	t.outcomes[i].Outcome = &out
	return settled(out, st, o)
}

// settled tells whether an outcome finishes a sub-handler, as the host's
// classification would with its options (a temporary error whose delay
// the guest does not know is counted as unfinished).
func settled(out abi.Outcome, st abi.SubhandlerState, o abi.Options) bool {
	switch out.Status {
	case abi.OutcomeSuccess, abi.OutcomePermanent:
		return true
	case abi.OutcomeError:
		if o.Errors == abi.ErrorsIgnored || o.Errors == abi.ErrorsPermanent {
			return true
		}
		return (o.Retries > 0 && st.Retry+1 >= o.Retries) || (o.Timeout > 0 && o.Backoff > 0 && st.Runtime+o.Backoff >= o.Timeout)
	case abi.OutcomeTemporary:
		if o.Retries > 0 && st.Retry+1 >= o.Retries {
			return true
		}
		return o.Timeout > 0 && out.Delay != nil && st.Runtime+*out.Delay >= o.Timeout
	}
	return false
}

// rootContext is the context of the handler the host called.
func (c *Context) rootContext() *Context {
	if c.root != nil {
		return c.root
	}
	return c
}

// matches evaluates a sub-handler's filters on the object, as the host
// does for handlers: labels and annotations, then the callable filters
// and When. A filter that panics counts as no match.
func (c *Context) matches() bool {
	f := c.handler.spec.Filters
	if !metaMatch(f.Labels, c.Labels()) || !metaMatch(f.Annotations, c.Annotations()) {
		return false
	}
	if !f.When {
		return true
	}
	ok, err := c.when()
	return ok && err == nil
}

// metaMatch applies label or annotation filters; callable ones pass here
// and run with When.
func metaMatch(filters map[string]abi.MetaFilter, values map[string]string) bool {
	for k, f := range filters {
		v, ok := values[k]
		switch {
		case f.Callback:
		case f.Absent && ok, f.Present && !ok, f.Value != nil && (!ok || v != *f.Value):
			return false
		}
	}
	return true
}
