// Package rollout holds what canary and shadow versions of a module need
// that is not tied to the reactor: which version an object belongs to (a
// stable hash of its UID against the canary's share), the counters of
// each version that metrics and the Module resource's status show, and
// the comparison of a shadow version's response with the serving one's.
//
// The reactor (host/internal/reactor, rollouts.go) routes each object to
// one version with [Canary]; the execution layer counts calls in
// [Counters] and compares shadow calls with [Compare]; the operator
// (host/internal/operator) reads the counters into the Module's status.
// It calls nothing of the host's.
package rollout
