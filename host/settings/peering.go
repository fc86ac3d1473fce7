package settings

import "time"

// Peering is Kopf's settings.peering: how hosts that share a peering
// object (KopfPeering in each served namespace, ClusterKopfPeering for a
// cluster-wide host; kopf.dev/v1 or the legacy zalando.org/v1) see each
// other. The host with the highest priority handles; the others pause; hosts
// of the same priority all pause (docs/peering.md).
type Peering struct {
	// Name of the peering object. Kopf's "default".
	Name string `json:"name"`
	// Priority of this host among its peers (run -p; --dev sets 666).
	Priority int `json:"priority"`
	// Lifetime of this host's keep-alive record: the others count it as
	// alive until its lastseen plus this. Kopf's 60 s; whole seconds.
	Lifetime time.Duration `json:"lifetime"`
	// Mandatory pauses the host until the peering CRD and object exist
	// (run -P NAME sets it). Otherwise (auto) a missing CRD or object means
	// running as if standalone.
	Mandatory bool `json:"mandatory"`
	// Standalone runs with no peering at all (run --standalone).
	Standalone bool `json:"standalone"`
	// Clusterwide uses the ClusterKopfPeering even for a host that serves
	// namespaces (Kopf's settings.peering.clusterwide); a host run with -A
	// always does.
	Clusterwide bool `json:"clusterwide"`
	// Stealth keeps the keep-alives out of the log.
	Stealth bool `json:"stealth"`
	// SyncTimeout bounds the first listing of the peering objects: past
	// it an auto peering gives up and the host runs as if standalone (a
	// mandatory one stays paused until the listing succeeds).
	SyncTimeout time.Duration `json:"syncTimeout"`
	// CRDRetryInterval is how often a mandatory peering looks for its
	// CRD again while it is missing (the host stays paused meanwhile).
	CRDRetryInterval time.Duration `json:"crdRetryInterval"`
	// GoodbyeTimeout bounds the removal of this host's keep-alive records
	// when it exits; a record left behind blocks others until its
	// lifetime passes.
	GoodbyeTimeout time.Duration `json:"goodbyeTimeout"`
}

// defaultPeering is Kopf's: the peering object "default", a keep-alive
// lifetime of 60 s.
func defaultPeering() Peering {
	return Peering{Name: "default", Lifetime: 60 * time.Second,
		SyncTimeout: 30 * time.Second, CRDRetryInterval: 5 * time.Second, GoodbyeTimeout: 5 * time.Second}
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
