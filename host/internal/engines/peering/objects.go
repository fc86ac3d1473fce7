package peering

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
)

// namespaces are the namespaces whose peering objects concern this host:
// "" alone for the cluster-wide peering; the watched namespaces, and with a
// mandatory peering also every namespace named plainly, otherwise.
func (p *Peering) namespaces() []string {
	if p.opts.Clusterwide || !p.res.Namespaced {
		return []string{""}
	}
	seen := map[string]bool{}
	var out []string
	for _, ns := range p.watch.Namespaces() {
		if ns != "" && !seen[ns] {
			seen[ns] = true
			out = append(out, ns)
		}
	}
	if names, plain := p.opts.Namespaces.Names(); plain && p.opts.Settings.Mandatory {
		for _, ns := range names {
			if !seen[ns] {
				seen[ns] = true
				out = append(out, ns)
			}
		}
	}
	return out
}

// status reads the records of the peering object in ns from the watch
// cache; ok is false when the object does not exist.
func (p *Peering) status(ns string) (peers []Peer, ok bool) {
	obj, ok := p.watch.Get(ns, p.opts.Settings.Name)
	if !ok {
		return nil, false
	}
	st, _ := obj.Object["status"].(map[string]any)
	return ParsePeers(st), true
}

// self is this host's record as of now.
func (p *Peering) self(now time.Time) Peer {
	return Peer{ID: p.opts.Identity, Priority: p.opts.Settings.Priority, Lifetime: p.opts.Settings.Lifetime, LastSeen: now}
}

// keepAlive writes this host's record into every peering object there is.
func (p *Peering) keepAlive(ctx context.Context) {
	for _, ns := range p.namespaces() {
		if _, ok := p.status(ns); !ok {
			continue
		}
		rec := p.self(p.clock.Now())
		err := p.patch(ctx, p.res, ns, p.opts.Settings.Name, map[string]any{rec.ID: rec.Record()})
		switch {
		case errors.Is(err, kube.ErrGone):
			p.log.Warn(fmt.Sprintf("Keep-alive in %s: not found.", p.where(ns)))
		case err != nil && ctx.Err() == nil:
			p.log.Error(fmt.Sprintf("Keep-alive in %s failed: %v", p.where(ns), err))
		case err == nil && !p.opts.Settings.Stealth:
			p.log.Debug(fmt.Sprintf("Keep-alive in %s: ok.", p.where(ns)))
		}
	}
}

// goodbye removes this host's records (Kopf sets them to null at exit).
func (p *Peering) goodbye() {
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.Settings.GoodbyeTimeout)
	defer cancel()
	for _, ns := range p.namespaces() {
		if _, ok := p.status(ns); !ok {
			continue
		}
		if err := p.patch(ctx, p.res, ns, p.opts.Settings.Name, map[string]any{p.opts.Identity: nil}); err != nil &&
			!errors.Is(err, kube.ErrGone) {
			p.log.Warn(fmt.Sprintf("Removing this host's record from peering %s failed: %v", p.where(ns), err))
		}
	}
}

// decide runs the decision protocol on every peering object and returns
// when the earliest blocking record expires (zero when none does).
func (p *Peering) decide(ctx context.Context) time.Time {
	var next time.Time
	now := p.clock.Now()
	for _, ns := range p.namespaces() {
		name := blocker(ns, p.opts.Settings.Name)
		peers, ok := p.status(ns)
		if !ok {
			p.missing(ns, name)
			continue
		}
		delete(p.absent, ns)
		d := Decide(peers, p.opts.Identity, p.opts.Settings.Priority, now)
		if len(d.Dead) > 0 {
			p.clean(ctx, ns, d.Dead)
		}
		p.apply(ns, name, d)
		if !d.Next.IsZero() && (next.IsZero() || d.Next.Before(next)) {
			next = d.Next
		}
	}
	return next
}

// missing handles a peering object that does not exist: a mandatory
// peering pauses until it does; auto mode runs as if standalone.
func (p *Peering) missing(ns, name string) {
	if p.opts.Settings.Mandatory {
		if p.opts.Gate.Block(name, fmt.Sprintf("peering %s is mandatory and the object does not exist", p.where(ns))) || !p.absent[ns] {
			p.log.Warn(fmt.Sprintf("Peering %s is mandatory and does not exist: paused until it is created.", p.where(ns)))
		}
	} else {
		p.opts.Gate.Unblock(name)
		if !p.absent[ns] {
			p.log.Info(fmt.Sprintf("Peering %s does not exist: running as standalone there.", p.where(ns)))
		}
	}
	p.absent[ns] = true
	p.states[name] = ""
}

// apply pauses or resumes the host by one object's decision, logging
// Kopf's messages when it changes.
func (p *Peering) apply(ns, name string, d Decision) {
	if d.Verdict == Run {
		if p.opts.Gate.Blocked(name) {
			p.log.Info("Resuming operations after the pause. Conflicting operators with the same priority are gone.")
		}
		p.opts.Gate.Unblock(name)
		p.states[name] = ""
		return
	}
	ids := ""
	for _, b := range d.Blocking {
		ids += b.ID + ","
	}
	state := fmt.Sprint(d.Verdict) + ":" + ids
	if p.states[name] != state {
		p.states[name] = state
		if d.Verdict == Yield {
			p.log.Info(fmt.Sprintf("Pausing operations in favour of %s.", list(d.Blocking)))
		} else {
			p.log.Warn(fmt.Sprintf("Possibly conflicting operators with the same priority: %s.", list(d.Blocking)))
			p.log.Warn(fmt.Sprintf("Pausing all operators, including self: %s.", list(append(d.Blocking, p.self(p.clock.Now())))))
		}
	}
	p.opts.Gate.Block(name, d.reason(p.where(ns)))
}

// clean removes the records of dead peers (Kopf's autoclean).
func (p *Peering) clean(ctx context.Context, ns string, dead []Peer) {
	patch := map[string]any{}
	for _, d := range dead {
		patch[d.ID] = nil
	}
	p.log.Info(fmt.Sprintf("Cleaning dead peers from peering %s: %s.", p.where(ns), list(dead)))
	if err := p.patch(ctx, p.res, ns, p.opts.Settings.Name, patch); err != nil && ctx.Err() == nil {
		p.log.Warn(fmt.Sprintf("Cleaning dead peers from peering %s failed: %v", p.where(ns), err))
	}
}
