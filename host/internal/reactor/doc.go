// Package reactor serves the change handlers of loaded modules on a cluster:
// it watches the resources the handlers select, detects each object's cause,
// runs the due handlers in their wasm modules and writes what came of it
// back to the object. It is Kopf's reactor and processing, reshaped to cost
// the API server less.
//
// # Who calls it, what it calls
//
// The host package builds an [Operator] from a kube.Client, the loaded
// wasmrt.Modules and the settings, and calls [Operator.Run]. The operator
// resolves every handler's resource selector with the kube package, starts
// one kube.Watch per resource (in the configured namespaces), and feeds a
// delaying work queue keyed by object. A bounded pool of workers takes keys
// from it; the queue never hands one key to two workers at once, and a key
// added many times while it waits is processed once, on the latest state
// read from the watch cache.
//
// # The processing cycle
//
// For one object (cycle.go):
//
//  1. detect the cause against the stored diff-base (registry.DetectCause):
//     create, update, delete, resume, or nothing to do;
//  2. add the finalizer when a handler needs it, and if it was missing end
//     the cycle there, as Kopf does: no handler runs on an object whose
//     deletion the host could still miss (its side effects would never be
//     undone), and a failed finalizer write leaves nothing half-done; the
//     finalizer's own watch event starts the next cycle;
//  3. run ALL due handlers of the cause in registration order (Kopf runs one
//     per cycle), each in its module through wasmrt, folding every outcome
//     into the object's progress (persistence.Classify), its result into
//     status.<handler-id> and its patch into the cycle's patch;
//  4. once every handler of the cause is done, purge the progress, store the
//     new diff-base, and for deletion release the finalizer;
//  5. send at most one PATCH per endpoint (the object, and /status when the
//     resource has that subresource), none when nothing changed;
//  6. requeue the object after the earliest retry delay on the host's own
//     timer: no touch-dummy writes.
//
// After its own PATCH the operator waits for the watch to deliver the
// patched version before it processes the object again (or for
// settings.Persistence.ConsistencyTimeout), so that a stale cache never makes a handled
// change look new.
//
// Errors of the framework itself (API failures, malformed objects) throttle
// the object with settings.Queueing.ErrorDelays; other objects go on.
package reactor
