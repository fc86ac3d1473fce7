package reactor_test

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/sharding"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestShardingMovesADaemonStoppingItFirst runs a daemon on the only
// replica, then starts a second replica that owns the object in the new
// membership: the first replica's daemon is stopped with the reason
// "pausing" (its result says so) and the daemon goes on beating on the
// second replica.
func TestShardingMovesADaemonStoppingItFirst(t *testing.T) {
	c := startCluster(t)
	const ns = "sharding-daemon"
	createNamespace(t, c, ns)
	set := settings.Default()
	set.Posting.Enabled = false
	set.Sharding.Namespace = ns
	set.Sharding.LeaseDuration, set.Sharding.RenewDeadline = 4*time.Second, 3*time.Second
	set.Sharding.RenewInterval, set.Sharding.SettleInterval = time.Second, 200*time.Millisecond
	log := &successLog{}
	startReplica(t, c, ns, set, "d1", log)

	// An object that the membership {d1, d2} gives to d2.
	both := sharding.NewView([]string{"d1", "d2"})
	name := ""
	for i := 0; name == "" && i < 20; i++ {
		n := fmt.Sprintf("daemon-%d", i)
		createExampleWith(t, c, ns, n, map[string]string{"mode": "daemon"}, map[string]any{"field": "x"})
		if both.Owner(string(get(t, c, ns, n).GetUID())) == "d2" {
			name = n
		}
	}
	if name == "" {
		t.Fatal("none of 20 objects belongs to d2 in {d1, d2}")
	}
	e2etest.Eventually(t, 120*time.Second, "the daemon beats on d1", atLeast(t, c, ns, name, 3, "monitor", "beats"))

	startReplica(t, c, ns, set, "d2", log)
	e2etest.Eventually(t, 120*time.Second, "d1's daemon stopped with the reason pausing", func() error {
		obj := get(t, c, ns, name)
		reason, _, _ := unstructured.NestedString(obj.Object, "status", "monitor", "stopped")
		if reason != "pausing" {
			return fmt.Errorf("status.monitor.stopped is %q", reason)
		}
		return nil
	})
	if reps := log.count("monitor")[name]; len(reps) != 1 || reps[0] != "d1" {
		t.Fatalf("the daemon ended on %v, want once on d1", reps)
	}
	// It beats on d2 now: the beats start again from 1 and grow.
	e2etest.Eventually(t, 120*time.Second, "the daemon beats on d2", func() error {
		before := count(t, c, ns, name, "monitor", "beats")
		time.Sleep(time.Second)
		after := count(t, c, ns, name, "monitor", "beats")
		if after <= before {
			return fmt.Errorf("beats %d then %d", before, after)
		}
		return nil
	})
}
