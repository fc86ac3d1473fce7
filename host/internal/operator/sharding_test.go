package operator

import (
	"errors"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/host/internal/hosterr"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

func TestNewSharding(t *testing.T) {
	for _, tc := range []struct {
		name              string
		shards, leader    bool
		wantNil, wantErr  bool
		namespace, wantNS string
	}{
		{name: "off", wantNil: true},
		{name: "on", shards: true, wantNS: "from-pod"},
		{name: "own namespace", shards: true, namespace: "operators", wantNS: "operators"},
		{name: "with leader election", shards: true, leader: true, wantNil: true, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("POD_NAMESPACE", "from-pod")
			t.Setenv("POD_NAME", "pod-1")
			s := settings.Default()
			s.Sharding.Enabled, s.LeaderElection.Enabled, s.Sharding.Namespace = tc.shards, tc.leader, tc.namespace
			got, err := newSharding(nil, Options{Settings: &s, Logger: discardLogger})
			if tc.wantErr != (err != nil) || (err != nil && !errors.Is(err, hosterr.ErrUsage)) {
				t.Fatalf("err = %v, want a usage error: %v", err, tc.wantErr)
			}
			if tc.wantNil != (got == nil) {
				t.Fatalf("shards = %v, want nil: %v", got, tc.wantNil)
			}
			if got == nil {
				if got.owner() != nil {
					t.Error("no sharding, yet an owner")
				}
				got.start(nil) // safe on nil
				got.stop()
				return
			}
			if got.owner() == nil {
				t.Error("sharding without an owner")
			}
			if got.namespace != tc.wantNS {
				t.Errorf("Lease namespace = %q, want %q", got.namespace, tc.wantNS)
			}
			if shardIdentity() != "pod-1" {
				t.Errorf("identity = %q, want the pod's name", shardIdentity())
			}
		})
	}
}
