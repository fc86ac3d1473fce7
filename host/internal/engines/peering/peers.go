package peering

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"
)

// DefaultLifetime is a record's lifetime when it names none (Kopf's 60 s).
const DefaultLifetime = 60 * time.Second

// lastseenLayout is Kopf's lastseen: ISO 8601 in UTC with microseconds
// and an offset.
const lastseenLayout = "2006-01-02T15:04:05.000000-07:00"

// Peer is one record of a peering object's status.
type Peer struct {
	ID       string
	Priority int
	Lifetime time.Duration
	LastSeen time.Time
	// Message is what `kopf-wasm freeze --message` wrote (Kopf does not
	// write it; Kopf ignores it).
	Message string
}

// Deadline is when the record expires.
func (p Peer) Deadline() time.Time { return p.LastSeen.Add(p.Lifetime) }

// Dead reports whether the record has expired at now.
func (p Peer) Dead(now time.Time) bool { return !p.Deadline().After(now) }

// String is Kopf's repr of a peer.
func (p Peer) String() string {
	s := fmt.Sprintf("<Peer %s: priority=%d, lifetime=%d, lastseen=%s", p.ID, p.Priority,
		int(p.Lifetime/time.Second), p.LastSeen.UTC().Format(lastseenLayout))
	if p.Message != "" {
		s += fmt.Sprintf(", message=%q", p.Message)
	}
	return s + ">"
}

// Record is the status value of a peer, in Kopf's format.
func (p Peer) Record() map[string]any {
	r := map[string]any{
		"priority": p.Priority,
		"lifetime": int(p.Lifetime / time.Second),
		"lastseen": p.LastSeen.UTC().Format(lastseenLayout),
	}
	if p.Message != "" {
		r["message"] = p.Message
	}
	return r
}

// ParsePeers reads the records of a peering object's status; fields it does
// not know are ignored, and a record that is not an object is skipped.
func ParsePeers(status map[string]any) []Peer {
	var out []Peer
	for id, v := range status {
		rec, ok := v.(map[string]any)
		if !ok {
			continue
		}
		p := Peer{ID: id, Lifetime: DefaultLifetime, Priority: int(number(rec["priority"]))}
		if l, ok := rec["lifetime"]; ok && l != nil {
			p.Lifetime = time.Duration(number(l) * float64(time.Second))
		}
		if s, ok := rec["lastseen"].(string); ok {
			p.LastSeen = parseLastSeen(s)
		}
		p.Message, _ = rec["message"].(string)
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Peer) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func number(v any) float64 {
	switch n := v.(type) {
	case int64:
		return float64(n)
	case int:
		return float64(n)
	case float64:
		return n
	}
	return 0
}

// parseLastSeen reads Kopf's lastseen: with an offset (Kopf ≥ 1.30) or
// naive UTC (older Kopf). An unreadable one is the zero time: dead.
func parseLastSeen(s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// Identity is this host's identity among peers: $POD_ID when set, else
// Kopf's "<user>@<host>/<YYYYmmddHHMMSS>/<3 random chars>".
func Identity(now time.Time) string {
	if id := os.Getenv("POD_ID"); id != "" {
		return id
	}
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	var suffix strings.Builder
	for range 3 {
		suffix.WriteByte(letters[rand.IntN(len(letters))])
	}
	return fmt.Sprintf("%s/%s/%s", ManualIdentity(), now.UTC().Format("20060102150405"), suffix.String())
}

// ManualIdentity is the identity of manual commands (freeze, resume):
// Kopf's "<user>@<host>".
func ManualIdentity() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return name + "@" + host
}

// keepAliveInterval is Kopf's: min(lifetime, max(1, lifetime − 5..10 s)).
func keepAliveInterval(lifetime time.Duration) time.Duration {
	jitter := time.Duration(5+rand.IntN(6)) * time.Second
	return min(lifetime, max(time.Second, lifetime-jitter))
}
