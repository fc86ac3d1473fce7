package gate

import (
	"context"
	"testing"
	"time"
)

func TestBlockersAndReason(t *testing.T) {
	g := New()
	steps := []struct {
		name       string
		do         func() bool
		wantResult bool
		wantOpen   bool
		wantReason string
	}{
		{"block peering", func() bool { return g.Block("peering/ns/default", "a peer of priority 100") }, true, false, "a peer of priority 100"},
		{"block leader election", func() bool { return g.Block("leader-election", "not the leader") }, false, false, "not the leader; a peer of priority 100"},
		{"unblock peering", func() bool { return g.Unblock("peering/ns/default") }, false, false, "not the leader"},
		{"unblock unknown", func() bool { return g.Unblock("nothing") }, false, false, "not the leader"},
		{"unblock leader election", func() bool { return g.Unblock("leader-election") }, true, true, ""},
	}
	for _, s := range steps {
		if got := s.do(); got != s.wantResult {
			t.Errorf("%s: returned %v, want %v", s.name, got, s.wantResult)
		}
		if g.Open() != s.wantOpen || g.Reason() != s.wantReason {
			t.Errorf("%s: open %v reason %q, want %v %q", s.name, g.Open(), g.Reason(), s.wantOpen, s.wantReason)
		}
	}
}

func TestChangedIsClosedAtEachChange(t *testing.T) {
	g := New()
	ch := g.Changed()
	g.Block("a", "r")
	select {
	case <-ch:
	default:
		t.Fatal("Changed not closed by Block")
	}
	ch = g.Changed()
	g.Block("a", "r") // the same: no change
	select {
	case <-ch:
		t.Fatal("Changed closed without a change")
	default:
	}
	g.Unblock("a")
	select {
	case <-ch:
	default:
		t.Fatal("Changed not closed by Unblock")
	}
}

func TestEnterRefusedWhileClosedAndDrained(t *testing.T) {
	g := New()
	if !g.Enter() {
		t.Fatal("Enter refused on an open gate")
	}
	g.Block("a", "r")
	if g.Enter() {
		t.Fatal("Enter let in while closed")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := g.Drained(ctx); err == nil {
		t.Fatal("Drained returned with a unit in flight")
	}
	done := make(chan error)
	go func() { done <- g.Drained(t.Context()) }()
	g.Leave()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Drained did not return after Leave")
	}
	if g.InFlight() != 0 {
		t.Fatalf("in flight %d", g.InFlight())
	}
}

func TestNilGateIsOpen(t *testing.T) {
	var g *Gate
	if !g.Open() || !g.Enter() || g.Reason() != "" || g.Changed() != nil || g.Drained(t.Context()) != nil {
		t.Fatal("a nil gate is not open")
	}
	g.Leave()
}
