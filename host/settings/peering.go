package settings

import "time"

func defaultPeering() Peering {
	return Peering{Name: "default", Lifetime: 60 * time.Second,
		SyncTimeout: 30 * time.Second, CRDRetryInterval: 5 * time.Second, GoodbyeTimeout: 5 * time.Second}
}

func defaultLeaderElection() LeaderElection {
	return LeaderElection{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
}

// validate reports peering settings that cannot work.
func (p Peering) validate(v *validator) {
	if !p.Standalone && (p.Name == "" || !dnsSubdomain.MatchString(p.Name)) {
		v.fail("peering.name", "must be an object name (lower-case letters, digits, '-', '.'), got %q", p.Name)
	}
	if p.Lifetime < time.Second || p.Lifetime%time.Second != 0 {
		v.fail("peering.lifetime", "must be whole seconds, at least 1s, got %s", p.Lifetime)
	}
	v.positive("peering.syncTimeout", p.SyncTimeout)
	v.positive("peering.crdRetryInterval", p.CRDRetryInterval)
	v.positive("peering.goodbyeTimeout", p.GoodbyeTimeout)
}

// validate reports leader election settings under which two replicas could
// lead at once.
func (l LeaderElection) validate(v *validator) {
	if l.LeaseName != "" && !dnsSubdomain.MatchString(l.LeaseName) {
		v.fail("leaderElection.leaseName", "must be an object name, got %q", l.LeaseName)
	}
	if l.Namespace != "" && !dnsSubdomain.MatchString(l.Namespace) {
		v.fail("leaderElection.namespace", "must be a namespace name, got %q", l.Namespace)
	}
	v.positive("leaderElection.leaseDuration", l.LeaseDuration)
	v.positive("leaderElection.renewDeadline", l.RenewDeadline)
	v.positive("leaderElection.retryPeriod", l.RetryPeriod)
	if l.RenewDeadline >= l.LeaseDuration && l.LeaseDuration > 0 {
		v.fail("leaderElection.renewDeadline", "must be shorter than leaderElection.leaseDuration (%s), or a leader "+
			"could still handle after another took over; got %s", l.LeaseDuration, l.RenewDeadline)
	}
	if float64(l.RenewDeadline) <= 1.2*float64(l.RetryPeriod) && l.RetryPeriod > 0 {
		v.fail("leaderElection.retryPeriod", "must be below leaderElection.renewDeadline/1.2 (%s), as client-go "+
			"requires; got %s", l.RenewDeadline, l.RetryPeriod)
	}
}
