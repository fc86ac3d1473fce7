// Package gate is the host-wide switch between handling and pausing: Kopf's
// "operator_paused" toggle set, shared by everything that may pause a host
// (peering, leader election) and everything that handles objects (the
// reactor's processing cycles, the spawner's timers and daemons).
//
// # Blockers
//
// A [Gate] is open (the host handles changes, timers and daemons) while no
// blocker is on. Each source of pausing owns its blockers by name and sets
// them with [Gate.Block] and [Gate.Unblock]:
//
//   - peering: one blocker per peering object ("peering/<namespace>/<name>",
//     Kopf's toggle per (peering resource, namespace)) while a peer of a
//     higher or the same priority is alive, plus "peering-crd" while a
//     mandatory peering's CRD is missing;
//   - leader election: "leader-election" while this replica does not hold
//     the Lease (it starts on, so a replica handles nothing before it leads).
//
// [Gate.Reason] joins the reasons of the blockers that are on; the host logs
// it and reports it on the liveness endpoint. [Gate.Changed] returns a
// channel closed at the next change of the set, for whoever follows the
// gate (the reactor pauses and resumes on it).
//
// # Handling in flight
//
// Every unit of handling — one processing cycle of one object, one timer
// run — is bracketed by [Gate.Enter] and [Gate.Leave]. Enter refuses while
// the gate is closed, so nothing new starts from the moment a blocker is
// set; [Gate.Drained] waits until the units that had entered before have
// left. Leader election uses that when it loses the Lease: it blocks the
// gate and waits (bounded) for the cycles in flight, well within the margin
// between the renew deadline and the lease duration, so two replicas never
// handle at once. Daemons are long calls: they are not bracketed, they are
// asked to stop with the reason "pausing" when the gate closes.
//
// # What the reactor does on a change (host/internal/reactor, pausing.go)
//
// When the gate closes: workers stop taking objects (a key taken while
// closed is parked), timers and daemons are stopped with the reason
// "pausing" and none is spawned while closed, events are no longer kept for
// event handlers. The watches stay open, so the caches stay warm (a failover
// or a resume does not re-list). When it opens again: every object in the
// watch caches is queued, parked or not — the fresh view Kopf gets from
// re-listing — and cycles start timers and daemons again. Admission
// webhooks are not behind the gate: every host serves them, paused or not.
//
// # Beside it: per-object ownership (sharding)
//
// The gate is host-wide. A per-object filter (sharding: this replica owns an
// object) sits beside it in the reactor and is asked after the gate, with
// the same two moments: before a cycle or timer run starts, and when an
// object is given away (stop its timers and daemons, wait for its cycle).
// The gate knows nothing of objects.
package gate
