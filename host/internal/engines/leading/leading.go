package leading

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/gate"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"k8s.io/utils/clock"
)

// Blocker is the gate's blocker while this replica does not lead.
const Blocker = "leader-election"

// Options configure an [Elector].
type Options struct {
	// Kube is the cluster client. Required.
	Kube *kube.Client
	// Gate is opened while this replica leads. Required.
	Gate *gate.Gate
	// Settings are the durations (settings.LeaderElection).
	Settings settings.LeaderElection
	// Namespace and Name of the Lease.
	Namespace, Name string
	// Identity of this replica (the Lease's holderIdentity).
	Identity string
	// Logger receives the elections' logs. Default slog.Default().
	Logger *slog.Logger
	// OnLeading, when set, is called each time this replica starts to
	// lead (tests and benchmarks: the failover time).
	OnLeading func()
	// Clock times the wait for the cycles in flight when the Lease is
	// lost. Default the real clock; tests pass a fake one. (kube.Client.Elect
	// times the Lease itself on the real clock; its own tests use a fake
	// one.)
	Clock clock.Clock
}

// Elector campaigns for the Lease and opens the gate while it holds it.
type Elector struct {
	opts Options
	log  *slog.Logger
	// where names the Lease in logs.
	where string
}

// New checks the options and blocks the gate until this replica leads.
func New(opts Options) (*Elector, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	e := &Elector{opts: opts, log: opts.Logger, where: opts.Namespace + "/" + opts.Name}
	opts.Gate.Block(Blocker, fmt.Sprintf("leader election: not the leader of Lease %s", e.where))
	return e, nil
}

// Run campaigns until ctx ends; each time the Lease is lost it stops
// handling and campaigns again. When ctx ends while leading, the Lease is
// released (end ctx only once the operator has stopped).
func (e *Elector) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		s := e.opts.Settings
		err := e.opts.Kube.Elect(ctx, kube.Election{
			Namespace: e.opts.Namespace, Name: e.opts.Name, Identity: e.opts.Identity,
			LeaseDuration: s.LeaseDuration, RenewDeadline: s.RenewDeadline, RetryPeriod: s.RetryPeriod,
			OnStarted: e.started, OnStopped: e.stopped, OnNewLeader: e.newLeader,
		})
		if err != nil {
			return fmt.Errorf("leader election: %w", err)
		}
	}
	return nil
}

func (e *Elector) started() {
	e.log.Info(fmt.Sprintf("Leading: this replica (%s) holds Lease %s; handling changes, timers and daemons.", e.opts.Identity, e.where))
	e.opts.Gate.Unblock(Blocker)
	if e.opts.OnLeading != nil {
		e.opts.OnLeading()
	}
}

// stopped blocks the gate at once and waits for the cycles in flight,
// within the margin before another replica may lead.
func (e *Elector) stopped() {
	wasOpen := e.opts.Gate.Block(Blocker, fmt.Sprintf("leader election: not the leader of Lease %s", e.where))
	if !wasOpen && e.opts.Gate.InFlight() == 0 {
		return // it never led, or something else had paused it
	}
	e.log.Warn(fmt.Sprintf("Not leading any more: Lease %s lost or released; handling stops.", e.where))
	margin := max(e.opts.Settings.LeaseDuration-e.opts.Settings.RenewDeadline, time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	timer := e.opts.Clock.NewTimer(margin)
	defer timer.Stop()
	go func() {
		select {
		case <-timer.C():
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := e.opts.Gate.Drained(ctx); err != nil {
		e.log.Error(fmt.Sprintf("Cycles still in flight %s after losing Lease %s: %d; another replica may lead meanwhile.",
			margin, e.where, e.opts.Gate.InFlight()))
	}
}

func (e *Elector) newLeader(identity string) {
	if identity == e.opts.Identity {
		return
	}
	e.log.Info(fmt.Sprintf("Lease %s is held by %s; this replica (%s) waits, its caches warm.", e.where, identity, e.opts.Identity))
	e.opts.Gate.Block(Blocker, fmt.Sprintf("leader election: %s leads (Lease %s)", identity, e.where))
}
