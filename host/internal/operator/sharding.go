package operator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/sharding"
	"github.com/kopf-wasm/kopf-wasm/host/internal/hosterr"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
)

// shards is this replica's membership in a shard group (run --shards,
// settings.Sharding.Enabled); nil when sharding is off. Its methods are
// safe on nil.
type shards struct {
	shard  *sharding.Shard
	target *shardTarget
	cancel context.CancelFunc
	done   chan struct{}
	opts   Options
	// namespace holds the Leases.
	namespace string
}

// shardTarget hands objects over in the operator (built after the shard).
type shardTarget struct{ op *reactor.Operator }

func (t *shardTarget) Release(ctx context.Context) error { return t.op.Release(ctx) }
func (t *shardTarget) Acquire(ctx context.Context, before, after func(uid string) bool, admit func() bool) (int, error) {
	return t.op.Acquire(ctx, before, after, admit)
}

// newSharding returns the membership of this replica, or nil when
// sharding is off. Sharding and leader election exclude each other.
func newSharding(kc *kube.Client, opts Options) (*shards, error) {
	s := opts.Settings
	if !s.Sharding.Enabled {
		return nil, nil
	}
	if s.LeaderElection.Enabled {
		return nil, fmt.Errorf("%w: sharding and leader election exclude each other: with sharding every replica handles its share, with leader election one handles all; enable one of them", hosterr.ErrUsage)
	}
	ns := s.Sharding.Namespace
	if ns == "" {
		ns = os.Getenv("POD_NAMESPACE")
	}
	if ns == "" {
		ns = "default"
	}
	t := &shardTarget{}
	return &shards{opts: opts, target: t, namespace: ns, shard: sharding.New(sharding.Options{
		Identity: shardIdentity(), Namespace: ns, Settings: s.Sharding, Leases: kc, Target: t, Logger: opts.Logger,
	})}, nil
}

// shardIdentity names this replica: its pod ($POD_NAME, stable across
// container restarts, so a restarted replica takes its Lease back), else
// the host name with a random suffix (two processes on one machine are
// two replicas).
func shardIdentity() string {
	if pod := os.Getenv("POD_NAME"); pod != "" {
		return pod
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "kopf-wasm"
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return host + "-" + hex.EncodeToString(b)
}

// owner is the reactor's ownership filter (nil: every object).
func (s *shards) owner() reactor.Owner {
	if s == nil {
		return nil
	}
	return s.shard
}

// start runs the membership for op until stop.
func (s *shards) start(op *reactor.Operator) {
	if s == nil {
		return
	}
	s.target.op = op
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		s.shard.Run(ctx)
	}()
}

// stop ends the membership once the operator has stopped (until then the
// Lease must stay renewed: a stopping operator still handles objects) and
// deletes the Lease, so the others take this replica's objects at once.
func (s *shards) stop() {
	if s == nil || s.cancel == nil {
		return
	}
	s.cancel()
	<-s.done
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.Settings.Kube.RequestTimeout)
	defer cancel()
	if err := s.shard.Leave(ctx); err != nil && !errors.Is(err, context.Canceled) {
		s.opts.Logger.Warn(fmt.Sprintf("Sharding: cannot delete the membership Lease (the others take the objects once it expires): %v", err))
	}
}
