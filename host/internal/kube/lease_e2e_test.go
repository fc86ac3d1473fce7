package kube

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// candidate is one Elect campaign in a test, with what its callbacks saw.
type candidate struct {
	id     string
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	events  []string // "started", "stopped", "leader X", in order
	started time.Time
}

func (c *candidate) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, s)
	if s == "started" {
		c.started = time.Now()
	}
}

func (c *candidate) seen() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.events, ", ")
}

func (c *candidate) leads() bool {
	s := c.seen()
	return strings.Contains(s, "started") && !strings.Contains(s, "stopped")
}

// campaign runs one Elect on its own client for the Lease ns/name.
func campaign(t *testing.T, ns, id string, d [3]time.Duration) *candidate {
	c, _ := newClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	cand := &candidate{id: id, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(cand.done)
		err := c.Elect(ctx, Election{Namespace: ns, Name: "leader", Identity: id,
			LeaseDuration: d[0], RenewDeadline: d[1], RetryPeriod: d[2],
			OnStarted: func() { cand.add("started") }, OnStopped: func() { cand.add("stopped") },
			OnNewLeader: func(holder string) { cand.add("leader " + holder) }})
		if err != nil {
			t.Errorf("%s: Elect: %v", id, err)
		}
	}()
	t.Cleanup(func() { cancel(); <-cand.done; c.Close() })
	return cand
}

// TestElectTwoCandidates: two candidates on one Lease of the real API
// server. Exactly one leads, and the other sees it lead; when the leader's
// context ends it stops, releases the Lease, and the other takes it over
// at its next attempt — well within the lease duration (60 s) that it
// would have to wait for a Lease left to expire.
func TestElectTwoCandidates(t *testing.T) {
	_, dyn := newClient(t)
	ns := namespace(t, dyn, "elect-two")
	durations := [3]time.Duration{60 * time.Second, 40 * time.Second, time.Second}

	a := campaign(t, ns, "a", durations)
	eventually(t, "a leads", a.leads)
	b := campaign(t, ns, "b", durations)
	eventually(t, "b sees a lead", func() bool { return b.seen() == "leader a" })
	if !a.leads() || b.leads() {
		t.Fatalf("a: %s; b: %s; want a alone to lead", a.seen(), b.seen())
	}
	if got := a.seen(); got != "leader a, started" {
		t.Errorf("a's callbacks: %s", got)
	}

	// a renews; b goes on waiting.
	cs, _ := newClient(t)
	first := readLease(t, cs, ns)
	eventually(t, "a renews", func() bool { return readLease(t, cs, ns).renewMicro > first.renewMicro })
	if b.leads() {
		t.Fatalf("b leads while a renews: %s", b.seen())
	}

	released := time.Now()
	a.cancel()
	<-a.done
	if got := a.seen(); got != "leader a, started, stopped" {
		t.Errorf("a's callbacks after its end: %s", got)
	}
	eventually(t, "b takes over", b.leads)
	took := b.started.Sub(released)
	t.Logf("b took over %s after a's context ended", took)
	// Without the release b could take the Lease only once a whole lease
	// duration (60 s) had passed since it last saw a renew, a second or two
	// before released: 45 s tells the two apart with no bound on how fast
	// the machine must be short of a 45 s stall.
	if took >= durations[0]*3/4 {
		t.Errorf("b took over %s after a's context ended, not before the Lease could expire (%s): was it released?", took, durations[0])
	}
	if got := b.seen(); got != "leader a, leader b, started" {
		t.Errorf("b's callbacks: %s", got)
	}
	if r := readLease(t, cs, ns); r.holder != "b" || r.durationSeconds != 60 || r.transitions != 1 {
		t.Errorf("the Lease: %+v; want b's, 60 s, 1 transition", r)
	}

	b.cancel()
	<-b.done
	if r := readLease(t, cs, ns); r.holder != "" || r.durationSeconds != 1 || r.transitions != 1 {
		t.Errorf("the released Lease: %+v; want no holder, 1 s, 1 transition", r)
	}
}

// readLease reads the test's Lease through the elector's own requests.
func readLease(t *testing.T, c *Client, ns string) leaseRecord {
	t.Helper()
	l, err := leaseAPI{c: c, namespace: ns, name: "leader", retry: c.retry.single()}.get(context.Background(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return recordOf(l)
}
