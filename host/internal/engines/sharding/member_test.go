package sharding

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

func TestNewMember(t *testing.T) {
	for _, tc := range []struct {
		name              string
		shards            bool
		wantNil           bool
		namespace, wantNS string
	}{
		{name: "off", wantNil: true},
		{name: "on", shards: true, wantNS: "from-pod"},
		{name: "own namespace", shards: true, namespace: "operators", wantNS: "operators"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", "from-pod")
			t.Setenv("POD_NAME", "pod-1")
			s := settings.Default().Sharding
			s.Enabled, s.Namespace = tc.shards, tc.namespace
			got := NewMember(nil, s, time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if tc.wantNil != (got == nil) {
				t.Fatalf("member = %v, want nil: %v", got, tc.wantNil)
			}
			if got == nil {
				if got.Shard() != nil {
					t.Error("no sharding, yet a shard")
				}
				got.Start(nil) // safe on nil
				got.Stop()
				return
			}
			if got.Shard() == nil {
				t.Error("sharding without a shard")
			}
			if got.namespace != tc.wantNS {
				t.Errorf("Lease namespace = %q, want %q", got.namespace, tc.wantNS)
			}
			if identity() != "pod-1" {
				t.Errorf("identity = %q, want the pod's name", identity())
			}
		})
	}
}
