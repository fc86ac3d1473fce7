package kube

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// fakeLeases is one Lease in memory, with the API server's optimistic
// concurrency: an update at another resourceVersion is a conflict.
type fakeLeases struct {
	mu    sync.Mutex
	clock *clocktesting.FakeClock
	lease *coordinationv1.Lease // nil: none
	rv    int
	// failWrites makes every create and update fail as unavailable.
	failWrites bool
	// intrude, when set, is written by "another replica" just before the
	// next update reaches the store, which then conflicts.
	intrude func(*coordinationv1.Lease)
	// hang makes every request run out of its limit on clock, unanswered;
	// ends are the times they ended.
	hang  *clocktesting.FakeClock
	ends  []time.Time
	calls []string
}

// hung runs a request out of its limit when the store hangs.
func (f *fakeLeases) hung(what string, limit time.Duration) error {
	if f.hang == nil {
		return nil
	}
	f.hang.Step(limit)
	f.ends = append(f.ends, f.hang.Now())
	return fmt.Errorf("%s lease: %w: %w", what, ErrUnavailable, context.DeadlineExceeded)
}

func (f *fakeLeases) get(_ context.Context, limit time.Duration) (*coordinationv1.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "get")
	if err := f.hung("get", limit); err != nil {
		return nil, err
	}
	if f.lease == nil {
		return nil, fmt.Errorf("get lease: %w", ErrGone)
	}
	return f.lease.DeepCopy(), nil
}

func (f *fakeLeases) create(_ context.Context, l *coordinationv1.Lease, limit time.Duration) (*coordinationv1.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "create")
	if err := f.hung("create", limit); err != nil {
		return nil, err
	}
	switch {
	case f.failWrites:
		return nil, fmt.Errorf("create lease: %w", ErrUnavailable)
	case f.lease != nil:
		return nil, fmt.Errorf("create lease: %w", ErrExists)
	}
	return f.store(l), nil
}

func (f *fakeLeases) update(_ context.Context, l *coordinationv1.Lease, limit time.Duration) (*coordinationv1.Lease, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "update")
	if err := f.hung("update", limit); err != nil {
		return nil, err
	}
	if f.failWrites {
		return nil, fmt.Errorf("update lease: %w", ErrUnavailable)
	}
	if f.intrude != nil {
		other := f.lease.DeepCopy()
		f.intrude(other)
		f.store(other)
		f.intrude = nil
	}
	if f.lease == nil || l.ResourceVersion != f.lease.ResourceVersion {
		return nil, fmt.Errorf("update lease: %w", ErrConflict)
	}
	return f.store(l), nil
}

func (f *fakeLeases) store(l *coordinationv1.Lease) *coordinationv1.Lease {
	f.rv++
	l = l.DeepCopy()
	l.ResourceVersion = strconv.Itoa(f.rv)
	// The API server keeps microseconds.
	for _, t := range []*metav1.MicroTime{l.Spec.AcquireTime, l.Spec.RenewTime} {
		if t != nil {
			t.Time = t.Truncate(time.Microsecond)
		}
	}
	f.lease = l
	return l.DeepCopy()
}

// record returns the stored Lease's record and clears the calls.
func (f *fakeLeases) record() (leaseRecord, []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	calls := f.calls
	f.calls = nil
	if f.lease == nil {
		return leaseRecord{}, calls
	}
	return recordOf(f.lease), calls
}

// heldBy is a Lease held by holder since renewed (at its own clock, which
// the elector never compares with its own), with transitions.
func heldBy(holder string, renewed time.Time, transitions int32) *coordinationv1.Lease {
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "default"},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To(int32(15)),
			AcquireTime: &metav1.MicroTime{Time: renewed}, RenewTime: &metav1.MicroTime{Time: renewed},
			LeaseTransitions: ptr.To(transitions),
		},
	}
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// testElection is the default durations (15 s / 10 s / 2 s) for "me".
func testElection() Election {
	return Election{Namespace: "ops", Name: "default", Identity: "me",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		OnStarted: func() {}, OnStopped: func() {}}
}

func newTestElector(store *fakeLeases, clock *clocktesting.FakeClock, e Election) *elector {
	el := newElector(e, store, clock, slog.New(slog.DiscardHandler))
	el.jitter = func() float64 { return 0 }
	return el
}

// TestElectorTry is client-go's tryAcquireOrRenew, step by step: each
// step moves the fake clock, lets another replica write the Lease, and
// tries once.
func TestElectorTry(t *testing.T) {
	type step struct {
		advance time.Duration                                     // the elector's clock moves first
		other   func(f *fakeLeases)                               // then another replica writes
		want    bool                                              // try's answer
		check   func(t *testing.T, r leaseRecord, calls []string) // the stored Lease after
	}
	holds := func(holder string, transitions int32) func(*testing.T, leaseRecord, []string) {
		return func(t *testing.T, r leaseRecord, _ []string) {
			t.Helper()
			if r.holder != holder || r.transitions != transitions {
				t.Errorf("holder %q, transitions %d; want %q, %d", r.holder, r.transitions, holder, transitions)
			}
		}
	}
	renews := func(f *fakeLeases) { // the holder renews: its renewTime, on its own clock
		l := f.lease.DeepCopy()
		l.Spec.RenewTime = &metav1.MicroTime{Time: l.Spec.RenewTime.Add(2 * time.Second)}
		f.store(l)
	}
	tests := []struct {
		name  string
		lease *coordinationv1.Lease // at the start; nil: none
		steps []step
	}{
		{name: "free: no Lease, it creates one", steps: []step{
			{want: true, check: func(t *testing.T, r leaseRecord, calls []string) {
				holds("me", 0)(t, r, calls)
				if r.durationSeconds != 15 || r.renewMicro != t0.UnixMicro() || fmt.Sprint(calls) != "[get create]" {
					t.Errorf("record %+v, calls %v", r, calls)
				}
			}},
		}},
		{name: "released: an empty holder is taken at once", lease: heldBy("", t0, 3), steps: []step{
			{want: true, check: holds("me", 4)},
		}},
		{name: "held by another, not expired", lease: heldBy("other", t0, 3), steps: []step{
			{want: false, check: holds("other", 3)},
			{advance: 14 * time.Second, want: false, check: holds("other", 3)},
		}},
		{name: "held by another, expired on the elector's clock", lease: heldBy("other", t0, 3), steps: []step{
			{want: false, check: holds("other", 3)},
			{advance: 15*time.Second + time.Microsecond, want: true, check: holds("me", 4)},
		}},
		{name: "held by another with an old renewTime: skew is not expiry", lease: heldBy("other", t0.Add(-time.Hour), 3), steps: []step{
			{want: false, check: holds("other", 3)},
		}},
		{name: "held by another that keeps renewing never expires", lease: heldBy("other", t0, 3), steps: []step{
			{want: false},
			{advance: 10 * time.Second, other: renews, want: false},
			{advance: 10 * time.Second, other: renews, want: false},
			{advance: 10 * time.Second, want: false, check: holds("other", 3)},
			{advance: 5*time.Second + time.Microsecond, want: true, check: holds("me", 4)},
		}},
		{name: "held by us (a restarted replica): taken at once, transitions kept", lease: heldBy("me", t0.Add(-time.Minute), 3), steps: []step{
			{want: true, check: func(t *testing.T, r leaseRecord, calls []string) {
				holds("me", 3)(t, r, calls)
				if r.acquireMicro != t0.Add(-time.Minute).UnixMicro() {
					t.Errorf("acquireTime %v, want the first acquisition's", time.UnixMicro(r.acquireMicro))
				}
			}},
		}},
		{name: "renew: the Lease last written, without reading it", steps: []step{
			{want: true},
			{advance: 2 * time.Second, want: true, check: func(t *testing.T, r leaseRecord, calls []string) {
				holds("me", 0)(t, r, calls)
				if r.renewMicro != t0.Add(2*time.Second).UnixMicro() || r.acquireMicro != t0.UnixMicro() || fmt.Sprint(calls) != "[update]" {
					t.Errorf("renewTime %v, acquireTime %v, calls %v", time.UnixMicro(r.renewMicro), time.UnixMicro(r.acquireMicro), calls)
				}
			}},
		}},
		{name: "conflict: another replica writes first", lease: heldBy("", t0, 3), steps: []step{
			{other: func(f *fakeLeases) {
				f.intrude = func(l *coordinationv1.Lease) { l.Spec = heldBy("other", t0, 4).Spec }
			}, want: false, check: holds("other", 4)},
			{advance: 2 * time.Second, want: false, check: holds("other", 4)},
		}},
		{name: "renewal conflicts: the thief's Lease is read and respected", steps: []step{
			{want: true},
			{advance: 2 * time.Second, other: func(f *fakeLeases) {
				f.intrude = func(l *coordinationv1.Lease) { l.Spec = heldBy("other", t0, 1).Spec }
			}, want: false, check: func(t *testing.T, r leaseRecord, calls []string) {
				holds("other", 1)(t, r, calls)
				if fmt.Sprint(calls) != "[update get]" {
					t.Errorf("calls %v, want the renewal, then a read", calls)
				}
			}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := clocktesting.NewFakeClock(t0)
			store := &fakeLeases{}
			if tt.lease != nil {
				store.store(tt.lease)
			}
			el := newTestElector(store, clock, testElection())
			for i, s := range tt.steps {
				clock.Step(s.advance)
				if s.other != nil {
					s.other(store)
				}
				store.record() // forget the scene's calls
				if got := el.try(context.Background(), clock.Now().Add(time.Second)); got != s.want {
					t.Fatalf("step %d: try = %v, want %v", i, got, s.want)
				}
				if s.check != nil {
					r, calls := store.record()
					s.check(t, r, calls)
				}
			}
		})
	}
}

// callbacks records an elector's callbacks in order.
type callbacks struct {
	mu  sync.Mutex
	got []string
}

func (c *callbacks) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, s)
}

func (c *callbacks) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprint(c.got)
}

func (c *callbacks) election() Election {
	e := testElection()
	e.OnStarted = func() { c.add("started") }
	e.OnStopped = func() { c.add("stopped") }
	e.OnNewLeader = func(id string) { c.add("leader " + id) }
	return e
}

// drive runs el until it returns and returns the clock's time then.
// Whenever el waits on the fake clock, drive calls at (which may change
// the scene) and then moves the clock on by a second.
func drive(t *testing.T, ctx context.Context, el *elector, clock *clocktesting.FakeClock, cb *callbacks, at func()) time.Time {
	t.Helper()
	done := make(chan struct{})
	go func() { el.run(ctx); close(done) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-done:
			return clock.Now()
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the elector still runs 20s later; callbacks %s", cb)
		}
		if !clock.HasWaiters() {
			runtime.Gosched()
			continue
		}
		at()
		clock.Step(time.Second)
	}
}

// TestElectorRun: the campaign as a whole on a fake clock (15 s / 10 s /
// 2 s): it stops leading once a round of renewals has not succeeded
// within the renew deadline (requests that hang included: none outlasts
// it), and then leaves the Lease alone; it releases the Lease when its
// context ends while leading, and only then.
func TestElectorRun(t *testing.T) {
	tests := []struct {
		name  string
		lease *coordinationv1.Lease // at the start
		// act changes the scene at the first wait after OnStarted, or at
		// the first wait when leading is false.
		act func(store *fakeLeases, cancel context.CancelFunc)
		// afterLeading: act waits for OnStarted.
		afterLeading bool
		wantCalls    string
		want         leaseRecord // the stored Lease's holder, duration and transitions at the end
		// wantFor is how long after act it stopped (0: not checked).
		wantFor time.Duration
	}{
		{
			name: "the API server fails the renewals: lost after the renew deadline, not released",
			act: func(store *fakeLeases, _ context.CancelFunc) {
				store.mu.Lock()
				store.failWrites = true
				store.mu.Unlock()
			},
			afterLeading: true, wantCalls: "[leader me started stopped]",
			want: leaseRecord{holder: "me", durationSeconds: 15},
			// The last renewal was at act; the next round begins a retry
			// period later and gives up a renew deadline after that.
			wantFor: 12 * time.Second,
		},
		{
			name: "the API server does not answer: lost at the renew deadline, no request outlasts it",
			act: func(store *fakeLeases, _ context.CancelFunc) {
				store.mu.Lock()
				store.hang = store.clock
				store.mu.Unlock()
			},
			afterLeading: true, wantCalls: "[leader me started stopped]",
			want:    leaseRecord{holder: "me", durationSeconds: 15},
			wantFor: 12 * time.Second,
		},
		{
			name:  "ctx ends while leading: stopped, then released",
			lease: heldBy("other", t0, 2),
			act:   func(_ *fakeLeases, cancel context.CancelFunc) { cancel() },
			// It observes other's Lease, waits for it to expire on its
			// own clock, takes it (one transition), and releases it.
			afterLeading: true, wantCalls: "[leader other leader me started stopped]",
			want: leaseRecord{holder: "", durationSeconds: 1, transitions: 3},
		},
		{
			name:      "ctx ends before leading: nothing to stop or release",
			lease:     heldBy("other", t0, 2),
			act:       func(_ *fakeLeases, cancel context.CancelFunc) { cancel() },
			wantCalls: "[leader other]",
			want:      leaseRecord{holder: "other", durationSeconds: 15, transitions: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := clocktesting.NewFakeClock(t0)
			store := &fakeLeases{clock: clock}
			if tt.lease != nil {
				store.store(tt.lease)
			}
			cb := &callbacks{}
			el := newTestElector(store, clock, cb.election())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var actedAt time.Time
			stoppedAt := drive(t, ctx, el, clock, cb, func() {
				if actedAt.IsZero() && (!tt.afterLeading || strings.Contains(cb.String(), "started")) {
					actedAt = clock.Now()
					tt.act(store, cancel)
				}
			})
			if got := cb.String(); got != tt.wantCalls {
				t.Errorf("callbacks %s, want %s", got, tt.wantCalls)
			}
			r, _ := store.record()
			if got := (leaseRecord{holder: r.holder, durationSeconds: r.durationSeconds, transitions: r.transitions}); got != tt.want {
				t.Errorf("the Lease at the end: %+v, want %+v", got, tt.want)
			}
			if tt.wantFor != 0 && stoppedAt.Sub(actedAt) != tt.wantFor {
				t.Errorf("stopped leading %s after the last renewal, want %s", stoppedAt.Sub(actedAt), tt.wantFor)
			}
			for _, end := range store.ends {
				if end.After(stoppedAt) {
					t.Errorf("a request ended at %s, after the elector stopped leading at %s", end.Sub(t0), stoppedAt.Sub(t0))
				}
			}
			if store.hang != nil && len(store.ends) == 0 {
				t.Error("no request hung: the test shows nothing")
			}
		})
	}
}
