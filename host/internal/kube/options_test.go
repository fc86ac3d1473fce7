package kube

import (
	"reflect"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// withSettings returns Options with settings.Default() changed by change.
func withSettings(change func(*settings.Settings)) Options {
	s := settings.Default()
	change(&s)
	return Options{Settings: &s}
}

func TestOptionsDefaults(t *testing.T) {
	d := Options{}.withDefaults()
	if d.Settings == nil || !reflect.DeepEqual(*d.Settings, settings.Default()) || d.Logger == nil {
		t.Errorf("defaults = %+v, want settings.Default() and a logger", d)
	}
	s := settings.Default()
	o := Options{Settings: &s}.withDefaults()
	s.Kube.UserAgent = "changed later"
	if o.Settings == &s || o.Settings.Kube.UserAgent != "kopf-wasm" {
		t.Errorf("the options share the caller's settings")
	}
}

// TestClientFollowsSettings: the client takes its values from the settings
// it is given, not from defaults of its own.
func TestClientFollowsSettings(t *testing.T) {
	c, err := New(&rest.Config{Host: "http://127.0.0.1:1"}, withSettings(func(s *settings.Settings) {
		s.Kube.ErrorBackoffs = nil
		s.Kube.RequestTimeout = 7 * time.Second
		s.Kube.QPS, s.Kube.Burst = 5, 3
		s.Kube.UserAgent = "agent"
		s.Posting.ReportingInstance = "pod-1"
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.retry.backoffs) != 0 || c.retry.timeout != 7*time.Second || c.instance != "pod-1" {
		t.Errorf("retries %v each %v, instance %q", c.retry.backoffs, c.retry.timeout, c.instance)
	}
	cfg := c.restConfig(&rest.Config{})
	if cfg.UserAgent != "agent" || cfg.QPS != 5 || cfg.Burst != 3 {
		t.Errorf("rest config: agent %q QPS %v burst %d", cfg.UserAgent, cfg.QPS, cfg.Burst)
	}
	if c, _ := New(&rest.Config{Host: "http://127.0.0.1:1"}, Options{}); c.instance == "" {
		t.Errorf("no reporting instance by default; want the host name")
	}
}
