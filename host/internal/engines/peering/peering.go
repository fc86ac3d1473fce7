package peering

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/gate"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/clock"
)

// BlockerCRD is the gate's blocker while a mandatory peering's CRD is
// missing.
const BlockerCRD = "peering-crd"

// BlockerStart is the gate's blocker from [New] until the first decision
// (or until it is clear there is no peering), so that a host never handles
// an object before it knows whether a peer of a higher priority runs.
const BlockerStart = "peering-start"

// Options configure a [Peering].
type Options struct {
	// Kube is the cluster client. Required.
	Kube *kube.Client
	// Gate is paused and resumed by the decisions. Required.
	Gate *gate.Gate
	// Settings are settings.Peering (name, priority, lifetime, mandatory,
	// stealth, and the sync, CRD retry and goodbye timings).
	Settings settings.Peering
	// Clusterwide uses the ClusterKopfPeering; otherwise one KopfPeering
	// per namespace of Namespaces.
	Clusterwide bool
	// Namespaces are the host's namespaces (for per-namespace peering).
	Namespaces kube.Namespaces
	// Identity is this host's identity ([Identity]).
	Identity string
	// Logger receives Kopf's peering messages. Default slog.Default().
	Logger *slog.Logger
	// Clock times the keep-alives and the records' expiry. Default the
	// real clock; tests pass a fake one.
	Clock clock.Clock
}

// Peering keeps this host's keep-alive in the peering objects and pauses
// and resumes the host by Kopf's decision protocol.
type Peering struct {
	opts  Options
	log   *slog.Logger
	clock clock.Clock
	res   kube.Resource
	// watch holds the peering objects (Run's *kube.Watch); patch writes
	// records into them (the client's PatchPeering).
	watch objectStore
	patch func(ctx context.Context, res kube.Resource, ns, name string, patch map[string]any) error
	dirty chan struct{}
	// states are the last decisions by blocker name.
	states map[string]string
	// absent are the peering objects found missing (logged once).
	absent map[string]bool
}

// objectStore is where the peering objects are read: the watch's cache.
type objectStore interface {
	Get(namespace, name string) (*unstructured.Unstructured, bool)
	Namespaces() []string
}

// New returns a peering ready to [Peering.Run].
func New(opts Options) *Peering {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	opts.Gate.Block(BlockerStart, "peering: waiting for the first decision")
	p := &Peering{opts: opts, log: opts.Logger, clock: opts.Clock, dirty: make(chan struct{}, 1),
		states: map[string]string{}, absent: map[string]bool{}}
	if opts.Kube != nil {
		p.patch = opts.Kube.PatchPeering
	}
	return p
}

// started lifts [BlockerStart]: the first decision is made (its own
// blockers are set), or there is no peering to wait for.
func (p *Peering) started() { p.opts.Gate.Unblock(BlockerStart) }

// Run finds the peering resource, watches the peering objects, keeps this
// host alive in them and decides, until ctx ends; then it removes its
// records. In auto mode a missing CRD ends it at once (standalone).
func (p *Peering) Run(ctx context.Context) {
	defer p.started()
	if !p.resolve(ctx) {
		return
	}
	scope := p.opts.Namespaces
	if p.opts.Clusterwide {
		scope = kube.AllNamespaces()
	}
	w, err := p.opts.Kube.Watch(ctx, p.res, scope, func(ev kube.Event) {
		if ev.Object.GetName() == p.opts.Settings.Name {
			p.poke()
		}
	})
	if err != nil {
		p.log.Error(fmt.Sprintf("Peering %q cannot be watched: %v; running as standalone.", p.opts.Settings.Name, err))
		return
	}
	p.watch = w
	defer w.Stop()
	syncCtx, cancel := context.WithTimeout(ctx, p.opts.Settings.SyncTimeout)
	err = w.WaitForSync(syncCtx)
	cancel()
	switch {
	case ctx.Err() != nil:
		return
	case err != nil && !p.opts.Settings.Mandatory:
		p.log.Error(fmt.Sprintf("Peering %q cannot be read within %s (RBAC: get, list, watch, patch on %s; deploy/peering/rbac.yaml): "+
			"running as standalone.", p.opts.Settings.Name, p.opts.Settings.SyncTimeout, p.res.Plural))
		return
	case err != nil:
		p.opts.Gate.Block(BlockerCRD, fmt.Sprintf("peering %q is mandatory and cannot be read (RBAC?)", p.opts.Settings.Name))
		if err := w.WaitForSync(ctx); err != nil {
			return
		}
		p.opts.Gate.Unblock(BlockerCRD)
	}
	defer p.goodbye()
	keepAlive := p.clock.NewTimer(0)
	defer keepAlive.Stop()
	next := p.clock.NewTimer(time.Hour)
	defer next.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-keepAlive.C():
			p.keepAlive(ctx)
			keepAlive.Reset(keepAliveInterval(p.opts.Settings.Lifetime))
		case <-p.dirty:
		case <-next.C():
		}
		if at := p.decide(ctx); !at.IsZero() {
			next.Reset(at.Sub(p.clock.Now()) + 10*time.Millisecond)
		}
		p.started()
	}
}

// poke asks for a decision.
func (p *Peering) poke() {
	select {
	case p.dirty <- struct{}{}:
	default:
	}
}

// resolve finds the peering resource; a mandatory peering waits (paused)
// until its CRD exists. It reports false when there is no peering to run.
func (p *Peering) resolve(ctx context.Context) bool {
	logged := false
	for {
		res, err := p.opts.Kube.PeeringResource(ctx, p.opts.Clusterwide)
		if err == nil {
			p.res = res
			p.opts.Gate.Unblock(BlockerCRD)
			return true
		}
		kind := "KopfPeering"
		if p.opts.Clusterwide {
			kind = "ClusterKopfPeering"
		}
		switch {
		case errors.Is(err, kube.ErrNotServed) && !p.opts.Settings.Mandatory:
			p.log.Info(fmt.Sprintf("The peering CRD (%s) is not installed: running as standalone "+
				"(install deploy/peering/crds.yaml to coordinate hosts, or run standalone, settings peering.standalone, to say so).", kind))
			return false
		case errors.Is(err, kube.ErrNotServed):
			p.opts.Gate.Block(BlockerCRD, fmt.Sprintf("peering %q is mandatory and the %s CRD is missing", p.opts.Settings.Name, kind))
			if !logged {
				p.log.Warn(fmt.Sprintf("Peering %q is mandatory and the %s CRD is missing: paused until it is installed "+
					"(deploy/peering/crds.yaml).", p.opts.Settings.Name, kind))
				logged = true
			}
		default:
			p.log.Error(fmt.Sprintf("Peering %q: looking for the CRD failed: %v", p.opts.Settings.Name, err))
		}
		select {
		case <-ctx.Done():
			return false
		case <-p.clock.After(p.opts.Settings.CRDRetryInterval):
		}
	}
}

// where names one peering object in logs.
func (p *Peering) where(ns string) string {
	if ns == "" {
		return fmt.Sprintf("%q", p.opts.Settings.Name)
	}
	return fmt.Sprintf("%q in %q", p.opts.Settings.Name, ns)
}

// blocker is the gate's blocker of one peering object.
func blocker(ns, name string) string { return "peering/" + ns + "/" + name }
