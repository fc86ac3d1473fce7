package operator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/admission"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/leading"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/peering"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/probing"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/sharding"
	"github.com/kopf-wasm/kopf-wasm/host/internal/gate"
	"github.com/kopf-wasm/kopf-wasm/host/internal/hosterr"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
)

// engines are what [spawn] started: the reactor, the liveness endpoint
// that runOperator marks alive, and how to stop the rest.
type engines struct {
	op   *reactor.Operator
	live *probing.Liveness
	gate *gate.Gate
	// stops are called in reverse order of the starts: what was started
	// first (the Leases, the peering records) is given up last, once
	// nothing is handled any more.
	stops []func()
}

// stop stops every engine, the last started first.
func (e *engines) stop() {
	for i := len(e.stops) - 1; i >= 0; i-- {
		e.stops[i]()
	}
}

// spawn builds and starts every engine of a running host, in the order
// they depend on each other — the counterpart of Kopf's spawn_tasks:
//
//  1. metrics: recorded while this host, or another of the process,
//     serves them (before the reactor names its queue);
//  2. sharding (engines/sharding): this replica's membership, built before
//     the reactor, which asks it which objects are its own, and started
//     with the reactor as the target of hand-overs;
//  3. the reactor (host/internal/reactor): the watches and the processing
//     cycles, with the two engines that work inside a cycle, as in Kopf's
//     processing — indexing (engines/indexing) and spawning of timers and
//     daemons (engines/spawning) — started by Operator.Run (runOperator);
//  4. admission (engines/admission): the validating, mutating and
//     conversion webhooks and their managed configurations, served from
//     the reactor's Run on and updated at every swap of modules;
//  5. probing (engines/probing): the probe handlers, for the liveness
//     endpoint;
//  6. peering (engines/peering) and leader election (engines/leading),
//     which pause the reactor through the host-wide gate;
//  7. the liveness endpoint: the probes' answers and the gate's status;
//  8. module resources: the Module objects' modules, swapped into the
//     reactor;
//  9. the metrics and health servers;
//  10. reloads of changed module files and moved OCI tags.
//
// On an error, what was started is stopped again.
func spawn(ctx context.Context, opts Options) (_ *engines, err error) {
	e := &engines{gate: gate.New()}
	defer func() {
		if err != nil {
			e.stop()
		}
	}()
	e.stops = append(e.stops, metrics.Hold(on(opts.MetricsBindAddress)))
	s := opts.Settings
	if s.LeaderElection.Enabled && s.Sharding.Enabled {
		return nil, fmt.Errorf("%w: leader election and sharding exclude each other: enable one of them", hosterr.ErrUsage)
	}
	member := sharding.NewMember(opts.Kube, s.Sharding, s.Kube.RequestTimeout, opts.Logger)
	var owner reactor.Owner
	if member != nil {
		owner = member.Shard()
	}
	op, err := reactor.New(ctx, reactor.Options{
		Kube: opts.Kube, Modules: opts.Modules, Namespaces: opts.Namespaces, Settings: *s, Logger: opts.Logger,
		Gate: e.gate, Owner: owner, Rollouts: opts.Rollouts,
	})
	if err != nil {
		return nil, err
	}
	e.op = op
	op.ServeWebhooks(admission.New(admission.Options{
		Exec: op.Executor(), Registry: op.Registry, Settings: s.Admission, Logger: opts.Logger,
	}, opts.Kube))
	prober := probing.New(probing.Options{
		Exec: op.Executor(), Cache: s.Execution.ProbeCache, Logger: opts.Logger, Handlers: op.ProbeHandlers,
	})
	member.Start(op)
	e.stops = append(e.stops, member.Stop) // after the operator stopped: the Lease goes last
	stopCoordination, err := startCoordination(e.gate, opts)
	if err != nil {
		return nil, err
	}
	e.stops = append(e.stops, stopCoordination) // after the operator stopped: the Lease and records go last
	if e.live, err = probing.StartLiveness(opts.Liveness, opts.Logger); err != nil {
		return nil, err
	}
	e.live.SetStatus(e.status)
	e.stops = append(e.stops, e.live.Close)
	e.live.SetProber(prober.Probe)
	logStart(opts)
	set := newModuleSet(op, opts.Modules, opts.Rollouts)
	if opts.ModuleResources {
		if err := startModuleResources(ctx, opts.Kube, opts.Runtime, set, opts); err != nil {
			return nil, err
		}
	}
	obs, err := startObserving(opts.Kube, func() error { return errors.Join(op.Ready(), set.ready()) }, set, opts)
	if err != nil {
		return nil, err
	}
	e.stops = append(e.stops, obs.close)
	if every := s.Modules.ReloadInterval; every > 0 {
		r := newReloader(opts.Runtime, set, opts.Files, opts.Modules, opts.Logger)
		r.verify = opts.Verifier
		if err := r.pollTags(opts, opts.Refs); err != nil {
			return nil, err
		}
		// Run returns only after the reloader has stopped: a tag's pull in
		// flight writes into the module cache, which is the caller's once
		// Run has returned (TestReloadOCITag's TempDir found it written to).
		reloadCtx, stopReloading := context.WithCancel(ctx)
		var reloading sync.WaitGroup
		reloading.Add(1)
		go func() { defer reloading.Done(); r.run(reloadCtx, every) }()
		e.stops = append(e.stops, func() { stopReloading(); reloading.Wait() })
	}
	return e, nil
}

// startCoordination starts peering (unless standalone or replaced by
// leader election or sharding) and leader election (when enabled) in the
// background, on the gate g. The returned stop ends them — peering removes
// its records, leader election releases the Lease — and waits for them;
// the host calls it after its operator has stopped, so that nothing is
// handled once they are given up.
func startCoordination(g *gate.Gate, opts Options) (stop func(), err error) {
	s, kc, namespaces := opts.Settings, opts.Kube, opts.Namespaces
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	identity := peering.Identity(time.Now())
	if s.LeaderElection.Enabled {
		ns := s.LeaderElection.Namespace
		if ns == "" {
			ns = os.Getenv("POD_NAMESPACE")
		}
		if ns == "" {
			ns = "default"
		}
		name := s.LeaderElection.LeaseName
		if name == "" {
			name = s.Peering.Name
		}
		e, err := leading.New(leading.Options{
			Kube: kc, Gate: g, Settings: s.LeaderElection, Namespace: ns, Name: name, Identity: identity,
			Logger: opts.Logger,
		})
		if err != nil {
			cancel()
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := e.Run(ctx); err != nil {
				opts.Logger.Error(err.Error())
			}
		}()
	}
	switch {
	case s.Peering.Standalone:
	case s.Sharding.Enabled && !s.Peering.Mandatory:
		// The replicas share the objects; as peers of one priority they
		// would all pause.
		opts.Logger.Info("Sharding is on: Kopf's auto peering is off (a mandatory peering, settings peering.mandatory, peers with other operators too).")
	case s.LeaderElection.Enabled && !s.Peering.Mandatory:
		// Replicas of one Deployment would be peers of the same priority
		// and all pause: leader election replaces auto peering.
		opts.Logger.Info("Leader election is on: Kopf's auto peering is off (a mandatory peering, settings peering.mandatory, peers with other operators too).")
	default:
		p := peering.New(peering.Options{
			Kube: kc, Gate: g, Settings: s.Peering, Namespaces: namespaces, Identity: identity, Logger: opts.Logger,
			Clusterwide: s.Peering.Clusterwide || namespaces.ClusterWide(),
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.Run(ctx)
		}()
	}
	return func() {
		cancel()
		wg.Wait()
	}, nil
}

// status is the line the liveness endpoint reports: "kopf-wasm: handling",
// or "kopf-wasm: paused: <reason>".
func (e *engines) status() (paused bool, line string) {
	if e.gate.Open() {
		return false, "kopf-wasm: handling"
	}
	return true, fmt.Sprintf("kopf-wasm: paused: %s", e.gate.Reason())
}
