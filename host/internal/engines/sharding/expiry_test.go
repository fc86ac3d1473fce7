package sharding

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	testclock "k8s.io/utils/clock/testing"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
)

// slowListing is a Lease API whose listings take a while on a fake clock:
// the Lease it returns was renewed in the middle of the listing.
type slowListing struct {
	clk   *testclock.FakeClock
	takes time.Duration
	lease kube.Lease
}

func (l *slowListing) ListLeases(context.Context, string, string) ([]kube.Lease, error) {
	l.clk.Step(l.takes)
	return []kube.Lease{l.lease}, nil
}

func (l *slowListing) PutLease(_ context.Context, le kube.Lease) (kube.Lease, error) { return le, nil }
func (l *slowListing) DeleteLease(context.Context, string, string, string) error     { return nil }

// idleTarget hands nothing over.
type idleTarget struct{}

func (idleTarget) Release(context.Context) error { return nil }
func (idleTarget) Acquire(_ context.Context, _, _ func(string) bool, admit func() bool) (int, error) {
	if admit != nil {
		admit()
	}
	return 0, nil
}

// TestLeaseExpiresFromTheListingThatSawItRenewed: a Lease renewed while
// a slow listing was under way is seen from when the listing returned.
// Its holder began that renewal after the listing began and stops its
// objects RenewDeadline after the renewal's start; counted from the
// listing's start, the Lease would expire before LeaseDuration after that
// renewal and leave its holder less than LeaseDuration-RenewDeadline to
// stop (nothing on a machine whose requests take a second: in
// TestShardingSplitsObjectsAndHandsThemOver's settings, 4s-3s-1s).
func TestLeaseExpiresFromTheListingThatSawItRenewed(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := testclock.NewFakeClock(start)
	set := fastSettings()
	set.LeaseDuration, set.RenewDeadline, set.RenewInterval, set.SettleInterval = 4*time.Second, 3*time.Second, time.Second, 200*time.Millisecond
	// b began its renewal 0.5s into a listing that takes 1s, and fences
	// itself at 3.5s: a's table must keep it live until at least 4.5s.
	leases := &slowListing{clk: clk, takes: time.Second, lease: kube.Lease{
		Namespace: "ns", Name: "g-b", Holder: "b", ResourceVersion: "7", RenewTime: start.Add(500 * time.Millisecond),
	}}
	s := New(Options{
		Identity: "a", Namespace: "ns", Settings: set, Leases: leases, Target: idleTarget{}, Clock: clk,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	s.lastOK = start // a renews its own Lease throughout
	tbl := table{}
	s.follow(context.Background(), tbl, "")
	if !s.cur.Has("b") {
		t.Fatalf("after the first listing the members are %v, want b among them", s.cur.Members)
	}
	// At 4.2s (3.7s after b's renewal began, 0.7s after b fenced itself)
	// a lists again and sees b's Lease unchanged: b is still a member.
	leases.takes = 0
	clk.SetTime(start.Add(4200 * time.Millisecond))
	s.lastOK = clk.Now()
	s.follow(context.Background(), tbl, "")
	if !s.cur.Has("b") {
		t.Errorf("at 4.2s the members are %v: b's Lease, renewed at 0.5s, expired before 4.5s", s.cur.Members)
	}
}
