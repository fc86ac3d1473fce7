package settings

import "time"

// Lease is the timing of a coordination.k8s.io/v1 Lease that one replica
// holds and renews while the others read it, as client-go's leader
// election times it. Leader election (one Lease, one leader) and sharding
// (one Lease per member) embed it, so its keys sit in their groups
// (leaderElection.leaseDuration, sharding.leaseDuration) and its checks
// are written once; each group adds how often it renews, under its own
// key and rule. Kopf's peering times its keep-alive records by
// peering.lifetime alone: a peer has no renew deadline.
type Lease struct {
	// LeaseDuration is how long the others count the holder as alive
	// after they last saw its Lease renewed, measured on their own clocks:
	// a holder killed without a goodbye is replaced after about this long.
	LeaseDuration time.Duration `json:"leaseDuration"`
	// RenewDeadline: a holder that could not renew its Lease for this long
	// stops at once; LeaseDuration minus RenewDeadline is its margin to
	// stop before another may take over.
	RenewDeadline time.Duration `json:"renewDeadline"`
}

// defaultLease is client-go's (and controller-runtime's) 15 s lease
// renewed within 10 s.
func defaultLease() Lease {
	return Lease{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second}
}

// validate reports timings under which a holder could still act after
// another took over. group is the key of the embedding group
// ("sharding"); overlap says what would then go wrong.
func (l Lease) validate(v *validator, group, overlap string) {
	v.positive(group+".leaseDuration", l.LeaseDuration)
	v.positive(group+".renewDeadline", l.RenewDeadline)
	if l.RenewDeadline >= l.LeaseDuration && l.LeaseDuration > 0 {
		v.fail(group+".renewDeadline", "must be shorter than %s.leaseDuration (%s), or %s; got %s",
			group, l.LeaseDuration, overlap, l.RenewDeadline)
	}
}
