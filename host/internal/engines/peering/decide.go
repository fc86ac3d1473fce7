package peering

import (
	"fmt"
	"strings"
	"time"
)

// Verdict is what the decision protocol says of one peering object.
type Verdict int

const (
	// Run: no live peer of a higher or the same priority.
	Run Verdict = iota
	// Yield: a live peer has a higher priority.
	Yield
	// Conflict: a live peer has the same priority; all of them pause.
	Conflict
)

// Decision is the outcome of [Decide].
type Decision struct {
	Verdict Verdict
	// Blocking are the live peers that pause this host.
	Blocking []Peer
	// Dead are the expired records of others, to remove.
	Dead []Peer
	// Next is when the earliest blocking record expires (zero when none):
	// the host decides again then.
	Next time.Time
}

// Decide is Kopf's decision protocol for a host of identity self and
// priority on the records of one peering object at now.
func Decide(peers []Peer, self string, priority int, now time.Time) Decision {
	var d Decision
	var higher, same []Peer
	for _, p := range peers {
		switch {
		case p.ID == self:
		case p.Dead(now):
			d.Dead = append(d.Dead, p)
		case p.Priority > priority:
			higher = append(higher, p)
		case p.Priority == priority:
			same = append(same, p)
		}
	}
	switch {
	case len(higher) > 0:
		d.Verdict, d.Blocking = Yield, higher
	case len(same) > 0:
		d.Verdict, d.Blocking = Conflict, same
	}
	for _, p := range d.Blocking {
		if d.Next.IsZero() || p.Deadline().Before(d.Next) {
			d.Next = p.Deadline()
		}
	}
	return d
}

// list formats peers as Kopf logs them.
func list(peers []Peer) string {
	parts := make([]string, len(peers))
	for i, p := range peers {
		parts[i] = p.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// reason is why a decision pauses the host, for the gate (the log and the
// liveness endpoint).
func (d Decision) reason(where string) string {
	ids := make([]string, len(d.Blocking))
	for i, p := range d.Blocking {
		ids[i] = fmt.Sprintf("%s (priority %d", p.ID, p.Priority)
		if p.Message != "" {
			ids[i] += ", " + p.Message
		}
		ids[i] += ")"
	}
	if d.Verdict == Conflict {
		return fmt.Sprintf("peering %s: possibly conflicting operators with the same priority: %s", where, strings.Join(ids, ", "))
	}
	return fmt.Sprintf("peering %s: paused in favour of %s", where, strings.Join(ids, ", "))
}
