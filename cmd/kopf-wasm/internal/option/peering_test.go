package option

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

func TestPeeringFlags(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr string
		check   func(settings.Settings) bool
	}{
		{nil, "", func(s settings.Settings) bool {
			return s.Peering == settings.Default().Peering && !s.LeaderElection.Enabled
		}},
		{[]string{"-P", "ops"}, "", func(s settings.Settings) bool { return s.Peering.Name == "ops" && s.Peering.Mandatory }},
		{[]string{"--dev"}, "", func(s settings.Settings) bool { return s.Peering.Priority == 666 }},
		{[]string{"--dev", "-p", "7"}, "", func(s settings.Settings) bool { return s.Peering.Priority == 7 }},
		{[]string{"-p", "-3"}, "", func(s settings.Settings) bool { return s.Peering.Priority == -3 && !s.Peering.Mandatory }},
		{[]string{"--standalone"}, "", func(s settings.Settings) bool { return s.Peering.Standalone }},
		{[]string{"--leader-elect", "--leader-elect-namespace", "ops"}, "", func(s settings.Settings) bool {
			return s.LeaderElection.Enabled && s.LeaderElection.Namespace == "ops"
		}},
		{[]string{"--standalone", "-P", "x"}, "exclude each other", nil},
		{[]string{"--leader-elect-namespace", "ops"}, "needs --leader-elect", nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var o Peering
			fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
			o.ApplyFlags(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Validate() = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s := settings.Default()
			o.Apply(&s)
			if !tt.check(s) {
				t.Errorf("settings after %v: peering %+v, leader election %+v", tt.args, s.Peering, s.LeaderElection)
			}
		})
	}
}
