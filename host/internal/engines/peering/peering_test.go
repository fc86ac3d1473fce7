package peering

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kopf-wasm/kopf-wasm/host/internal/gate"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// fakeObjects is one cluster-wide peering object, as the watch would
// hold it.
type fakeObjects struct{ status map[string]any }

func (f *fakeObjects) Get(_, name string) (*unstructured.Unstructured, bool) {
	if f.status == nil {
		return nil, false
	}
	return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": name}, "status": f.status}}, true
}

func (f *fakeObjects) Namespaces() []string { return []string{""} }

// TestDecisionsOverTime runs the decision protocol of a host of priority
// 10 on a fake clock: each step moves the clock, then decides; the gate
// and the records cleaned are the verdict.
func TestDecisionsOverTime(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	record := func(priority int, lifetime time.Duration) map[string]any {
		return Peer{Priority: priority, Lifetime: lifetime, LastSeen: t0}.Record()
	}
	type step struct {
		after     time.Duration // the clock moves by this before deciding
		open      bool          // the gate is open after the decision
		reason    string        // part of the gate's reason when closed
		cleaned   []string      // the records removed in this step
		nextAfter time.Duration // when the next decision is due, from t0 (0: none)
	}
	tests := []struct {
		name  string
		peers map[string]any
		steps []step
	}{
		{name: "alone", peers: map[string]any{}, steps: []step{{open: true}}},
		{name: "a peer of a lower priority", peers: map[string]any{"low": record(5, time.Minute)},
			steps: []step{{open: true}}},
		{name: "a peer of a higher priority pauses this host until its record expires",
			peers: map[string]any{"high": record(20, time.Minute)},
			steps: []step{
				{reason: "high", nextAfter: time.Minute},
				{after: 59 * time.Second, reason: "high", nextAfter: time.Minute},
				{after: time.Second, open: true, cleaned: []string{"high"}},
			}},
		{name: "a peer of the same priority pauses both",
			peers: map[string]any{"same": record(10, 30*time.Second)},
			steps: []step{
				{reason: "same", nextAfter: 30 * time.Second},
				{after: 31 * time.Second, open: true, cleaned: []string{"same"}},
			}},
		{name: "an expired record is cleaned at once",
			peers: map[string]any{"gone": record(20, time.Second)},
			steps: []step{{after: 2 * time.Second, open: true, cleaned: []string{"gone"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := clocktesting.NewFakeClock(t0)
			g := gate.New()
			s := settings.Default().Peering
			s.Name, s.Priority = "default", 10
			p := New(Options{Gate: g, Settings: s, Clusterwide: true, Identity: "me", Clock: clock,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			p.started() // as Run does after its first decision
			objects := &fakeObjects{status: tt.peers}
			var cleaned []string
			p.watch = objects
			p.patch = func(_ context.Context, _ kube.Resource, _, _ string, patch map[string]any) error {
				for id, v := range patch {
					if v == nil {
						cleaned = append(cleaned, id)
						delete(objects.status, id)
					}
				}
				return nil
			}
			for i, st := range tt.steps {
				clock.Step(st.after)
				cleaned = nil
				next := p.decide(t.Context())
				if g.Open() != st.open || (!st.open && !strings.Contains(g.Reason(), st.reason)) {
					t.Errorf("step %d (at +%s): open %v (%s), want open %v with %q", i, clock.Since(t0), g.Open(), g.Reason(), st.open, st.reason)
				}
				slices.Sort(cleaned)
				if !slices.Equal(cleaned, st.cleaned) {
					t.Errorf("step %d: cleaned %v, want %v (left %v)", i, cleaned, st.cleaned, slices.Sorted(maps.Keys(objects.status)))
				}
				var want time.Time
				if st.nextAfter > 0 {
					want = t0.Add(st.nextAfter)
				}
				if !next.Equal(want) {
					t.Errorf("step %d: next decision at %v, want %v", i, next, want)
				}
			}
		})
	}
}

// TestKeepAliveWritesTheClocksTime: the keep-alive record says when it was
// written by the host's clock, with the host's priority and lifetime.
func TestKeepAliveWritesTheClocksTime(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := clocktesting.NewFakeClock(t0)
	s := settings.Default().Peering
	s.Name, s.Priority, s.Lifetime = "default", 7, 90*time.Second
	p := New(Options{Gate: gate.New(), Settings: s, Clusterwide: true, Identity: "me", Clock: clock,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	p.watch = &fakeObjects{status: map[string]any{}}
	var written map[string]any
	p.patch = func(_ context.Context, _ kube.Resource, _, _ string, patch map[string]any) error {
		written = patch
		return nil
	}
	clock.Step(42 * time.Second)
	p.keepAlive(t.Context())
	got := ParsePeers(written)
	want := Peer{ID: "me", Priority: 7, Lifetime: 90 * time.Second, LastSeen: t0.Add(42 * time.Second)}
	if len(got) != 1 || got[0].ID != want.ID || got[0].Priority != want.Priority || got[0].Lifetime != want.Lifetime ||
		!got[0].LastSeen.Equal(want.LastSeen) {
		t.Errorf("keep-alive wrote %v, want %v", got, want)
	}
}
