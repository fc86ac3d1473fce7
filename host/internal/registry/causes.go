package registry

import (
	"slices"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
)

// Reactor-only reasons, beside the handler reasons of abi (create, update,
// delete, resume): nothing is called for them.
const (
	// ReasonNoop: something changed, but not the essence.
	ReasonNoop abi.Reason = "noop"
	// ReasonFree: marked for deletion and our finalizer is gone; we are done.
	ReasonFree abi.Reason = "free"
	// ReasonGone: the object is deleted from the cluster.
	ReasonGone abi.Reason = "gone"
)

// Cause is what a change to an object means to the changing handlers, as
// Kopf's ChangingCause. Body is the object as seen; Old is the stored
// diff-base essence (nil before the first handling), New the fresh essence,
// Diff between them.
type Cause struct {
	Reason abi.Reason
	// Initial is set when the object came from this process's initial
	// listing and has not yet been fully handled once: resume handlers then
	// mix into the cause.
	Initial bool
	Body    map[string]any
	Old     map[string]any
	New     map[string]any
	Diff    objects.Diff
}

// CauseInput is what [DetectCause] looks at.
type CauseInput struct {
	// EventType is the watch event's type: "" for the initial listing,
	// ADDED, MODIFIED or DELETED.
	EventType string
	Body      map[string]any
	// Finalizer is our finalizer's name.
	Finalizer string
	// Old is the stored diff-base essence (nil when none), New the essence
	// of Body (persistence builds both).
	Old, New map[string]any
	// OldUnknown: the object holds only a digest of its last handled
	// essence and New is not it (persistence's FetchDiffBase; Old is nil):
	// an update from an unknown old essence. Its diff is one change of the
	// whole object from null to New.
	OldUnknown bool
	// Initial: the object was seen in the initial listing of this process
	// and not all its handlers have completed once since (the reactor's
	// in-memory flag, Kopf's noticed_by_listing and not fully_handled_once).
	Initial bool
}

// DetectCause decides the cause of a change, in Kopf's order: a DELETED
// event is gone; marked for deletion without our finalizer is free, with it
// delete; no stored essence is create (never mixed with resume), only its
// digest with another essence now is update (with an unknown old); no
// essential change is resume for initial objects and noop otherwise; any
// essential change is update. It is pure; the diff is computed here.
func DetectCause(in CauseInput) Cause {
	c := Cause{Initial: in.Initial, Body: in.Body, Old: in.Old, New: in.New}
	if in.OldUnknown {
		c.Diff = objects.Diff{{Op: abi.DiffChange, Field: objects.Path{}, New: mapOrNil(in.New)}}
	} else {
		c.Diff = objects.Compare(mapOrNil(in.Old), mapOrNil(in.New))
	}
	deleting := c.Deleted()
	switch {
	case in.EventType == "DELETED":
		c.Reason = ReasonGone
	case deleting && !hasFinalizer(in.Body, in.Finalizer):
		c.Reason = ReasonFree
	case deleting:
		c.Reason = abi.ReasonDelete
	case in.Old == nil && !in.OldUnknown:
		c.Reason, c.Initial = abi.ReasonCreate, false
	case len(c.Diff) == 0 && in.Initial:
		c.Reason = abi.ReasonResume
	case len(c.Diff) == 0:
		c.Reason = ReasonNoop
	default:
		c.Reason = abi.ReasonUpdate
	}
	return c
}

func hasValue(obj map[string]any, path objects.Path) bool {
	v, ok := objects.Get(obj, path)
	return ok && v != nil
}

func hasFinalizer(body map[string]any, name string) bool {
	v, _ := objects.Get(body, objects.Path{"metadata", "finalizers"})
	list, _ := v.([]any)
	return slices.Contains(list, any(name))
}

// Handling reports whether changing handlers run for the cause (create,
// update, delete, resume) rather than only the reactor (noop, free, gone).
func (c *Cause) Handling() bool {
	switch c.Reason {
	case abi.ReasonCreate, abi.ReasonUpdate, abi.ReasonDelete, abi.ReasonResume:
		return true
	}
	return false
}

// Deleted reports whether the object is marked for deletion.
func (c *Cause) Deleted() bool {
	return hasValue(c.Body, objects.Path{"metadata", "deletionTimestamp"})
}

// changing tells filters to look at the old and new essences (a changing
// cause) rather than at the body only.
func (c *Cause) changing() bool { return c.Reason != "" }

// ForHandler narrows old, new and diff to the handler's field, as Kopf does
// for handlers with a field: values at the field, the diff relative to it.
// Without a field they are the whole essences.
func (c *Cause) ForHandler(h *Handler) (old, new any, diff objects.Diff) {
	if h.Field == nil {
		return mapOrNil(c.Old), mapOrNil(c.New), c.Diff
	}
	old, _ = objects.Get(c.Old, h.Field)
	new, _ = objects.Get(c.New, h.Field)
	return old, new, c.Diff.Reduce(h.Field)
}

func mapOrNil(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}
