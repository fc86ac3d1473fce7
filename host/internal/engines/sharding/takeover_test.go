package sharding

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// takeoverTarget is a reactor that records what Owns said about the
// objects a settling view gives to its replica at the moment the reactor
// is asked to take them, before it has read their versions.
type takeoverTarget struct {
	objects []string
	shard   func() *Shard

	mu       sync.Mutex
	taken    int // objects taken so far
	admitted int // of those, admitted by Owns before their versions were read
	refused  int // of those, not admitted by Owns once admit was called
}

func (t *takeoverTarget) Release(context.Context) error { return nil }

func (t *takeoverTarget) Acquire(_ context.Context, before, after func(uid string) bool, admit func() bool) (int, error) {
	s := t.shard()
	t.mu.Lock()
	defer t.mu.Unlock()
	if admit != nil {
		for _, uid := range t.objects {
			if !after(uid) || before(uid) {
				continue
			}
			// The object is taken: until the reactor has read its version,
			// its watch cache may not have the previous owner's last write,
			// and a cycle that Owns lets through handles a stale object.
			t.taken++
			if s.Owns(uid) {
				t.admitted++
			}
		}
		if !admit() {
			return 0, nil
		}
		for _, uid := range t.objects {
			if after(uid) && !before(uid) && !s.Owns(uid) {
				t.refused++
			}
		}
	}
	owned := 0
	for _, uid := range t.objects {
		if s.Owns(uid) {
			owned++
		}
	}
	return owned, nil
}

// TestTakeOverAdmitsObjectsOnlyAfterTheirVersions settles a replica alone
// and checks that Owns admits none of the objects it takes before the
// reactor has read their versions (TestShardingSplitsObjectsAndHandsThemOver
// saw a joining replica run an update handler the previous owner had run:
// the object's cycle ran on a stale cache between the grant widening and
// the version read).
func TestTakeOverAdmitsObjectsOnlyAfterTheirVersions(t *testing.T) {
	st := newStore()
	var s *Shard
	tgt := &takeoverTarget{objects: uids(50), shard: func() *Shard { return s }}
	s = New(Options{
		Identity: "a", Namespace: "ns", Settings: fastSettings(), Leases: st.client("a"), Target: tgt,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	defer func() { cancel(); <-done }()

	deadline := time.Now().Add(20 * time.Second)
	for {
		tgt.mu.Lock()
		taken, admitted, refused := tgt.taken, tgt.admitted, tgt.refused
		tgt.mu.Unlock()
		if taken > 0 {
			if admitted > 0 {
				t.Fatalf("%d of %d objects taken over were admitted by Owns before their versions were read", admitted, taken)
			}
			if refused > 0 {
				t.Fatalf("%d of %d objects taken over were not admitted by Owns once admitted", refused, taken)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("after 20s the replica took no object")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGrantCoversTheViewsThatTakeNothing: settling a view that only adds
// members to every view of the grant takes nothing over (no versions to
// read); the others here take some of 2,000 objects.
func TestGrantCoversTheViewsThatTakeNothing(t *testing.T) {
	abc, abcd, ab, ac := NewView([]string{"a", "b", "c"}), NewView([]string{"a", "b", "c", "d"}),
		NewView([]string{"a", "b"}), NewView([]string{"a", "c"})
	for _, tc := range []struct {
		name  string
		g     grant
		v     View
		wants bool
	}{
		{"nothing granted yet", grant{none: true}, abc, false},
		{"a replica joins", grant{views: []View{abc}}, abcd, true},
		{"the same view", grant{views: []View{abc}}, abc, true},
		{"a replica leaves", grant{views: []View{abcd}}, abc, false},
		{"two views adopted, then a join of both", grant{views: []View{ab, ac}}, abc, true},
		{"one of two views not covered", grant{views: []View{ab, abcd}}, abc, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.g.covers(tc.v); got != tc.wants {
				t.Fatalf("covers = %v, want %v", got, tc.wants)
			}
			next := grant{views: []View{tc.v}}
			taken := 0
			for _, uid := range uids(2000) {
				if next.owns("a", uid) && !tc.g.owns("a", uid) {
					taken++
				}
			}
			if tc.wants && taken > 0 {
				t.Errorf("covers, but a takes %d objects", taken)
			}
			if !tc.wants && taken == 0 {
				t.Errorf("not covered, but a takes none of 2000 objects")
			}
		})
	}
}
