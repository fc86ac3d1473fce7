package registry

import (
	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Due lists the changing handlers to run for a cause, in registration order,
// as Kopf selects them: handlers of the cause's own kind; field handlers on
// creation and updates when their field changed (not on deletion: see
// reasonFits); resume handlers on any cause of an
// initial object (on deletion only with the deleted option); each passing
// its filters and, last, its callback filter. Causes that call no handlers
// (noop, free, gone) have none due. Each id appears once: of one function
// declared under several kinds (an update and a resume handler of one id)
// the first due entry runs, as Kopf runs a function once per cause however
// many of its decorators match.
func (r *Registry) Due(ref abi.ResourceRef, c *Cause, when WhenFunc) ([]*Handler, error) {
	if !c.Handling() {
		return nil, nil
	}
	var out []*Handler
	seen := map[string]bool{}
	for _, h := range r.Changing(ref) {
		if seen[h.ID()] || !reasonFits(h, c) || !h.matches(c) {
			continue
		}
		ok, err := passesWhen(h, c, when)
		if err != nil {
			return nil, err
		}
		if ok {
			seen[h.ID()] = true
			out = append(out, h)
		}
	}
	return out, nil
}

// reasonFits is Kopf's selection by reason: create, update and delete
// handlers serve their own cause; field handlers the causes that change a
// field (create and update; resume never changes one); resume handlers the
// causes of initial objects, on deleted objects only with the deleted
// option.
//
// Field handlers and deletion: Kopf's code selects a field handler for a
// deletion when the field changed since the last handled state (an update
// still in progress), re-purposes its record to the deletion and holds the
// finalizer until it succeeds — forever when it cannot (its child is gone).
// Kopf's documentation calls field handlers update handlers, and so does
// the host: a deletion supersedes the update, the field handler's record is
// purged with the update's, and only delete handlers decide when the object
// is released.
func reasonFits(h *Handler, c *Cause) bool {
	switch h.Kind() {
	case abi.KindCreate:
		return c.Reason == abi.ReasonCreate
	case abi.KindUpdate:
		return c.Reason == abi.ReasonUpdate
	case abi.KindDelete:
		return c.Reason == abi.ReasonDelete
	case abi.KindField:
		return c.Reason != abi.ReasonDelete
	case abi.KindResume:
		return c.Initial && (!c.Deleted() || h.Spec.Options.Deleted)
	}
	return false
}

// Prematch reports whether any changing handler of the resource would see
// the object at all (labels, annotations, field values, callback; not the
// cause or the field change). When none does, Kopf's "stealth mode"
// applies: the reactor writes nothing on the object, no diff-base either,
// and the object looks new once a handler starts to match it.
func (r *Registry) Prematch(ref abi.ResourceRef, c *Cause, when WhenFunc) (bool, error) {
	for _, h := range r.Changing(ref) {
		if !h.prematches(c) {
			continue
		}
		ok, err := passesWhen(h, c, when)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// RequiresFinalizer reports whether the object must carry the finalizer: a
// non-optional delete handler prematches it, or a timer or daemon matches
// it (they must be stopped before the object goes).
func (r *Registry) RequiresFinalizer(ref abi.ResourceRef, c *Cause, when WhenFunc) (bool, error) {
	for _, h := range r.byResource[keyOf(ref)] {
		var fits bool
		switch h.Kind() {
		case abi.KindDelete:
			fits = !h.Spec.Options.Optional && h.prematches(c)
		case abi.KindTimer, abi.KindDaemon:
			fits = h.MatchesBody(c.Body)
		}
		if !fits {
			continue
		}
		ok, err := passesWhen(h, c, when)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// Matching lists the resource's handlers of one kind (event, timer, daemon,
// index, validate, mutate) whose filters match the body, callback last, in
// registration order.
func (r *Registry) Matching(ref abi.ResourceRef, kind abi.HandlerKind, body map[string]any, when WhenFunc) ([]*Handler, error) {
	return r.matching(ref, body, when, kind)
}

func (r *Registry) matching(ref abi.ResourceRef, body map[string]any, when WhenFunc, kinds ...abi.HandlerKind) ([]*Handler, error) {
	c := &Cause{Body: body}
	var out []*Handler
	for _, h := range r.Handlers(ref, kinds...) {
		if !h.MatchesBody(body) {
			continue
		}
		ok, err := passesWhen(h, c, when)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, h)
		}
	}
	return out, nil
}
