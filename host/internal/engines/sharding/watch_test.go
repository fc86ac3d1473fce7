package sharding

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
)

// watchClient is a client that also follows the store (LeaseWatcher).
type watchClient struct{ *client }

func (c watchClient) WatchLeases(ctx context.Context, _, _ string, _ time.Duration, event func(kube.LeaseEvent)) error {
	ch := make(chan kube.LeaseEvent, 4096)
	c.s.mu.Lock()
	for _, l := range c.s.leases {
		ch <- kube.LeaseEvent{Lease: l}
	}
	c.s.subs = append(c.s.subs, ch)
	c.s.mu.Unlock()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev := <-ch:
			event(ev)
		}
	}
}

// TestWatchWakesTheMembership: with intervals of minutes, replicas that
// start, join and leave settle within seconds when their Leases client
// watches: an appearing Lease, a deleted one and every acknowledgement
// wake the others' listings. (Without the watch the first listing after
// a change comes a settleInterval, here 2 minutes, later.)
func TestWatchWakesTheMembership(t *testing.T) {
	st := newStore()
	w := &world{t: t, objects: uids(300), handles: map[string]map[string]bool{}, shards: map[string]*Shard{}}
	set := fastSettings()
	set.LeaseDuration, set.RenewDeadline, set.RenewInterval, set.SettleInterval =
		10*time.Minute, 5*time.Minute, 2*time.Minute, 2*time.Minute
	start := func(id string) *replica {
		w.mu.Lock()
		w.handles[id] = map[string]bool{}
		w.mu.Unlock()
		s := New(Options{
			Identity: id, Namespace: "ns", Settings: set, Leases: watchClient{&client{s: st, holder: id}},
			Target: target{w: w, id: id}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		w.mu.Lock()
		w.shards[id] = s
		w.mu.Unlock()
		ctx, cancel := context.WithCancel(context.Background())
		r := &replica{cancel: cancel, done: make(chan struct{}), shard: s}
		go func() { defer close(r.done); s.Run(ctx) }()
		return r
	}
	r := map[string]*replica{}
	for _, id := range []string{"a", "b"} {
		r[id] = start(id)
	}
	w.covered(t, "a", "b")
	r["c"] = start("c") // joins: its new Lease wakes a and b
	w.covered(t, "a", "b", "c")
	r["a"].cancel() // leaves cleanly: its deleted Lease wakes b and c
	<-r["a"].done
	if err := r["a"].shard.Leave(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.kill("a", r["a"])
	w.covered(t, "b", "c")
	for _, id := range []string{"b", "c"} {
		w.kill(id, r[id])
	}
}
