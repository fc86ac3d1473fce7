package operator

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/leading"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/peering"
	"github.com/kopf-wasm/kopf-wasm/host/internal/gate"
	"github.com/kopf-wasm/kopf-wasm/host/internal/hosterr"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
)

// coordination runs what may pause this host — Kopf's peering and Lease
// leader election — on the host-wide gate the operator follows.
type coordination struct {
	gate   *gate.Gate
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startCoordination starts peering (unless standalone) and leader election
// (when enabled) in the background. They run until stop, which the host
// calls after its operator has stopped, so the Lease and the peering
// records are given up only once nothing is handled any more.
func startCoordination(kc *kube.Client, g *gate.Gate, namespaces kube.Namespaces, opts Options) (*coordination, error) {
	s := opts.Settings
	ctx, cancel := context.WithCancel(context.Background())
	c := &coordination{gate: g, cancel: cancel}
	if s.LeaderElection.Enabled && s.Sharding.Enabled {
		cancel()
		return nil, fmt.Errorf("%w: leader election and sharding exclude each other: enable one of them", hosterr.ErrUsage)
	}
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
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
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
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			p.Run(ctx)
		}()
	}
	return c, nil
}

// status is the line the liveness endpoint reports: "kopf-wasm: handling",
// or "kopf-wasm: paused: <reason>".
func (c *coordination) status() (paused bool, line string) {
	if c.gate.Open() {
		return false, "kopf-wasm: handling"
	}
	return true, fmt.Sprintf("kopf-wasm: paused: %s", c.gate.Reason())
}

// stop ends peering (its records removed) and leader election (the Lease
// released), and waits for them.
func (c *coordination) stop() {
	c.cancel()
	c.wg.Wait()
}
