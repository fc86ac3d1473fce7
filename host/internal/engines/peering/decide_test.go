package peering

import (
	"strings"
	"testing"
	"time"
)

func TestDecide(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	peer := func(id string, prio int, seenAgo, lifetime time.Duration) Peer {
		return Peer{ID: id, Priority: prio, LastSeen: now.Add(-seenAgo), Lifetime: lifetime}
	}
	tests := []struct {
		name     string
		peers    []Peer
		verdict  Verdict
		blocking []string
		dead     []string
		next     time.Time
	}{
		{"alone", []Peer{peer("me", 0, 0, time.Minute)}, Run, nil, nil, time.Time{}},
		{"lower priority", []Peer{peer("me", 0, 0, time.Minute), peer("low", -1, 0, time.Minute)}, Run, nil, nil, time.Time{}},
		{"higher priority", []Peer{peer("me", 0, 0, time.Minute), peer("high", 100, 10*time.Second, time.Minute)},
			Yield, []string{"high"}, nil, now.Add(50 * time.Second)},
		{"same priority", []Peer{peer("me", 0, 0, time.Minute), peer("twin", 0, 0, 30*time.Second)},
			Conflict, []string{"twin"}, nil, now.Add(30 * time.Second)},
		{"higher wins over same", []Peer{peer("twin", 0, 0, time.Minute), peer("high", 5, 0, time.Minute)},
			Yield, []string{"high"}, nil, now.Add(time.Minute)},
		{"a dead higher peer does not block and is cleaned", []Peer{peer("high", 100, 61*time.Second, time.Minute)},
			Run, nil, []string{"high"}, time.Time{}},
		{"expiring exactly now is dead", []Peer{peer("high", 100, time.Minute, time.Minute)}, Run, nil, []string{"high"}, time.Time{}},
		{"my own record never blocks", []Peer{peer("me", 666, 0, time.Minute)}, Run, nil, nil, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Decide(tt.peers, "me", 0, now)
			if d.Verdict != tt.verdict || ids(d.Blocking) != strings.Join(tt.blocking, ",") ||
				ids(d.Dead) != strings.Join(tt.dead, ",") || !d.Next.Equal(tt.next) {
				t.Errorf("Decide = %v blocking %q dead %q next %v; want %v %q %q %v",
					d.Verdict, ids(d.Blocking), ids(d.Dead), d.Next, tt.verdict, tt.blocking, tt.dead, tt.next)
			}
		})
	}
}

func ids(peers []Peer) string {
	var out []string
	for _, p := range peers {
		out = append(out, p.ID)
	}
	return strings.Join(out, ",")
}

func TestParsePeersReadsKopfRecords(t *testing.T) {
	status := map[string]any{
		"kopf@pod/20260102030405/abc": map[string]any{"priority": int64(100), "lifetime": int64(60), "lastseen": "2026-01-02T03:04:05.123456+00:00"},
		"old-kopf":                    map[string]any{"priority": 1.0, "lastseen": "2026-01-02T03:04:05.123456"},
		"frozen":                      map[string]any{"priority": int64(200), "lifetime": int64(30), "lastseen": "2026-01-02T03:04:05.000000+00:00", "message": "upgrade", "future": true},
		"garbage":                     "not a record",
	}
	peers := ParsePeers(status)
	if len(peers) != 3 {
		t.Fatalf("ParsePeers = %v", peers)
	}
	want := map[string]string{
		"frozen":                      `<Peer frozen: priority=200, lifetime=30, lastseen=2026-01-02T03:04:05.000000+00:00, message="upgrade">`,
		"kopf@pod/20260102030405/abc": "<Peer kopf@pod/20260102030405/abc: priority=100, lifetime=60, lastseen=2026-01-02T03:04:05.123456+00:00>",
		"old-kopf":                    "<Peer old-kopf: priority=1, lifetime=60, lastseen=2026-01-02T03:04:05.123456+00:00>",
	}
	for _, p := range peers {
		if p.String() != want[p.ID] {
			t.Errorf("%s: %s, want %s", p.ID, p, want[p.ID])
		}
	}
	rec := peers[0].Record()
	if rec["lastseen"] != "2026-01-02T03:04:05.000000+00:00" || rec["lifetime"] != 30 || rec["priority"] != 200 {
		t.Errorf("Record = %v", rec)
	}
}

func TestKeepAliveIntervalIsKopfs(t *testing.T) {
	for range 50 {
		if d := keepAliveInterval(60 * time.Second); d < 50*time.Second || d > 55*time.Second {
			t.Fatalf("interval %s for 60s", d)
		}
		if d := keepAliveInterval(3 * time.Second); d != time.Second {
			t.Fatalf("interval %s for 3s", d)
		}
	}
}

func TestIdentity(t *testing.T) {
	t.Setenv("POD_ID", "")
	id := Identity(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if !strings.HasPrefix(id, ManualIdentity()+"/20260102030405/") || len(id) != len(ManualIdentity())+len("/20260102030405/")+3 {
		t.Errorf("Identity = %q", id)
	}
	t.Setenv("POD_ID", "op-7d9f-x")
	if id := Identity(time.Now()); id != "op-7d9f-x" {
		t.Errorf("Identity with POD_ID = %q", id)
	}
}
