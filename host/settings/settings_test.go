package settings

import (
	"strings"
	"testing"
	"time"
)

func TestDefaultIsValidAndKopfCompatible(t *testing.T) {
	s := Default()
	if err := s.Validate(); err != nil {
		t.Fatalf("Default().Validate() = %v", err)
	}
	p := s.Persistence
	if p.Prefix != "kopf.zalando.org" || p.Finalizer != "kopf.zalando.org/KopfFinalizerMarker" ||
		p.DiffBaseKey != "last-handled-configuration" || !p.V1Keys {
		t.Errorf("persistence defaults differ from Kopf's: %+v", p)
	}
	if s.Execution.DefaultBackoff != 60*time.Second {
		t.Errorf("default backoff = %v", s.Execution.DefaultBackoff)
	}
	d := s.Queueing.ErrorDelays
	if len(d) != 15 || d[0] != time.Second || d[len(d)-1] != 610*time.Second {
		t.Errorf("error delays = %v", d)
	}
}

func TestDefaultReturnsFreshSlices(t *testing.T) {
	a := Default()
	a.Queueing.ErrorDelays[0] = time.Hour
	if Default().Queueing.ErrorDelays[0] != time.Second {
		t.Errorf("Default shares its slices")
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Settings)
		want   string
	}{
		{"empty prefix", func(s *Settings) { s.Persistence.Prefix = "" }, "persistence.prefix is empty"},
		{"long prefix", func(s *Settings) { s.Persistence.Prefix = strings.Repeat("x", 190) }, "persistence.prefix"},
		{"unqualified finalizer", func(s *Settings) { s.Persistence.Finalizer = "marker" }, "persistence.finalizer"},
		{"no workers", func(s *Settings) { s.Execution.Workers = 0 }, "execution.workers"},
		{"no error delays", func(s *Settings) { s.Queueing.ErrorDelays = nil }, "queueing.errorDelays"},
		{"no pool", func(s *Settings) { s.Wasm.PoolSize = 0 }, "wasm limits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Default()
			tt.change(&s)
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}
