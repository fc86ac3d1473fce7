package kube

import (
	"context"
	"errors"
	"log/slog"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

// jitterFactor is client-go's: a candidate tries to acquire the Lease
// every RetryPeriod × (1 + jitterFactor × a random fraction).
const jitterFactor = 1.2

// elector is one campaign of [Client.Elect]: client-go's LeaderElector
// (tools/leaderelection, v0.34), for a Lease only, written here so that
// the host does not link client-go's typed clientset (see the package
// comment). Its rules are client-go's:
//
//   - It takes the Lease when there is none (it creates it), when its
//     holder is empty (released) or this identity, or when it expired:
//     leaseDurationSeconds passed on the elector's own clock since the
//     elector last saw the Lease's record change (observedAt). renewTime
//     is never compared with the local clock, so clock skew between
//     replicas does not matter; a new elector waits a whole
//     leaseDurationSeconds after its first read.
//   - Taking the Lease from another holder counts one leaseTransitions.
//   - Every write is an update at the resourceVersion read: a 409
//     Conflict is a failed attempt (someone else wrote first), not an
//     error.
//   - A candidate tries every RetryPeriod with jitter; the leader renews
//     every RetryPeriod (trying first with the Lease it last wrote, then
//     reading it), and stops leading when a round of renewals has not
//     succeeded within RenewDeadline.
//   - Released, the Lease has an empty holderIdentity and a
//     leaseDurationSeconds of 1, so that the next candidate takes it at
//     its next attempt.
//
// Departures: it releases the Lease only when ctx ends, after OnStopped,
// not after a lost renewal (client-go's ReleaseOnCancel releases then
// too, before OnStoppedLeading, which would let another replica lead
// before the cycles in flight drained); the release writes only a Lease it
// reads as still its own; the callbacks run on the campaign's goroutine
// (client-go starts OnStartedLeading and OnNewLeader on their own),
// OnStopped only after leading, OnNewLeader never for an empty holder
// (nobody leads); an attempt to acquire has the renew deadline for its
// requests (client-go's have no deadline).
type elector struct {
	e      Election
	api    leaseStore
	clock  clock.Clock
	log    *slog.Logger
	jitter func() float64 // in [0, 1)

	lease      *coordinationv1.Lease // the Lease as last read or written: its resourceVersion
	observed   leaseRecord           // its record
	observedAt time.Time             // on clock, when observed last changed
	reported   string                // the holder last passed to OnNewLeader
}

// leaseRecord is what the elector compares of a Lease's spec to tell
// whether it changed since it last read it (client-go compares its
// LeaderElectionRecord's JSON).
type leaseRecord struct {
	holder                    string
	durationSeconds           int32
	transitions               int32
	acquireMicro, renewMicro  int64
	preferredHolder, strategy string
}

func recordOf(l *coordinationv1.Lease) leaseRecord {
	s := l.Spec
	r := leaseRecord{}
	if s.HolderIdentity != nil {
		r.holder = *s.HolderIdentity
	}
	if s.LeaseDurationSeconds != nil {
		r.durationSeconds = *s.LeaseDurationSeconds
	}
	if s.LeaseTransitions != nil {
		r.transitions = *s.LeaseTransitions
	}
	if s.AcquireTime != nil {
		r.acquireMicro = s.AcquireTime.UnixMicro()
	}
	if s.RenewTime != nil {
		r.renewMicro = s.RenewTime.UnixMicro()
	}
	if s.PreferredHolder != nil {
		r.preferredHolder = *s.PreferredHolder
	}
	if s.Strategy != nil {
		r.strategy = string(*s.Strategy)
	}
	return r
}

// run campaigns until ctx ends or, having led, the Lease is lost.
func (el *elector) run(ctx context.Context) {
	if !el.acquire(ctx) {
		return
	}
	el.log.Debug("lease acquired")
	el.e.OnStarted()
	el.renew(ctx)
	el.e.OnStopped()
	if ctx.Err() != nil {
		el.release()
	}
}

// acquire tries until it holds the Lease (true) or ctx ends (false).
func (el *elector) acquire(ctx context.Context) bool {
	for ctx.Err() == nil {
		ok := el.try(ctx, el.clock.Now().Add(el.e.RenewDeadline))
		el.report()
		if ok {
			return true
		}
		wait := el.e.RetryPeriod + time.Duration(jitterFactor*el.jitter()*float64(el.e.RetryPeriod))
		if !el.sleep(ctx, wait) {
			return false
		}
	}
	return false
}

// renew renews the Lease every RetryPeriod until ctx ends or a round of
// renewals does not succeed within RenewDeadline.
func (el *elector) renew(ctx context.Context) {
	for el.renewRound(ctx) && el.sleep(ctx, el.e.RetryPeriod) {
	}
}

// renewRound tries to renew at once and then every RetryPeriod, until it
// succeeds (true) or RenewDeadline passed since it began or ctx ends
// (false). Its requests are bounded by what is left of the deadline.
func (el *elector) renewRound(ctx context.Context) bool {
	deadline := el.clock.Now().Add(el.e.RenewDeadline)
	for {
		ok := el.try(ctx, deadline)
		el.report()
		if ok {
			return true
		}
		left, ok := el.left(deadline)
		if !ok {
			el.log.Warn("lease not renewed within the renew deadline", "renewDeadline", el.e.RenewDeadline)
			return false
		}
		if !el.sleep(ctx, min(el.e.RetryPeriod, left)) {
			return false
		}
	}
}

// try acquires or renews the Lease once (client-go's tryAcquireOrRenew)
// and reports whether this identity holds it now. Its requests end by
// deadline (on the elector's clock); none starts after it.
func (el *elector) try(ctx context.Context, deadline time.Time) bool {
	now := el.clock.Now()
	if el.leading() && el.valid(now) && el.lease != nil {
		// Renewing: write the Lease last written, at its resourceVersion.
		if el.write(ctx, el.lease, now, deadline) == nil {
			return true
		}
	}
	limit, ok := el.left(deadline)
	if !ok {
		return false
	}
	got, err := el.api.get(ctx, limit)
	if errors.Is(err, ErrGone) {
		l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: el.e.Namespace, Name: el.e.Name}}
		l.Spec = el.spec(now, 0, now)
		if limit, ok = el.left(deadline); !ok {
			return false
		}
		created, err := el.api.create(ctx, l, limit)
		if err != nil {
			el.failed("create", err)
			return false
		}
		el.observe(created)
		return true
	}
	if err != nil {
		el.failed("get", err)
		return false
	}
	el.lease = got
	if rec := recordOf(got); rec != el.observed || el.observedAt.IsZero() {
		el.observed, el.observedAt = rec, el.clock.Now()
	}
	if el.observed.holder != "" && el.valid(now) && !el.leading() {
		return false // held by another, not expired
	}
	return el.write(ctx, got, now, deadline) == nil
}

// write updates l (as read or last written) to be held by this identity
// at now: the acquire time and transitions kept when it holds it already,
// one more transition when it takes it.
func (el *elector) write(ctx context.Context, l *coordinationv1.Lease, now, deadline time.Time) error {
	limit, ok := el.left(deadline)
	if !ok {
		return context.DeadlineExceeded
	}
	acquired, transitions := now, el.observed.transitions+1
	if el.leading() {
		acquired, transitions = time.UnixMicro(el.observed.acquireMicro), el.observed.transitions
	}
	l = l.DeepCopy()
	l.Spec = el.spec(acquired, transitions, now)
	written, err := el.api.update(ctx, l, limit)
	if err != nil {
		el.failed("update", err)
		return err
	}
	el.observe(written)
	return nil
}

// spec is the spec of a Lease this identity holds.
func (el *elector) spec(acquired time.Time, transitions int32, renewed time.Time) coordinationv1.LeaseSpec {
	return coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(el.e.Identity),
		LeaseDurationSeconds: ptr.To(int32(el.e.LeaseDuration / time.Second)),
		AcquireTime:          &metav1.MicroTime{Time: acquired},
		RenewTime:            &metav1.MicroTime{Time: renewed},
		LeaseTransitions:     ptr.To(transitions),
	}
}

// left is the time left until deadline on the elector's clock, and
// whether there is any.
func (el *elector) left(deadline time.Time) (time.Duration, bool) {
	d := deadline.Sub(el.clock.Now())
	return d, d > 0
}

// observe keeps a Lease the elector wrote.
func (el *elector) observe(l *coordinationv1.Lease) {
	el.lease, el.observed, el.observedAt = l, recordOf(l), el.clock.Now()
}

// leading reports whether the Lease, as last seen, is this identity's.
func (el *elector) leading() bool { return el.observed.holder == el.e.Identity }

// valid reports whether the Lease as last seen has not expired at now:
// its duration has not passed since the elector saw its record change.
func (el *elector) valid(now time.Time) bool {
	return el.observedAt.Add(time.Duration(el.observed.durationSeconds) * time.Second).After(now)
}

// report calls OnNewLeader when the holder seen differs from the one last
// reported.
func (el *elector) report() {
	holder := el.observed.holder
	if holder == "" || holder == el.reported {
		return
	}
	el.reported = holder
	if el.e.OnNewLeader != nil {
		el.e.OnNewLeader(holder)
	}
}

// release gives the Lease up, if it is still this identity's: an empty
// holder and a duration of 1 s, as client-go writes it, so that a
// candidate takes it at its next attempt. It has the renew deadline for
// its two requests.
func (el *elector) release() {
	ctx := context.Background() // the campaign's has ended; each request has its limit
	deadline := el.clock.Now().Add(el.e.RenewDeadline)
	got, err := el.api.get(ctx, el.e.RenewDeadline)
	if err != nil {
		el.failed("get (release)", err)
		return
	}
	if recordOf(got).holder != el.e.Identity {
		return // someone else's already
	}
	now := el.clock.Now()
	got = got.DeepCopy()
	got.Spec = coordinationv1.LeaseSpec{
		HolderIdentity: ptr.To(""), LeaseDurationSeconds: ptr.To(int32(1)),
		AcquireTime: &metav1.MicroTime{Time: now}, RenewTime: &metav1.MicroTime{Time: now},
		LeaseTransitions: got.Spec.LeaseTransitions,
	}
	limit, ok := el.left(deadline)
	if !ok {
		return
	}
	if _, err := el.api.update(ctx, got, limit); err != nil {
		el.failed("update (release)", err)
		return
	}
	el.log.Debug("lease released")
}

// failed logs a failed request: a conflict or an existing Lease only means
// that another candidate wrote first.
func (el *elector) failed(what string, err error) {
	if errors.Is(err, ErrConflict) || errors.Is(err, ErrExists) || errors.Is(err, context.Canceled) {
		el.log.Debug("lease "+what+" did not apply", "error", err)
		return
	}
	el.log.Warn("lease "+what+" failed", "error", err)
}

// sleep waits d on the elector's clock; it reports false when ctx ended
// first.
func (el *elector) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := el.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}
