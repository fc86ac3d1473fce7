// Package reactor serves the change handlers of loaded modules on a cluster:
// it watches the resources the handlers select, detects each object's cause,
// runs the due handlers in their wasm modules and writes what came of it
// back to the object. It is Kopf's reactor and processing, reshaped to cost
// the API server less.
//
// # Who calls it, what it calls
//
// The operator package (host/internal/operator, its spawn) builds an
// [Operator] from a kube.Client, the loaded wasmrt.Modules and the
// settings, gives it the admission engine ([Operator.ServeWebhooks]) and
// calls [Operator.Run]. The operator
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
//  2. ask the registry once (registry.Select) which timers and daemons
//     match, whether the finalizer is needed and which changing handlers
//     are due; callback filters run at most once each, on the body encoded
//     once (execution.Subject);
//  3. add the finalizer when a handler needs it, and if it was missing end
//     the cycle there, as Kopf does: no handler runs on an object whose
//     deletion the host could still miss (its side effects would never be
//     undone), and a failed finalizer write leaves nothing half-done; the
//     finalizer's own watch event starts the next cycle;
//  4. run ALL due handlers of the cause in registration order (Kopf runs one
//     per cycle), each through the execution layer, which builds the
//     request, calls the module, classifies the outcome into the object's
//     progress, folds its result into status.<handler-id> and its patch into
//     the cycle's patch, and reports it;
//  5. once every handler of the cause is done, purge the progress and store
//     the new diff-base; for a deletion release the finalizer once the
//     object's timers and daemons have stopped (until then the finished
//     records stay on the object, so that the deletion's handlers are not
//     called again);
//  6. send at most one PATCH per endpoint (execution.Executor.Apply), none
//     when nothing changed;
//  7. requeue the object after the earliest retry delay on the host's own
//     timer: no touch-dummy writes.
//
// After its own PATCH the operator waits for the watch to deliver the
// patched version before it processes the object again (or for
// settings.Persistence.ConsistencyTimeout), so that a stale cache never
// makes a handled change look new. A write that released the object
// answers with the version the cache still holds; only a newer version or
// the deletion counts then (Kopf's "which never arrives").
//
// # Pausing
//
// With [Options.Gate] (host/internal/gate: peering, leader election) every
// cycle runs between the gate's Enter and Leave. While the gate is closed
// a worker parks the keys it takes instead of processing them, timers and
// daemons are stopped with the reason "pausing" and none is spawned, and
// events for event handlers are dropped; the watches stay open. When it
// opens again every object in the watch caches is queued (pausing.go).
// Admission webhooks (given by [Operator.ServeWebhooks]) are served either
// way.
//
// Indexes (indexes.go): every watch event goes to the indexing engine
// before the object is queued, so the initial listing is indexed as it is
// delivered; the cycles of objects whose resource handlers belong to a
// module whose indexes are not complete yet wait (at start, and after a
// swap of the module while its indexes are rebuilt from the watch caches).
//
// Canary and shadow versions (rollouts.go, [Operator.SwapRollouts]): the
// registry holds the union of a module's stable and canary handlers, the
// executor routes each object to one version by its UID's hash
// (host/internal/rollout), a cycle leaves out the handlers its object's
// version does not declare, and a moved object's cycles wait until the
// timers and daemons of its old version have stopped (Spawner.Rebind).
// A shadow version is called by the executor after the serving call.
//
// Errors of the framework itself (API failures, malformed objects) throttle
// the object with settings.Queueing.ErrorDelays, the work queue's rate
// limiter; other objects go on.
package reactor
