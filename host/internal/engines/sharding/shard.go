package sharding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// Leases are the Lease requests membership makes (kube.Client's).
type Leases interface {
	ListLeases(ctx context.Context, namespace, selector string) ([]kube.Lease, error)
	PutLease(ctx context.Context, l kube.Lease) (kube.Lease, error)
	DeleteLease(ctx context.Context, namespace, name, resourceVersion string) error
}

// LeaseWatcher is what Leases may also do (kube.Client does): follow the
// group's Leases in one long request. Membership then lists them as soon
// as one appears, goes or acknowledges another view, rather than at its
// next interval; every decision is still made on a listing.
type LeaseWatcher interface {
	WatchLeases(ctx context.Context, namespace, selector string, retry time.Duration, event func(kube.LeaseEvent)) error
}

// Target is what hands objects over: the reactor.
type Target interface {
	// Release stops handling every object [Shard.Owns] no longer admits:
	// it returns once their cycles in flight have finished and their
	// timers and daemons have stopped, or with ctx's error.
	Release(ctx context.Context) error
	// Acquire takes the objects after admits and before did not. First it
	// reads their current resourceVersions from the API server (their
	// previous owners have acknowledged the view: they write them no
	// more) and makes each wait until the watch cache has that version;
	// only then it calls admit, from which on Owns admits them (admit
	// reports false when the replica was fenced meanwhile), and queues
	// them. It returns how many cached objects Owns admits. When it
	// cannot read the versions it returns the error without calling
	// admit: the view settles at a later try. With admit nil nothing
	// changes hands and it only counts.
	Acquire(ctx context.Context, before, after func(uid string) bool, admit func() bool) (int, error)
}

// Options configure a [Shard].
type Options struct {
	// Identity names this replica among the members; unique per process.
	Identity string
	// Namespace holds the Leases (settings.Sharding.Namespace resolved).
	Namespace string
	Settings  settings.Sharding
	Leases    Leases
	Target    Target
	// Clock is the wall clock (a fake one in tests). Default: the real one.
	Clock  clock.Clock
	Logger *slog.Logger
}

// grant is what this replica may handle: the objects that every view in
// views gives to it (none at all while none is set). It only narrows
// (each view adopted is added) until a view settles and replaces it.
type grant struct {
	none  bool
	views []View
}

func (g grant) owns(self, uid string) bool {
	if g.none {
		return false
	}
	for _, v := range g.views {
		if v.Owner(uid) != self {
			return false
		}
	}
	return true
}

// covers reports whether g admits every object v gives to self, so that
// settling v takes nothing over: g admits something and every view in it
// has only members of v. (An object self wins among v's members it wins
// among any fewer of them too: rendezvous hashing, ties to the first
// member in order, which keeps its order in a subset.) A join is such a
// view for the replicas already there.
func (g grant) covers(v View) bool {
	if g.none || len(g.views) == 0 {
		return false
	}
	for _, w := range g.views {
		for _, m := range w.Members {
			if !v.Has(m) {
				return false
			}
		}
	}
	return true
}

// Shard is this replica's membership in a shard group.
type Shard struct {
	opts  Options
	self  string
	name  string // of this replica's Lease
	clock clock.Clock
	log   *slog.Logger
	poke  chan struct{}
	// changed wakes the follow loop: a Lease appeared, went or
	// acknowledged another view (LeaseWatcher).
	changed chan struct{}

	mu      sync.Mutex
	grant   grant
	fenced  bool
	epoch   int    // counts fences
	cur     View   // the view this replica adopted last (its hand-over done or under way)
	ack     string // the view ID to publish
	owned   int
	rv      string    // of this replica's Lease, "" to create it
	needRV  bool      // a renewal met another version: take it from the next listing
	lastOK  time.Time // start of the last renewal that succeeded
	okAck   string    // the view ID it published
	okDone  time.Time // when it returned
	settled string    // the view ID that settled last
}

var unsafeName = regexp.MustCompile(`[^a-z0-9.-]+`)

// New returns a replica's membership, owning nothing until it runs and
// its view settles.
func New(opts Options) *Shard {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	name := unsafeName.ReplaceAllString(strings.ToLower(opts.Settings.Group+"-"+opts.Identity), "-")
	name = strings.Trim(name[:min(len(name), 253)], "-.")
	return &Shard{
		opts: opts, self: opts.Identity, name: name, clock: opts.Clock, log: opts.Logger,
		poke: make(chan struct{}, 1), changed: make(chan struct{}, 1), grant: grant{none: true},
	}
}

// Owns reports whether this replica may handle the object with this UID
// now. It is cheap: one rendezvous hash per adopted view.
func (s *Shard) Owns(uid string) bool {
	s.mu.Lock()
	g, fenced := s.grant, s.fenced
	s.mu.Unlock()
	return !fenced && g.owns(s.self, uid)
}

// owner returns Owns as of now, frozen (for Acquire's "before").
func (s *Shard) owner() func(string) bool {
	s.mu.Lock()
	g, fenced := s.grant, s.fenced
	s.mu.Unlock()
	return func(uid string) bool { return !fenced && g.owns(s.self, uid) }
}

// Run keeps the membership until ctx ends: it renews this replica's Lease
// and follows the others'. Cancel ctx only after the reactor has stopped
// (a stopping reactor still handles objects), then call [Shard.Leave].
func (s *Shard) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.renewLoop(ctx) }()
	go func() { defer wg.Done(); s.fenceLoop(ctx) }()
	if w, ok := s.opts.Leases.(LeaseWatcher); ok {
		wg.Add(1)
		go func() { defer wg.Done(); s.watchLoop(ctx, w) }()
	}
	s.followLoop(ctx)
	wg.Wait()
}

// Leave deletes this replica's Lease, so that the others take its objects
// at once instead of after the lease duration. Call it once the reactor
// has stopped handling everything.
func (s *Shard) Leave(ctx context.Context) error {
	return s.opts.Leases.DeleteLease(ctx, s.opts.Namespace, s.name, "")
}

// renewLoop renews the Lease every RenewInterval (at once when poked,
// every SettleInterval after a failure), and fences the replica when it
// could not renew for RenewDeadline.
func (s *Shard) renewLoop(ctx context.Context) {
	set := s.opts.Settings
	wait := time.Duration(0)
	for {
		t := s.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.poke:
		case <-t.C():
		}
		t.Stop()
		if s.renew(ctx) {
			wait = set.RenewInterval
		} else {
			wait = set.SettleInterval
		}
	}
}

// fenceLoop checks every SettleInterval whether the replica must stop
// everything (checkFence), independently of renewals that may hang.
func (s *Shard) fenceLoop(ctx context.Context) {
	for {
		t := s.clock.NewTimer(s.opts.Settings.SettleInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		s.checkFence(ctx)
	}
}

// requestTimeout bounds one Lease request: a renewal that hangs must not
// outlive the renew deadline unnoticed.
func (s *Shard) requestTimeout() time.Duration {
	return min(s.opts.Settings.RenewInterval, s.opts.Settings.RenewDeadline/2)
}

// renew writes this replica's Lease once; it reports success.
func (s *Shard) renew(ctx context.Context) bool {
	start := s.clock.Now()
	s.mu.Lock()
	l := kube.Lease{
		Namespace: s.opts.Namespace, Name: s.name, ResourceVersion: s.rv, Holder: s.self,
		DurationSeconds: int32(s.opts.Settings.LeaseDuration / time.Second), RenewTime: start,
		Labels: map[string]string{LabelGroup: s.opts.Settings.Group},
		Annotations: map[string]string{
			AnnotationView: s.ack, AnnotationMembers: strings.Join(s.cur.Members, ","),
			AnnotationObjects: strconv.Itoa(s.owned),
		},
	}
	if s.ack == "" {
		l.Annotations[AnnotationMembers] = ""
	}
	s.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, s.requestTimeout())
	got, err := s.opts.Leases.PutLease(rctx, l)
	cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err == nil:
		s.rv, s.lastOK, s.okAck, s.okDone = got.ResourceVersion, start, l.Annotations[AnnotationView], s.clock.Now()
		return true
	case errors.Is(err, kube.ErrGone):
		s.rv = "" // deleted (by a member that took it for dead): create it again
	case errors.Is(err, kube.ErrConflict), errors.Is(err, kube.ErrExists):
		s.needRV = true // the next listing says the version to replace
	}
	if ctx.Err() == nil {
		s.log.Warn(fmt.Sprintf("Sharding: cannot renew the membership Lease %s/%s: %v", s.opts.Namespace, s.name, err))
	}
	return false
}

// checkFence stops every object of a replica that has not renewed its
// Lease for RenewDeadline: the others may take them after LeaseDuration.
func (s *Shard) checkFence(ctx context.Context) {
	s.mu.Lock()
	late := s.clock.Since(s.lastOK) >= s.opts.Settings.RenewDeadline
	switch {
	case late && !s.fenced && !s.lastOK.IsZero():
		s.fenced, s.epoch = true, s.epoch+1
		s.grant, s.cur, s.ack, s.settled = grant{none: true}, View{}, "", ""
		s.mu.Unlock()
		metrics.ShardOwned(0)
		metrics.ShardSettled(0)
		s.log.Error(fmt.Sprintf("Sharding: the membership Lease was not renewed for %s; stopping every object "+
			"(the other replicas take them once the Lease expires).", s.opts.Settings.RenewDeadline))
		if err := s.opts.Target.Release(ctx); err != nil && ctx.Err() == nil {
			s.log.Error(fmt.Sprintf("Sharding: stopping the objects: %v", err))
		}
		return
	case !late && s.fenced:
		s.fenced = false // owning nothing until a view settles again
	}
	s.mu.Unlock()
}
