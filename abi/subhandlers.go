package abi

import (
	"encoding/json"
	"time"
)

// Sub-handlers (Kopf's @kopf.subhandler and kopf.execute) are an addition
// to ABI v1. A changing handler registers them while it runs; a guest
// cannot keep their closures between calls, so the parent is called again
// in every processing cycle until all its sub-handlers are finished, and
// the guest runs the due ones in the same call:
//
//   - the host sends the progress of the sub-handlers the parent registered
//     in earlier cycles of the cause ([Request.Subhandlers]);
//   - the guest runs the parent, then each sub-handler it registered that is
//     neither finished nor sleeping (and whose timeout and retries are not
//     used up), with its own retry, started and runtime; sub-handlers may
//     register their own (ids "parent/child/grandchild");
//   - the guest answers every registration, called or not, in
//     [Response.Subhandlers]; the parent's own outcome is
//     [OutcomeChildren] while any of its sub-handlers is unfinished (its
//     result is then dropped, as Kopf's HandlerChildrenRetry drops it).
//
// The host classifies each sub-handler's outcome with its options, stores
// its progress record under its own id, its result under
// status.<parent/child>, and lists the ids in the parent's "subrefs", as
// Kopf does. A host that predates sub-handlers ignores
// Response.Subhandlers and fails the parent's unknown "children" outcome
// as an arbitrary error.

// SubhandlerState is the progress of one sub-handler as the host knows it.
type SubhandlerState struct {
	// ID is the full id: "parent/child".
	ID string `json:"id"`
	// Retry, Started and Runtime are the sub-handler's kwargs, as
	// [Request]'s.
	Retry   int       `json:"retry"`
	Started time.Time `json:"started,omitempty"`
	Runtime float64   `json:"runtime,omitempty"`
	// Finished is true when it succeeded or failed for good: it is not run
	// again for this cause.
	Finished bool `json:"finished,omitempty"`
	// Sleeping is true when it waits for its retry delay: it is not run in
	// this call.
	Sleeping bool `json:"sleeping,omitempty"`
}

// SubhandlerOutcome is one sub-handler registered during a call.
type SubhandlerOutcome struct {
	// ID is the full id: "parent/child".
	ID string `json:"id"`
	// Parent is the full id of the handler that registered it: the called
	// handler or another sub-handler.
	Parent string `json:"parent"`
	// Options are the sub-handler's error options (errors, timeout,
	// retries, backoff); the host applies them to its outcome.
	Options Options `json:"options,omitempty"`
	// Outcome is nil when the guest did not call it (finished, sleeping, or
	// its timeout or retries are used up: the host then fails it).
	Outcome *Outcome `json:"outcome,omitempty"`
	// Result is stored under status.<ID> as a handler's result is.
	Result json.RawMessage `json:"result,omitempty"`
}
