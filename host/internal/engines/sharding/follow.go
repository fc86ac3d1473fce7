package sharding

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
)

// maxViews bounds the views a grant narrows by before one settles; past
// it the replica owns nothing until then (narrower is always safe).
const maxViews = 8

// followLoop reads the group's Leases every RenewInterval (every
// SettleInterval while the membership changes) and hands objects over.
func (s *Shard) followLoop(ctx context.Context) {
	tbl := table{}
	selector := LabelGroup + "=" + s.opts.Settings.Group
	wait := time.Duration(0)
	for {
		t := s.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		case <-s.changed:
		}
		t.Stop()
		wait = s.opts.Settings.SettleInterval
		if s.follow(ctx, tbl, selector) {
			wait = s.opts.Settings.RenewInterval
		}
	}
}

// follow lists the group's Leases once and takes the step they allow; it
// reports whether the view is settled.
func (s *Shard) follow(ctx context.Context, tbl table, selector string) bool {
	listStart := s.clock.Now()
	rctx, cancel := context.WithTimeout(ctx, s.requestTimeout())
	leases, err := s.opts.Leases.ListLeases(rctx, s.opts.Namespace, selector)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn(fmt.Sprintf("Sharding: cannot list the membership Leases: %v", err))
		}
		return false
	}
	// A version first seen in this listing is seen from when the listing
	// returned: it may have been written after the listing began (by a
	// renewal that began after it too), and its holder measures its own
	// renew deadline from that renewal's start. Counted from the listing's
	// start, the Lease would expire up to a request's time early, eating
	// the LeaseDuration-RenewDeadline its holder has to stop.
	tbl.update(leases, s.clock.Now())
	s.noteOwnVersion(leases)
	s.cleanDead(ctx, tbl, listStart)
	return s.step(ctx, tbl, listStart)
}

// watchLoop wakes the follow loop when a Lease of the group appears or
// goes, or acknowledges another view, until ctx ends. Renewals that change
// nothing else (every member's, every RenewInterval) do not wake it.
func (s *Shard) watchLoop(ctx context.Context, w LeaseWatcher) {
	views := map[string]string{} // Lease name -> acknowledged view
	selector := LabelGroup + "=" + s.opts.Settings.Group
	_ = w.WatchLeases(ctx, s.opts.Namespace, selector, s.opts.Settings.SettleInterval, func(ev kube.LeaseEvent) {
		name, view := ev.Lease.Name, ev.Lease.Annotations[AnnotationView]
		old, known := views[name]
		switch {
		case ev.Deleted:
			delete(views, name)
		case known && old == view:
			return
		default:
			views[name] = view
		}
		select {
		case s.changed <- struct{}{}:
		default:
		}
	})
}

// step adopts a new view (narrowing what this replica handles, and
// acknowledging it once the objects it gives away have stopped) or
// settles the current one (taking the objects it gives to this replica)
// once every member has acknowledged it. It reports whether the view is
// settled.
func (s *Shard) step(ctx context.Context, tbl table, listStart time.Time) bool {
	s.mu.Lock()
	if s.fenced || s.lastOK.IsZero() {
		s.mu.Unlock()
		return false
	}
	epoch := s.epoch
	live := tbl.live(listStart, s.opts.Settings.LeaseDuration)
	ids := []string{s.self}
	for _, l := range live {
		ids = append(ids, l.Holder)
	}
	v := NewView(ids)
	if v.ID != s.cur.ID {
		if len(s.grant.views) >= maxViews {
			s.grant = grant{none: true}
		}
		s.grant.views = append(slices.Clone(s.grant.views), v)
		s.mu.Unlock()
		metrics.ShardHandover()
		s.log.Info(fmt.Sprintf("Sharding: the members are now %s (view %s); stopping the objects this replica gives away.",
			strings.Join(v.Members, ", "), v.ID))
		if err := s.opts.Target.Release(ctx); err != nil {
			return false
		}
		s.mu.Lock()
		if s.epoch == epoch { // not fenced meanwhile
			s.cur, s.ack = v, v.ID
		}
		s.mu.Unlock()
		select {
		case s.poke <- struct{}{}:
		default:
		}
		return false
	}
	if s.settled == v.ID {
		s.mu.Unlock()
		now := s.owner()
		owned, _ := s.opts.Target.Acquire(ctx, now, now, nil) // counts only: cannot fail
		s.mu.Lock()
		s.owned = owned
		s.mu.Unlock()
		metrics.ShardOwned(owned)
		return true
	}
	// Our acknowledgement must be on the Lease before this listing began,
	// and every other member's in it.
	if s.okAck != v.ID || !s.okDone.Before(listStart) || !acknowledged(live, v, s.self) {
		s.mu.Unlock()
		return false
	}
	before := s.grant
	s.mu.Unlock()
	return s.settle(ctx, v, before, epoch)
}

// settle replaces the grant before with the view v every member has
// acknowledged, and takes the objects v gives to this replica; it reports
// whether v is settled (not if the replica was fenced since epoch, or the
// versions of the objects taken could not be read).
func (s *Shard) settle(ctx context.Context, v View, before grant, epoch int) bool {
	next := grant{views: []View{v}}
	// The grant widens only once the reactor knows the versions of the
	// objects it takes: a cycle that Owns let through earlier could run
	// on a watch cache without the previous owner's last write (or on
	// the stale snapshot of a first listing still being delivered) and
	// call a handler that owner has already called.
	admit := func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.epoch != epoch {
			return false // fenced meanwhile: owns nothing
		}
		s.grant, s.settled = next, v.ID
		return true
	}
	var owned int
	var err error
	if before.covers(v) { // nothing to take, no versions to read
		admit()
		owned, _ = s.opts.Target.Acquire(ctx, s.owner(), s.owner(), nil) // counts only: cannot fail
	} else {
		owned, err = s.opts.Target.Acquire(ctx,
			func(uid string) bool { return before.owns(s.self, uid) },
			func(uid string) bool { return next.owns(s.self, uid) }, admit)
	}
	s.mu.Lock()
	if err != nil || s.settled != v.ID || s.epoch != epoch {
		s.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			s.log.Warn(fmt.Sprintf("Sharding: view %s does not settle yet (tried again in %s): %v",
				v.ID, s.opts.Settings.SettleInterval, err))
		}
		return false
	}
	s.owned = owned
	s.mu.Unlock()
	metrics.ShardOwned(owned)
	metrics.ShardSettled(len(v.Members))
	s.log.Info(fmt.Sprintf("Sharding: view %s settled: %d members (%s); this replica (%s) owns %d objects.",
		v.ID, len(v.Members), strings.Join(v.Members, ", "), s.self, owned))
	return true
}

// acknowledged reports whether every member of v but self has published
// v's ID on its Lease.
func acknowledged(live []kube.Lease, v View, self string) bool {
	acks := make(map[string]string, len(live))
	for _, l := range live {
		acks[l.Holder] = l.Annotations[AnnotationView]
	}
	for _, m := range v.Members {
		if m != self && acks[m] != v.ID {
			return false
		}
	}
	return true
}

// noteOwnVersion takes this replica's Lease version from a listing after
// a renewal found another one (a conflict, or a Lease left by an earlier
// process of the same identity).
func (s *Shard) noteOwnVersion(leases []kube.Lease) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range leases {
		if l.Name == s.name && s.needRV {
			s.rv, s.needRV = l.ResourceVersion, false
		}
	}
}

// cleanDead deletes the Leases of replicas gone for twice the lease
// duration (at their version, so a renewed one stays).
func (s *Shard) cleanDead(ctx context.Context, tbl table, now time.Time) {
	for _, l := range tbl.dead(now, s.opts.Settings.LeaseDuration) {
		if l.Name == s.name {
			continue
		}
		if err := s.opts.Leases.DeleteLease(ctx, l.Namespace, l.Name, l.ResourceVersion); err == nil {
			s.log.Info(fmt.Sprintf("Sharding: deleted the Lease %s of replica %q, not renewed for %s.",
				l.Name, l.Holder, 2*s.opts.Settings.LeaseDuration))
		}
		delete(tbl, l.Name)
	}
}
