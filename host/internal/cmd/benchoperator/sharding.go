package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/sharding"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// shardedRun is the membership of a benchoperator run with -shards. It
// counts the API requests coordination costs — the Lease requests and the
// hand-over's version listings — and logs the running total after each
// ("coordination requests", total=N), so that the benchmark can tell the
// steady state's from the start's. Its methods are safe on nil.
type shardedRun struct {
	shard  *sharding.Shard
	leases *countingLeases
	op     *reactor.Operator
	cancel context.CancelFunc
	done   chan struct{}
}

// countingLeases counts and logs the Lease requests.
type countingLeases struct {
	kc  *kube.Client
	n   atomic.Int64
	log *slog.Logger
	run *shardedRun
}

func (c *countingLeases) count() {
	n := c.n.Add(1)
	var lists int64
	if op := c.run.op; op != nil {
		lists = op.ShardingRequests()
	}
	c.log.Info("coordination requests", "total", n+lists, "leases", n, "versionLists", lists)
}

func (c *countingLeases) ListLeases(ctx context.Context, ns, sel string) ([]kube.Lease, error) {
	defer c.count()
	return c.kc.ListLeases(ctx, ns, sel)
}

func (c *countingLeases) PutLease(ctx context.Context, l kube.Lease) (kube.Lease, error) {
	defer c.count()
	return c.kc.PutLease(ctx, l)
}

func (c *countingLeases) DeleteLease(ctx context.Context, ns, name, rv string) error {
	defer c.count()
	return c.kc.DeleteLease(ctx, ns, name, rv)
}

func (r *shardedRun) Release(ctx context.Context) error { return r.op.Release(ctx) }
func (r *shardedRun) Acquire(ctx context.Context, before, after func(uid string) bool, admit func() bool) (int, error) {
	return r.op.Acquire(ctx, before, after, admit)
}

func newShardedRun(kc *kube.Client, set settings.Settings, o options, log *slog.Logger) *shardedRun {
	id := o.identity
	if id == "" {
		host, _ := os.Hostname()
		id = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	r := &shardedRun{}
	r.leases = &countingLeases{kc: kc, log: log, run: r}
	s := set.Sharding
	s.Enabled, s.Namespace = true, o.namespace
	r.shard = sharding.New(sharding.Options{
		Identity: id, Namespace: o.namespace, Settings: s, Leases: r.leases, Target: r, Logger: log,
	})
	return r
}

func (r *shardedRun) owner() reactor.Owner {
	if r == nil {
		return nil
	}
	return r.shard
}

func (r *shardedRun) start(op *reactor.Operator) {
	if r == nil {
		return
	}
	r.op = op
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	go func() { defer close(r.done); r.shard.Run(ctx) }()
}

// stop ends the membership after the operator stopped and deletes the
// Lease.
func (r *shardedRun) stop() {
	if r == nil {
		return
	}
	r.cancel()
	<-r.done
	_ = r.shard.Leave(context.Background())
}

// WatchLeases follows the Leases (kube.Client's, so that membership is
// woken by their changes as in the host); the watch is one long request,
// counted once when it opens (the API server ends it after 30-60 min).
func (c *countingLeases) WatchLeases(ctx context.Context, ns, sel string, retry time.Duration, event func(kube.LeaseEvent)) error {
	c.count()
	return c.kc.WatchLeases(ctx, ns, sel, retry, event)
}
