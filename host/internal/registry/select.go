package registry

import (
	"github.com/kopf-wasm/kopf-wasm/abi"
)

// Selection is everything one processing cycle asks the registry about one
// object, answered by [Registry.Select] in one query.
type Selection struct {
	// Spawned are the timers and daemons whose filters match the body, in
	// registration order (none once the object is marked for deletion).
	Spawned []*Handler
	// RequiresFinalizer: a non-optional delete handler prematches the
	// object, or a timer or daemon matches it (they must be stopped before
	// the object goes).
	RequiresFinalizer bool
	// Prematched: some changing handler would see the object at all. When
	// none does, Kopf's stealth mode applies (nothing of ours is written).
	Prematched bool
	// Due are the changing handlers to run for the cause ([Registry.Due]).
	Due []*Handler
}

// Select answers a cycle's questions about the object of cause c: which
// timers and daemons match it, whether it needs the finalizer, whether any
// changing handler sees it and which are due. Callback filters are asked
// through when, which should evaluate each handler at most once per cycle
// (the execution layer's does): a handler that appears in several answers
// is then called once.
func (r *Registry) Select(ref abi.ResourceRef, c *Cause, when WhenFunc) (Selection, error) {
	var sel Selection
	var err error
	if !c.Deleted() {
		if sel.Spawned, err = r.matching(ref, c.Body, when, abi.KindTimer, abi.KindDaemon); err != nil {
			return Selection{}, err
		}
		if sel.RequiresFinalizer, err = r.RequiresFinalizer(ref, c, when); err != nil {
			return Selection{}, err
		}
	}
	if !c.Handling() {
		return sel, nil
	}
	if sel.Prematched, err = r.Prematch(ref, c, when); err != nil || !sel.Prematched {
		return sel, err
	}
	sel.Due, err = r.Due(ref, c, when)
	return sel, err
}
