package settings

import (
	"strings"
	"testing"
	"time"
)

// TestLeaseIsSharedByItsGroups checks that leader election and sharding
// read their lease timing from a config file under their own keys, and
// that the one check of the shared type names the group's key.
func TestLeaseIsSharedByItsGroups(t *testing.T) {
	s, err := Load(strings.NewReader("leaderElection:\n  leaseDuration: 20s\n  renewDeadline: 12s\n"+
		"sharding:\n  leaseDuration: 8s\n  renewDeadline: 6s\n  renewInterval: 2s\n"), Default())
	if err != nil {
		t.Fatal(err)
	}
	if le, sh := s.LeaderElection, s.Sharding; le.LeaseDuration != 20*time.Second || le.RenewDeadline != 12*time.Second ||
		sh.LeaseDuration != 8*time.Second || sh.RenewDeadline != 6*time.Second || sh.RenewInterval != 2*time.Second {
		t.Errorf("Load = %+v, %+v", le, sh)
	}
	if _, err := Load(strings.NewReader("sharding:\n  lease: {}\n"), Default()); err == nil ||
		!strings.Contains(err.Error(), "known: enabled, group, namespace, leaseDuration, renewDeadline, renewInterval, settleInterval") {
		t.Errorf("Load(sharding.lease) = %v, want the group's keys", err)
	}
	tests := []struct {
		name   string
		change func(*Settings)
		want   string // "" for valid
	}{
		{"sharding deadline past the lease", func(s *Settings) { s.Sharding.RenewDeadline = s.Sharding.LeaseDuration },
			"sharding.renewDeadline: must be shorter than sharding.leaseDuration (15s), or a replica could still handle"},
		{"leader deadline past the lease", func(s *Settings) { s.LeaderElection.RenewDeadline = 20 * time.Second },
			"leaderElection.renewDeadline: must be shorter than leaderElection.leaseDuration (15s), or a leader could still handle"},
		{"no sharding lease", func(s *Settings) { s.Sharding.LeaseDuration = 0 }, "sharding.leaseDuration: must be above 0"},
		{"no leader deadline", func(s *Settings) { s.LeaderElection.RenewDeadline = 0 }, "leaderElection.renewDeadline: must be above 0"},
		{"sharding renews too late", func(s *Settings) { s.Sharding.RenewInterval = s.Sharding.RenewDeadline },
			"sharding.renewInterval: must be shorter than sharding.renewDeadline"},
		{"short leases", func(s *Settings) {
			s.Sharding.Lease = Lease{LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second}
			s.Sharding.RenewInterval = time.Second
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Default()
			tt.change(&s)
			err := s.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}
