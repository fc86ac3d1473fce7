package leading

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/gate"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

func newElector(t *testing.T) (*Elector, *gate.Gate) {
	g := gate.New()
	e, err := New(Options{Gate: g, Settings: settings.Default().LeaderElection, Namespace: "ops", Name: "default",
		Identity: "me", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return e, g
}

func TestTheGateOpensOnlyWhileLeading(t *testing.T) {
	e, g := newElector(t)
	if g.Open() || !strings.Contains(g.Reason(), "not the leader of Lease ops/default") {
		t.Fatalf("before leading: open %v, reason %q", g.Open(), g.Reason())
	}
	e.newLeader("other")
	if g.Reason() != "leader election: other leads (Lease ops/default)" {
		t.Fatalf("reason %q", g.Reason())
	}
	e.started()
	if !g.Open() {
		t.Fatalf("leading, yet paused: %s", g.Reason())
	}
	e.newLeader("me") // our own election changes nothing
	if !g.Open() {
		t.Fatal("paused by our own election")
	}
}

// Losing the Lease closes the gate at once and waits for the cycles in
// flight.
func TestLosingTheLeaseStopsAtOnce(t *testing.T) {
	e, g := newElector(t)
	e.started()
	if !g.Enter() {
		t.Fatal("a cycle refused while leading")
	}
	stopped := make(chan struct{})
	go func() { e.stopped(); close(stopped) }()
	deadline := time.Now().Add(5 * time.Second)
	for g.Open() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if g.Enter() {
		t.Fatal("a new cycle entered after the Lease was lost")
	}
	select {
	case <-stopped:
		t.Fatal("stopped returned with a cycle in flight")
	case <-time.After(100 * time.Millisecond):
	}
	g.Leave()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("stopped did not return once the cycle left")
	}
}
