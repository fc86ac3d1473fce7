package settings

import "time"

// Sharding tunes `run --shards`: replicas that share the objects, each
// object handled by exactly one live replica (a rendezvous hash of its UID
// over the members). Each replica keeps one coordination.k8s.io/v1 Lease,
// "<group>-<identity>", labelled kopf-wasm.dev/shard-group=<group>; a
// replica whose Lease nobody has seen renewed for LeaseDuration is no
// member. Objects move only after every member has acknowledged, on its
// Lease, that it stopped handling the objects the new membership takes
// from it (docs/sharding.md).
type Sharding struct {
	// Enabled shares the objects with the other replicas of Group (run
	// --shards). Off: the host handles every object it watches.
	Enabled bool `json:"enabled"`
	// Group names the set of replicas that share the objects: replicas of
	// one operator use one group; two operators on one cluster use two.
	Group string `json:"group"`
	// Namespace holds the membership Leases. Empty: the namespace of the
	// host's pod ($POD_NAMESPACE), else "default".
	Namespace string `json:"namespace"`
	// Lease times each member's Lease:
	//
	// LeaseDuration is how long a replica stays a member after the others
	// last saw its Lease renewed (measured on their own clocks, as
	// client-go's leader election does). A replica killed without a
	// goodbye gives its objects away after it.
	//
	// RenewDeadline: a replica that has not renewed its Lease for this
	// long stops handling every object (cycles, timers, daemons) and
	// rejoins afresh; LeaseDuration minus RenewDeadline is the time it has
	// to stop before the others may take its objects.
	Lease
	// RenewInterval is how often each replica renews its Lease and reads
	// the others' at steady state: two requests per replica per interval,
	// whatever the number of objects.
	RenewInterval time.Duration `json:"renewInterval"`
	// SettleInterval is how often a replica reads the Leases while the
	// membership changes (until every member acknowledged it), so that
	// objects move in a few seconds rather than a few RenewIntervals.
	SettleInterval time.Duration `json:"settleInterval"`
}

// defaultSharding is client-go's lease timing, renewed every 5 s and read
// every second while the membership changes, with sharding off.
func defaultSharding() Sharding {
	return Sharding{Group: "kopf-wasm", Lease: defaultLease(), RenewInterval: 5 * time.Second, SettleInterval: time.Second}
}

// validate reports sharding settings that cannot keep two replicas from
// handling one object: a replica must renew, and stop when it cannot,
// before the others stop counting it as a member.
func (sh Sharding) validate(v *validator) {
	if sh.Group == "" || len(sh.Group) > 40 || !dnsSubdomain.MatchString(sh.Group) {
		v.fail("sharding.group", "must be 1 to 40 lower-case letters, digits, '-' or '.', got %q", sh.Group)
	}
	if sh.Namespace != "" && !dnsSubdomain.MatchString(sh.Namespace) {
		v.fail("sharding.namespace", "must be a namespace name, got %q", sh.Namespace)
	}
	sh.Lease.validate(v, "sharding", "a replica could still handle objects the others already took")
	v.positive("sharding.renewInterval", sh.RenewInterval)
	v.positive("sharding.settleInterval", sh.SettleInterval)
	if sh.RenewInterval >= sh.RenewDeadline && sh.RenewDeadline > 0 {
		v.fail("sharding.renewInterval", "must be shorter than sharding.renewDeadline (%s), or one late renewal "+
			"stops the replica; got %s", sh.RenewDeadline, sh.RenewInterval)
	}
}
