package reactor_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/sharding"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// handled is one handler success seen in a replica's log.
type handled struct {
	replica, object, handler string
	at                       time.Time
}

// successLog records the handler successes of every replica.
type successLog struct {
	mu  sync.Mutex
	all []handled
}

// replicaLog is a slog handler for one replica (debug level: timers'
// successes are logged at debug).
type replicaLog struct {
	log *successLog
	id  string
}

func (r replicaLog) Enabled(context.Context, slog.Level) bool { return true }
func (r replicaLog) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r replicaLog) WithGroup(string) slog.Handler            { return r }

func (r replicaLog) Handle(_ context.Context, rec slog.Record) error {
	id, ok := strings.CutPrefix(rec.Message, "Handler '")
	if !ok || !strings.HasSuffix(id, "' succeeded.") {
		return nil
	}
	id = strings.TrimSuffix(id, "' succeeded.")
	name := ""
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "object" {
			for _, ga := range a.Value.Group() {
				if ga.Key == "name" {
					name = ga.Value.String()
				}
			}
		}
		return true
	})
	r.log.mu.Lock()
	r.log.all = append(r.log.all, handled{replica: r.id, object: name, handler: id, at: rec.Time})
	r.log.mu.Unlock()
	return nil
}

// count returns, per object, how many times handler succeeded (and on
// which replicas).
func (l *successLog) count(handler string) map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]string{}
	for _, h := range l.all {
		if h.handler == handler {
			out[h.object] = append(out[h.object], h.replica)
		}
	}
	return out
}

// forwarder lets the shard and the operator be built in either order.
type forwarder struct{ op *reactor.Operator }

func (f *forwarder) Release(ctx context.Context) error { return f.op.Release(ctx) }
func (f *forwarder) Acquire(ctx context.Context, before, after func(uid string) bool, admit func() bool) (int, error) {
	return f.op.Acquire(ctx, before, after, admit)
}

// shardReplica is one in-process replica: an operator and its membership.
type shardReplica struct {
	stopOp, stopShard context.CancelFunc
	opDone, shardDone chan struct{}
}

func startReplica(t *testing.T, c *cluster, ns string, set settings.Settings, id string, log *successLog) *shardReplica {
	t.Helper()
	rt := newRuntime(t)
	mods := []*wasmrt.Module{load(t, rt, "kopfexample", "kopfexample"), load(t, rt, "spawning", "testguests/spawning")}
	kc := newKube(t, c)
	logger := slog.New(replicaLog{log: log, id: id})
	fw := &forwarder{}
	shard := sharding.New(sharding.Options{
		Identity: id, Namespace: ns, Settings: set.Sharding, Leases: kc, Target: fw, Logger: logger,
	})
	namespaces, err := kube.ParseNamespaces(ns)
	if err != nil {
		t.Fatal(err)
	}
	op, err := reactor.New(context.Background(), reactor.Options{
		Kube: kc, Modules: mods, Namespaces: namespaces, Settings: set, Logger: logger, Owner: shard,
	})
	if err != nil {
		t.Fatal(err)
	}
	fw.op = op
	r := &shardReplica{opDone: make(chan struct{}), shardDone: make(chan struct{})}
	var opCtx, shardCtx context.Context
	opCtx, r.stopOp = context.WithCancel(context.Background())
	shardCtx, r.stopShard = context.WithCancel(context.Background())
	go func() { defer close(r.shardDone); shard.Run(shardCtx) }()
	go func() {
		defer close(r.opDone)
		if err := op.Run(opCtx); err != nil {
			t.Errorf("replica %s: %v", id, err)
		}
	}()
	t.Cleanup(r.kill)
	return r
}

// kill stops the replica without a goodbye: its Lease stays until it
// expires (what the others see of a SIGKILLed replica; in-process, its
// cycles in flight still finish).
func (r *shardReplica) kill() {
	r.stopOp()
	<-r.opDone
	r.stopShard()
	<-r.shardDone
}

// TestShardingSplitsObjectsAndHandsThemOver runs three replicas over 600
// objects, kills one in the middle of their updates and starts a fourth:
// every object's create and update handlers succeed exactly once, on one
// replica, and the timers tick on exactly one replica at a time.
func TestShardingSplitsObjectsAndHandsThemOver(t *testing.T) {
	c := startCluster(t)
	const ns, objects, timerEvery = "sharding", 600, 50
	createNamespace(t, c, ns)
	set := settings.Default()
	set.Posting.Enabled = false
	set.Sharding.Namespace = ns
	set.Sharding.LeaseDuration, set.Sharding.RenewDeadline = 4*time.Second, 3*time.Second
	set.Sharding.RenewInterval, set.Sharding.SettleInterval = time.Second, 200*time.Millisecond
	log := &successLog{}
	start := time.Now()
	replicas := map[string]*shardReplica{}
	for _, id := range []string{"r1", "r2", "r3"} {
		replicas[id] = startReplica(t, c, ns, set, id, log)
	}
	name := func(i int) string { return fmt.Sprintf("obj-%03d", i) }
	for i := range objects {
		var labels map[string]string
		if i%timerEvery == 0 {
			labels = map[string]string{"mode": "timer"}
		}
		createExampleWith(t, c, ns, name(i), labels, map[string]any{"field": "v1"})
	}
	e2etest.Eventually(t, 240*time.Second, "every object created", func() error {
		if n := len(log.count("create_fn")); n < objects {
			return fmt.Errorf("%d of %d objects' create handler succeeded", n, objects)
		}
		return nil
	})
	perReplica := map[string]int{}
	for _, reps := range log.count("create_fn") {
		perReplica[reps[0]]++
	}
	t.Logf("created in %s; objects per replica: %v", time.Since(start).Round(time.Millisecond), perReplica)
	for _, id := range []string{"r1", "r2", "r3"} {
		if perReplica[id] < objects/10 {
			t.Errorf("replica %s created %d of %d objects: the objects are not shared", id, perReplica[id], objects)
		}
	}

	killedAt := time.Time{}
	for i := range objects {
		patchSpec(t, c, ns, name(i), `{"spec":{"field":"v2"}}`)
		if i == objects/2 {
			replicas["r1"].kill()
			killedAt = time.Now()
			replicas["r4"] = startReplica(t, c, ns, set, "r4", log)
		}
	}
	e2etest.Eventually(t, 240*time.Second, "every object updated", func() error {
		if n := len(log.count("update_fn")); n < objects {
			return fmt.Errorf("%d of %d objects' update handler succeeded", n, objects)
		}
		return nil
	})
	time.Sleep(3 * time.Second) // room for a second run to show

	for handler, counts := range map[string]map[string][]string{"create_fn": log.count("create_fn"), "update_fn": log.count("update_fn")} {
		for i := range objects {
			if reps := counts[name(i)]; len(reps) != 1 {
				t.Errorf("%s of %s succeeded %d times, on %v; want exactly once", handler, name(i), len(reps), reps)
			}
		}
	}
	updated := map[string]int{}
	for _, reps := range log.count("update_fn") {
		updated[reps[0]]++
	}
	t.Logf("updated; objects per replica: %v", updated)
	if updated["r4"] == 0 {
		t.Errorf("the replica started after the kill handled no update: %v", updated)
	}

	// Timers: from now on each ticks on exactly one live replica, and
	// over the whole run no timer came back to a replica it had left
	// (which two replicas ticking at once would show).
	mark := time.Now()
	time.Sleep(4 * time.Second)
	log.mu.Lock()
	ticks := map[string][]handled{}
	for _, h := range log.all {
		if h.handler == "tick" {
			ticks[h.object] = append(ticks[h.object], h)
		}
	}
	log.mu.Unlock()
	for i := 0; i < objects; i += timerEvery {
		var recent []string
		var owners []string
		for _, h := range ticks[name(i)] {
			if h.at.After(mark) {
				recent = append(recent, h.replica)
			}
			if len(owners) == 0 || owners[len(owners)-1] != h.replica {
				if slices.Contains(owners, h.replica) {
					t.Errorf("timer of %s ticked on %v in turn: on two replicas at once", name(i), owners)
				}
				owners = append(owners, h.replica)
			}
		}
		recent = slices.Compact(recent)
		if len(recent) != 1 || recent[0] == "r1" {
			t.Errorf("timer of %s ticked on %v in the last 4s, want one live replica", name(i), recent)
		}
		for _, h := range ticks[name(i)] {
			if h.replica == "r1" && h.at.After(killedAt) {
				t.Errorf("timer of %s ticked on the killed replica", name(i))
			}
		}
	}
}
