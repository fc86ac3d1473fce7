package sharding

import (
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
)

// Names on the membership Leases.
const (
	// LabelGroup marks a Lease as a member of a shard group (its value).
	LabelGroup = "kopf-wasm.dev/shard-group"
	// AnnotationView is the ID of the view whose hand-over the replica has
	// done: it handles none of the objects that view gives to others.
	// Empty: it has acknowledged none yet.
	AnnotationView = "kopf-wasm.dev/shard-view"
	// AnnotationMembers lists the members of that view, for people.
	AnnotationMembers = "kopf-wasm.dev/shard-members"
	// AnnotationObjects is how many objects the replica owned at its last
	// renewal, for people (kubectl get leases -L ...).
	AnnotationObjects = "kopf-wasm.dev/shard-objects"
)

// seen is one Lease as this replica last saw it change.
type seen struct {
	lease kube.Lease
	// at is when this replica saw the Lease's resourceVersion change
	// (first sight included). Expiry is measured from it on this
	// replica's clock, as client-go's leader election does, so clocks of
	// different machines need not agree.
	at time.Time
}

// table is what this replica knows of the group's Leases, by name.
type table map[string]*seen

// update records a listing made at now: new and renewed Leases are seen
// at now, vanished ones are dropped.
func (t table) update(leases []kube.Lease, now time.Time) {
	names := make(map[string]bool, len(leases))
	for _, l := range leases {
		names[l.Name] = true
		if s := t[l.Name]; s != nil && s.lease.ResourceVersion == l.ResourceVersion {
			continue
		}
		t[l.Name] = &seen{lease: l, at: now}
	}
	for name := range t {
		if !names[name] {
			delete(t, name)
		}
	}
}

// live returns the Leases seen renewed within duration before now, with a
// holder.
func (t table) live(now time.Time, duration time.Duration) []kube.Lease {
	var out []kube.Lease
	for _, s := range t {
		if s.lease.Holder != "" && now.Sub(s.at) < duration {
			out = append(out, s.lease)
		}
	}
	return out
}

// dead returns the Leases not seen renewed for twice duration: their
// holders are gone (a holder that could not renew has stopped handling
// long before), and anyone may delete them.
func (t table) dead(now time.Time, duration time.Duration) []kube.Lease {
	var out []kube.Lease
	for _, s := range t {
		if now.Sub(s.at) >= 2*duration {
			out = append(out, s.lease)
		}
	}
	return out
}
