package settings

import "time"

// LeaderElection tunes `run --leader-elect`: replicas compete for one
// coordination.k8s.io/v1 Lease through client-go's leader election; only
// the holder handles changes, timers and daemons. The durations are
// client-go's (and controller-runtime's defaults).
type LeaderElection struct {
	// Enabled turns leader election on (run --leader-elect).
	Enabled bool `json:"enabled"`
	// Namespace of the Lease (run --leader-elect-namespace). Empty: the
	// namespace of the host's pod ($POD_NAMESPACE), else "default".
	Namespace string `json:"namespace"`
	// LeaseName names the Lease. Empty: the peering name (peering.name).
	LeaseName string `json:"leaseName"`
	// Lease times the Lease as client-go's leader election does:
	//
	// LeaseDuration: how long the others wait, after they last saw the
	// Lease renewed, before they take it. A killed leader is replaced
	// after about this long.
	//
	// RenewDeadline: a leader that could not renew for this long stops
	// handling at once; LeaseDuration minus RenewDeadline is its margin to
	// stop before another replica may lead.
	Lease
	// RetryPeriod: how often the leader renews and the others try to
	// acquire.
	RetryPeriod time.Duration `json:"retryPeriod"`
}

// defaultLeaderElection is client-go's timing, with leader election off.
func defaultLeaderElection() LeaderElection {
	return LeaderElection{Lease: defaultLease(), RetryPeriod: 2 * time.Second}
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
	l.Lease.validate(v, "leaderElection", "a leader could still handle after another took over")
	v.positive("leaderElection.retryPeriod", l.RetryPeriod)
	if float64(l.RenewDeadline) <= 1.2*float64(l.RetryPeriod) && l.RetryPeriod > 0 {
		v.fail("leaderElection.retryPeriod", "must be below leaderElection.renewDeadline/1.2 (%s), as client-go "+
			"requires; got %s", l.RenewDeadline, l.RetryPeriod)
	}
}
