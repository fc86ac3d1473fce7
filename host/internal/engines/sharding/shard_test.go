package sharding

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// store is an in-memory Lease API with the API server's optimistic
// concurrency; a replica's requests fail while it is cut off.
type store struct {
	mu     sync.Mutex
	rv     int
	leases map[string]kube.Lease
	cut    map[string]bool // by holder
	subs   []chan kube.LeaseEvent
}

// publish sends an event to the watching clients (s.mu held).
func (s *store) publish(ev kube.LeaseEvent) {
	for _, ch := range s.subs {
		ch <- ev
	}
}

func newStore() *store { return &store{leases: map[string]kube.Lease{}, cut: map[string]bool{}} }

func (s *store) client(holder string) Leases { return &client{s: s, holder: holder} }

type client struct {
	s      *store
	holder string
}

func (c *client) down() error {
	if c.s.cut[c.holder] {
		return fmt.Errorf("kube: %w: cut off", kube.ErrUnavailable)
	}
	return nil
}

func (c *client) ListLeases(_ context.Context, _, _ string) ([]kube.Lease, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if err := c.down(); err != nil {
		return nil, err
	}
	out := make([]kube.Lease, 0, len(c.s.leases))
	for _, l := range c.s.leases {
		out = append(out, l)
	}
	return out, nil
}

func (c *client) PutLease(_ context.Context, l kube.Lease) (kube.Lease, error) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if err := c.down(); err != nil {
		return kube.Lease{}, err
	}
	old, exists := c.s.leases[l.Name]
	switch {
	case l.ResourceVersion == "" && exists:
		return kube.Lease{}, kube.ErrExists
	case l.ResourceVersion != "" && !exists:
		return kube.Lease{}, kube.ErrGone
	case l.ResourceVersion != "" && old.ResourceVersion != l.ResourceVersion:
		return kube.Lease{}, kube.ErrConflict
	}
	c.s.rv++
	l.ResourceVersion = strconv.Itoa(c.s.rv)
	c.s.leases[l.Name] = l
	c.s.publish(kube.LeaseEvent{Lease: l})
	return l, nil
}

func (c *client) DeleteLease(_ context.Context, _, name, rv string) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if err := c.down(); err != nil {
		return err
	}
	if old, ok := c.s.leases[name]; ok && (rv == "" || old.ResourceVersion == rv) {
		delete(c.s.leases, name)
		c.s.publish(kube.LeaseEvent{Lease: old, Deleted: true})
	}
	return nil
}

// world is the objects and who handles which: a replica handles an object
// from the moment its Owns admits it until a Release after Owns stopped
// admitting it returns. Two replicas handling one object is a violation.
type world struct {
	t       *testing.T
	objects []string
	mu      sync.Mutex
	handles map[string]map[string]bool // replica -> uids
	shards  map[string]*Shard
	bad     atomic.Int32
}

func (w *world) take(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.shards[id]
	if s == nil {
		return
	}
	for _, uid := range w.objects {
		if !s.Owns(uid) || w.handles[id][uid] {
			continue
		}
		for other, h := range w.handles {
			if other != id && h[uid] && w.bad.Add(1) <= 3 {
				w.t.Errorf("object %s is handled by %s and %s at once", uid, other, id)
			}
		}
		w.handles[id][uid] = true
	}
}

// target is one replica's reactor.
type target struct {
	w  *world
	id string
}

func (t target) Release(context.Context) error {
	time.Sleep(5 * time.Millisecond) // cycles finishing, daemons stopping
	t.w.mu.Lock()
	defer t.w.mu.Unlock()
	for uid := range t.w.handles[t.id] {
		if s := t.w.shards[t.id]; s == nil || !s.Owns(uid) {
			delete(t.w.handles[t.id], uid)
		}
	}
	return nil
}

func (t target) Acquire(_ context.Context, _, _ func(string) bool, admit func() bool) (int, error) {
	if admit != nil && !admit() {
		return 0, nil
	}
	t.w.take(t.id)
	t.w.mu.Lock()
	defer t.w.mu.Unlock()
	return len(t.w.handles[t.id]), nil
}

type replica struct {
	cancel context.CancelFunc
	done   chan struct{}
	shard  *Shard
}

func fastSettings() settings.Sharding {
	s := settings.Default().Sharding
	s.LeaseDuration, s.RenewDeadline, s.RenewInterval, s.SettleInterval =
		900*time.Millisecond, 600*time.Millisecond, 150*time.Millisecond, 20*time.Millisecond
	return s
}

func (w *world) start(st *store, id string) *replica {
	w.mu.Lock()
	w.handles[id] = map[string]bool{}
	w.mu.Unlock()
	s := New(Options{
		Identity: id, Namespace: "ns", Settings: fastSettings(), Leases: st.client(id), Target: target{w: w, id: id},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	w.mu.Lock()
	w.shards[id] = s
	w.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{cancel: cancel, done: make(chan struct{}), shard: s}
	go func() { defer close(r.done); s.Run(ctx) }()
	return r
}

// kill ends a replica as SIGKILL would: it handles nothing from now on,
// and its Lease stays.
func (w *world) kill(id string, r *replica) {
	w.mu.Lock()
	delete(w.shards, id)
	delete(w.handles, id)
	w.mu.Unlock()
	r.cancel()
	<-r.done
}

// covered waits until every object is handled by exactly one of want.
func (w *world) covered(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for id := range w.shards {
			w.take(id) // cycles of objects Owns admits start any time
		}
		w.mu.Lock()
		missing, extra := 0, 0
		for _, uid := range w.objects {
			n := 0
			for _, id := range want {
				if w.handles[id][uid] {
					n++
				}
			}
			if n == 0 {
				missing++
			}
		}
		for id, h := range w.handles {
			if !contains(want, id) {
				extra += len(h)
			}
		}
		w.mu.Unlock()
		if missing == 0 && extra == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20s: %d objects handled by none of %v, %d by other replicas", missing, want, extra)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestHandOverNeverHandlesAnObjectTwice runs replicas that join, leave,
// die and get cut off from the API, and checks every 2 ms that no object
// is handled by two of them while every object ends up handled by one.
func TestHandOverNeverHandlesAnObjectTwice(t *testing.T) {
	st := newStore()
	w := &world{t: t, objects: uids(600), handles: map[string]map[string]bool{}, shards: map[string]*Shard{}}
	stop := make(chan struct{})
	var checker sync.WaitGroup
	checker.Add(1)
	go func() {
		defer checker.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			w.mu.Lock()
			ids := make([]string, 0, len(w.shards))
			for id := range w.shards {
				ids = append(ids, id)
			}
			w.mu.Unlock()
			for _, id := range ids {
				w.take(id)
			}
		}
	}()
	defer func() { close(stop); checker.Wait() }()

	r := map[string]*replica{}
	for _, id := range []string{"a", "b", "c"} {
		r[id] = w.start(st, id)
	}
	w.covered(t, "a", "b", "c")
	for id, h := range w.handles {
		if len(h) < 100 {
			t.Errorf("replica %s handles %d of 600 objects", id, len(h))
		}
	}

	r["d"] = w.start(st, "d") // joins
	w.covered(t, "a", "b", "c", "d")

	r["a"].cancel() // leaves cleanly: stops (nothing runs on it) and deletes its Lease
	<-r["a"].done
	if err := r["a"].shard.Leave(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.kill("a", r["a"])
	w.covered(t, "b", "c", "d")

	w.kill("b", r["b"]) // killed: its Lease stays until it expires
	w.covered(t, "c", "d")

	st.mu.Lock()
	st.cut["c"] = true // cut off from the API: must stop before the others take its objects
	st.mu.Unlock()
	w.covered(t, "d")
	st.mu.Lock()
	st.cut["c"] = false
	st.mu.Unlock()
	w.covered(t, "c", "d")

	for id, rep := range r {
		if w.shards[id] != nil {
			w.kill(id, rep)
		}
	}
}
