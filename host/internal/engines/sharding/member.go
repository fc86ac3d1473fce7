package sharding

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Member is this replica's membership in a shard group as a running host
// keeps it (settings.Sharding.Enabled): its [Shard], started once the
// operator it hands objects over in exists, and its Lease deleted when the
// host stops. A nil *Member is no membership; its methods are safe on nil.
type Member struct {
	shard  *Shard
	target lateTarget
	cancel context.CancelFunc
	done   chan struct{}
	log    *slog.Logger
	// requestTimeout bounds the deletion of the Lease at Stop.
	requestTimeout time.Duration
	// namespace holds the Leases.
	namespace string
}

// lateTarget is the operator the shard hands objects over in, set by
// [Member.Start] (the operator is built after the shard, which filters its
// objects).
type lateTarget struct{ t atomic.Pointer[Target] }

func (l *lateTarget) Release(ctx context.Context) error { return (*l.t.Load()).Release(ctx) }
func (l *lateTarget) Acquire(ctx context.Context, before, after func(uid string) bool, admit func() bool) (int, error) {
	return (*l.t.Load()).Acquire(ctx, before, after, admit)
}

// NewMember returns the membership of this replica in the group of s, or
// nil when sharding is off. Its Leases live in s.Namespace, else the pod's
// namespace ($POD_NAMESPACE), else "default"; requestTimeout bounds the
// deletion of its Lease when it stops.
func NewMember(leases Leases, s settings.Sharding, requestTimeout time.Duration, log *slog.Logger) *Member {
	if !s.Enabled {
		return nil
	}
	ns := s.Namespace
	if ns == "" {
		ns = os.Getenv("POD_NAMESPACE")
	}
	if ns == "" {
		ns = "default"
	}
	m := &Member{log: log, namespace: ns, requestTimeout: requestTimeout}
	m.shard = New(Options{Identity: identity(), Namespace: ns, Settings: s, Leases: leases, Target: &m.target, Logger: log})
	return m
}

// identity names this replica: its pod ($POD_NAME, stable across container
// restarts, so a restarted replica takes its Lease back), else the host
// name with a random suffix (two processes on one machine are two
// replicas).
func identity() string {
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

// Shard is the membership's shard, the reactor's ownership filter (nil
// without sharding).
func (m *Member) Shard() *Shard {
	if m == nil {
		return nil
	}
	return m.shard
}

// Start runs the membership, handing objects over in t, until Stop.
func (m *Member) Start(t Target) {
	if m == nil {
		return
	}
	m.target.t.Store(&t)
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel, m.done = cancel, make(chan struct{})
	go func() {
		defer close(m.done)
		m.shard.Run(ctx)
	}()
}

// Stop ends the membership once the operator has stopped (until then the
// Lease must stay renewed: a stopping operator still handles objects) and
// deletes the Lease, so the others take this replica's objects at once.
func (m *Member) Stop() {
	if m == nil || m.cancel == nil {
		return
	}
	m.cancel()
	<-m.done
	ctx, cancel := context.WithTimeout(context.Background(), m.requestTimeout)
	defer cancel()
	if err := m.shard.Leave(ctx); err != nil && !errors.Is(err, context.Canceled) {
		m.log.Warn(fmt.Sprintf("Sharding: cannot delete the membership Lease (the others take the objects once it expires): %v", err))
	}
}
