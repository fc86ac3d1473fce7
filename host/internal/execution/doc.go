// Package execution is the one place where the host calls a handler. Given
// "this handler, this object" (with its cause, its progress record, a watch
// event, or nothing for an activity), it
//
//  1. builds the handler's request ([Request]): the only code in the host
//     that fills an abi.Request;
//  2. checks the handler's limits ahead of the call and calls its module
//     through wasmrt ([Executor.Call]), with the host functions of the
//     call ([Executor.Host]);
//  3. classifies the outcome (retries, timeout, backoff, errors mode:
//     [Classify], [Check], [LimitsFor]) into a [Step] with the handler's
//     new progress record;
//  4. folds the result into status.<handler-id> and the handler's patch
//     into the object's patch ([Executor.Fold]);
//  5. reports it, a log line and, as the posting settings say, an Event,
//     with one attribute scheme for every kind ([Executor.Report]);
//  6. sends an object's patch, at most one request per endpoint
//     ([Executor.Apply]).
//
// Sub-handlers run within their parent's call: the request carries their
// progress, the response their outcomes, and [Executor.Call] classifies
// each with its own options ([ChildResult]) and decides the parent's step
// (subhandlers.go, docs/subhandlers.md).
//
// It also evaluates callback filters ([Executor.When]): at most once per
// handler per processing cycle, on the object encoded once ([Subject]).
//
// # Who calls it, what it calls
//
// The reactor's processing cycle (changing and event handlers, callback
// filters, activities), the spawning engine (timers and daemons), the
// admission engine (webhooks), the indexing engine (index handlers) and
// the host package's offline `invoke` call it. It calls wasmrt (modules),
// persistence (records and patches) and kube (patches and Events, through
// the [Cluster] interface so that engines are unit-testable without an API
// server). The one state it keeps between calls is Kopf's memos ([Memos]:
// per module, and per module and object, in memory only); callers own the
// progress (persistence.State) and decide what a step means for their
// object. The modules' indexes reach requests and look-ups through
// [Indices], which the indexing engine implements.
//
// With canary versions (Options.Route, route.go) the version of a module
// that serves a call about an object is the one the reactor routes the
// object to, or the one a timer or daemon is bound to
// (CallOptions.Version); with a shadow version (Options.Shadow, shadow.go)
// a served call is repeated on it after it answered, its writes sent as
// dry runs and its answer compared, never applied.
package execution
