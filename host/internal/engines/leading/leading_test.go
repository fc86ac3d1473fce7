package leading

import (
	"bytes"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

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
// flight, at most the margin before another replica may lead (the Lease's
// duration less the renew deadline), on the elector's clock.
func TestLosingTheLease(t *testing.T) {
	tests := []struct {
		name     string
		led      bool
		inFlight bool
		// leave: the cycle in flight leaves; otherwise the margin passes.
		leave     bool
		wantWarn  bool // "Not leading any more"
		wantError bool // "Cycles still in flight"
	}{
		{name: "never led", led: false},
		{name: "led, nothing in flight", led: true, wantWarn: true},
		{name: "led, the cycle in flight leaves", led: true, inFlight: true, leave: true, wantWarn: true},
		{name: "led, the margin passes with a cycle in flight", led: true, inFlight: true, wantWarn: true, wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			var logs bytes.Buffer
			g := gate.New()
			s := settings.Default().LeaderElection
			e, err := New(Options{Gate: g, Settings: s, Namespace: "ops", Name: "default", Identity: "me",
				Logger: slog.New(slog.NewTextHandler(&logs, nil)), Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			if tt.led {
				e.started()
			}
			if tt.inFlight && !g.Enter() {
				t.Fatal("a cycle refused while leading")
			}
			stopped := make(chan struct{})
			go func() { e.stopped(); close(stopped) }()
			if tt.inFlight {
				for !clock.HasWaiters() { // the margin's timer is set: the gate is closed
					runtime.Gosched()
				}
				if g.Enter() {
					t.Fatal("a new cycle entered after the Lease was lost")
				}
				select {
				case <-stopped:
					t.Fatal("stopped returned with a cycle in flight")
				default:
				}
				if tt.leave {
					g.Leave()
				} else {
					clock.Step(s.LeaseDuration - s.RenewDeadline)
				}
			}
			<-stopped
			if tt.inFlight && !tt.leave {
				g.Leave()
			}
			if g.Open() {
				t.Error("the gate is open after the Lease was lost")
			}
			out := logs.String()
			if got := strings.Contains(out, "Not leading any more"); got != tt.wantWarn {
				t.Errorf("warned %v, want %v:\n%s", got, tt.wantWarn, out)
			}
			if got := strings.Contains(out, "Cycles still in flight"); got != tt.wantError {
				t.Errorf("error logged %v, want %v:\n%s", got, tt.wantError, out)
			}
		})
	}
}
