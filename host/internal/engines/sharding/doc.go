// Package sharding spreads the objects over the replicas of one operator
// (run --shards): every object belongs to exactly one live replica, by a
// rendezvous hash of its UID over the members ([View]), and when a replica
// joins or leaves, objects move without a moment when two replicas handle
// one object. No operator framework offers this; Kopf's peering pauses all
// replicas but one.
//
// # Membership
//
// Each replica keeps one coordination.k8s.io/v1 Lease,
// "<group>-<identity>", labelled [LabelGroup]=<group>
// (settings.Sharding), renewed every RenewInterval; in the same interval
// it lists the group's Leases. A replica is a member while this replica
// has seen its Lease change within LeaseDuration, measured on its own
// clock from when it saw the change, as client-go's leader election
// measures (so machines' clocks need not agree). That is two requests per
// replica per interval, whatever the number of objects or changes. When
// Leases is also a [LeaseWatcher] (kube.Client is), a Lease that appears,
// goes or acknowledges another view wakes the listing at once. A
// replica that stops cleanly deletes its Lease ([Shard.Leave]); the
// Leases of killed replicas are deleted by the others after twice
// LeaseDuration.
//
// # Hand-over: how no object is handled twice
//
// What a replica may handle is a grant: the objects that every view it
// adopted since the last settled one gives to it (nothing at first).
// [Shard.Owns] answers from it; the reactor asks before every processing
// cycle, and stops the objects it no longer admits ([Target.Release]).
//
//  1. Adopt: a replica that lists a new set of live members adds that
//     view to its grant, which can only narrow it. It then releases what
//     the grant no longer admits — cycles in flight finish, timers and
//     daemons stop (daemons with the reason "pausing") — and only then
//     publishes the view's ID on its Lease ([AnnotationView]): "I handle
//     nothing this view gives to another".
//  2. Settle: once this replica's own acknowledgement is on its Lease and
//     a listing made after it shows every other member's Lease with the
//     same ID, the view replaces the grant: the replica takes the objects
//     the view gives it and queues them ([Target.Acquire]); the reactor
//     first lets its watch cache catch up with the previous owner's last
//     writes (it reads the objects' current resourceVersions from the API
//     server), so that a change the previous owner handled never looks
//     new.
//
// So a replica starts an object only after every member of its view said
// it stopped every object that view gives away. A member that might still
// hold it but is missing from the view is one whose Lease was not seen
// renewed for LeaseDuration; such a replica has fenced itself: when it has
// not renewed for RenewDeadline (shorter than LeaseDuration) it releases
// everything and owns nothing until a view settles again. The margin
// between the two (5 s by default) is the time a fenced replica has to
// stop its daemons; a daemon that ignores its stop longer than that (its
// cancellation timeout) can overlap with its successor, and nothing else
// can. A replica that acknowledged a view and moved on to a newer one
// before the others settled is safe as well: its grant only narrowed,
// and any view it takes objects from needs everybody's new
// acknowledgement again.
//
// Objects keep every bit of their state on the object (progress,
// diff-base), so the new owner continues where the old one stopped: a
// handler interrupted by the hand-over is retried, a finished one is not
// called again, and the resume handlers run on the new owner as after a
// restart. Timers and daemons start on the new owner with the object's
// first cycle there.
//
// # What it says
//
// Every settled view is logged with its members and how many of the
// watched objects this replica owns; each Lease carries the view it
// acknowledged, its members and the replica's object count
// ([AnnotationObjects]) — `kubectl get leases -l kopf-wasm.dev/shard-group`
// shows the split.
package sharding
