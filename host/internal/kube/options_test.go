package kube

import (
	"testing"
	"time"
)

func TestOptionsDefaults(t *testing.T) {
	d := Options{}.withDefaults()
	if d.QPS != -1 || d.Burst != 0 || d.UserAgent != "kopf-wasm" || d.FieldManager != "kopf-wasm" ||
		d.RequestTimeout != 30*time.Second || len(d.Backoffs) != 8 || d.EventNamespace != "default" ||
		d.Logger == nil || d.DiscoveryRefresh != 2*time.Second {
		t.Errorf("defaults = %+v", d)
	}
	kept := Options{QPS: -1, Burst: 5, Backoffs: []time.Duration{}, UserAgent: "me"}.withDefaults()
	if kept.QPS != -1 || kept.Burst != 5 || kept.Backoffs == nil || len(kept.Backoffs) != 0 || kept.UserAgent != "me" {
		t.Errorf("set fields were overridden: %+v", kept)
	}
	if limited := (Options{QPS: 50}).withDefaults(); limited.QPS != 50 || limited.Burst != 100 {
		t.Errorf("a limit without a burst: QPS %v burst %d, want 50 and 100", limited.QPS, limited.Burst)
	}
}
