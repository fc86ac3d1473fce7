// Package probing answers the modules' probe handlers (Kopf's
// @kopf.on.probe) for the liveness endpoint: [Prober.Probe] calls every
// probe handler of every loaded module through the execution layer and
// returns Kopf's JSON object {probe_id: result, ...}.
//
// # Semantics (Kopf's, with one departure)
//
// Results are cached: a probe request within settings.Execution.ProbeCache
// (Kopf's fixed 10 s) of the last round gets that round's answer without
// calling anything, and one lock makes concurrent requests wait for a single
// round instead of stampeding the modules. No probe handlers answer {}.
//
// Kopf runs the probes as an activity and retries a failing one after its
// backoff (a minute by default) while the HTTP request waits; a probe that
// fails for good makes the endpoint answer 500. Here every round calls each
// probe once (the next round is its retry, so a liveness check is never
// held for a backoff), each call bounded by the wasm call timeout. A round
// with a failing probe (any error: temporary, permanent or arbitrary, a
// trap or a timeout) answers HTTP 500; its JSON still has every probe, the
// failing ones as {"error": "<message>"}, so the body says which probe
// failed and why. The probes of a module removed by a swap are no longer
// called; a module added is probed from the next round.
//
// # Who calls it, what it calls
//
// The host's operator (host/internal/operator, its spawn) builds the
// [Prober] and the liveness endpoint ([Liveness], Kopf's health reporter,
// which serves the prober's reports and the host's paused-or-handling
// status); the prober calls the handlers through execution.Executor with
// the operator's memo (Kopf's probes get it).
package probing
