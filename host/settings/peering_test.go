package settings

import (
	"strings"
	"testing"
	"time"
)

func TestValidatePeeringAndLeaderElection(t *testing.T) {
	tests := []struct {
		change func(*Settings)
		want   string
	}{
		{func(s *Settings) { s.Peering.Name = "" }, "peering.name: must be an object name"},
		{func(s *Settings) { s.Peering.Name = ""; s.Peering.Standalone = true }, ""},
		{func(s *Settings) { s.Peering.Lifetime = 1500 * time.Millisecond }, "peering.lifetime: must be whole seconds"},
		{func(s *Settings) { s.Peering.SyncTimeout = 0 }, "peering.syncTimeout: must be above 0"},
		{func(s *Settings) { s.Peering.GoodbyeTimeout = -time.Second }, "peering.goodbyeTimeout: must be above 0"},
		{func(s *Settings) { s.LeaderElection.LeaseName = "A_b" }, "leaderElection.leaseName: must be an object name"},
		{func(s *Settings) { s.LeaderElection.RenewDeadline = 15 * time.Second }, "leaderElection.renewDeadline: must be shorter"},
		{func(s *Settings) { s.LeaderElection.RetryPeriod = 9 * time.Second }, "leaderElection.retryPeriod: must be below"},
		{func(s *Settings) { s.LeaderElection.LeaseDuration = 0 }, "leaderElection.leaseDuration: must be above 0"},
	}
	for _, tt := range tests {
		s := Default()
		tt.change(&s)
		err := s.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Validate() = %v, want nil", err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Validate() = %v, want %q", err, tt.want)
		}
	}
	d := Default()
	if d.Peering.Name != "default" || d.Peering.Lifetime != 60*time.Second || d.Peering.Priority != 0 {
		t.Errorf("peering defaults %+v are not Kopf's", d.Peering)
	}
	if le := d.LeaderElection; le.LeaseDuration != 15*time.Second || le.RenewDeadline != 10*time.Second || le.RetryPeriod != 2*time.Second {
		t.Errorf("leader election defaults %+v", le)
	}
}
