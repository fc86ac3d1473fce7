package execution

import (
	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/rollout"
)

// Version is the version of a module that handles one object: the only
// one, or, for a module with a canary, the stable version or the canary
// (host/internal/rollout).
type Version struct {
	// Module is the version's code (nil: not loaded).
	Module Module
	// Role is rollout.Stable or rollout.Canary; "" for a module with one
	// version.
	Role string
	// Counters count the version's calls (nil without a rollout).
	Counters *rollout.Counters
	// Declared says whether the version declares the handler: a canary
	// may add handlers or lack some of the stable version's, and a
	// handler its object's version lacks is not called for that object.
	Declared bool
}

// RouteFunc picks the version of h's module that handles the object with
// this UID. bound, when set, is the role a caller is bound to (a timer
// or daemon keeps the version it started on).
type RouteFunc func(h *registry.Handler, uid, bound string) Version

// routed reports whether calls of this kind are about one object that
// exactly one version handles: changing handlers, event handlers, timers
// and daemons. Index handlers, activities, probes and webhooks are served
// by the stable version (an index holds every object; a review of a new
// object has no UID yet).
func routed(k abi.HandlerKind) bool {
	return k.IsChanging() || k == abi.KindEvent || k == abi.KindTimer || k == abi.KindDaemon
}

// version returns the version of h's module that serves a call about
// subj (nil for activities), bound to a role when bound is set.
func (e *Executor) version(h *registry.Handler, subj *Subject, bound string) Version {
	if e.opts.Route != nil && subj != nil && subj.Object != nil && routed(h.Kind()) {
		return e.opts.Route(h, string(subj.Object.GetUID()), bound)
	}
	return Version{Module: e.opts.Modules(h.Module), Declared: true}
}

// Role is the role of the version of h's module that handles subj now
// ("" for a module with one version): timers and daemons are bound to it
// when they start ([CallOptions.Version]), so that a share change stops
// them rather than moving them between versions in mid-run.
func (e *Executor) Role(h *registry.Handler, subj *Subject) string {
	return e.version(h, subj, "").Role
}

// Declares reports whether the version that handles subj declares h; a
// cycle leaves out the handlers it does not.
func (e *Executor) Declares(h *registry.Handler, subj *Subject) bool {
	return e.version(h, subj, "").Declared
}
