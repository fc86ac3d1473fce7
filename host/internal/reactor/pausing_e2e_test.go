package reactor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-wasm/kopf-wasm/host/internal/gate"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/reactor"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestPausing closes the host-wide gate under a running operator: timers
// stop ticking, daemons stop with the reason "pausing", changes wait; when
// the gate opens, the waiting change is handled and timers and daemons run
// again.
func TestPausing(t *testing.T) {
	c := startCluster(t)
	createNamespace(t, c, "p")
	kc := newKube(t, c)
	rt := newRuntime(t)
	mods := []*wasmrt.Module{load(t, rt, "spawning", "testguests/spawning"), load(t, rt, "reactor", "testguests/reactor")}
	namespaces, err := kube.ParseNamespaces("p")
	if err != nil {
		t.Fatal(err)
	}
	g := gate.New()
	op, err := reactor.New(context.Background(), reactor.Options{Kube: kc, Modules: mods, Namespaces: namespaces,
		Settings: testSettings(), Gate: g})
	if err != nil {
		t.Fatal(err)
	}
	run(t, kc, op)

	createExampleWith(t, c, "p", "timer", map[string]string{"mode": "timer"}, map[string]any{})
	createExampleWith(t, c, "p", "daemon", map[string]string{"mode": "daemon"}, map[string]any{})
	e2etest.Eventually(t, 20*time.Second, "ticks", atLeast(t, c, "p", "timer", 2, "tick", "count"))
	e2etest.Eventually(t, 20*time.Second, "beats", atLeast(t, c, "p", "daemon", 2, "monitor", "beats"))

	g.Block("test", "paused by the test")
	e2etest.Eventually(t, 20*time.Second, "the daemon stopped for pausing", func() error {
		why, _, _ := unstructured.NestedString(get(t, c, "p", "daemon").Object, "status", "monitor", "stopped")
		if why != "pausing" {
			return fmt.Errorf("status.monitor.stopped is %q", why)
		}
		return nil
	})
	time.Sleep(time.Second) // a tick in flight when the gate closed may land
	ticks, beats := count(t, c, "p", "timer", "tick", "count"), count(t, c, "p", "daemon", "monitor", "beats")
	createExample(t, c, "p", "waiting", map[string]any{})
	time.Sleep(2 * time.Second)
	if n := count(t, c, "p", "timer", "tick", "count"); n != ticks {
		t.Errorf("the timer ticked while paused: %d, then %d", ticks, n)
	}
	if n := count(t, c, "p", "daemon", "monitor", "beats"); n != beats {
		t.Errorf("the daemon beat while paused: %d, then %d", beats, n)
	}
	if obj := get(t, c, "p", "waiting"); handledBy(obj, "create_fn") {
		t.Errorf("the object created while paused was handled: %v", obj.Object["status"])
	}

	g.Unblock("test")
	e2etest.Eventually(t, 20*time.Second, "ticks again", atLeast(t, c, "p", "timer", ticks+2, "tick", "count"))
	e2etest.Eventually(t, 20*time.Second, "beats again", atLeast(t, c, "p", "daemon", beats+2, "monitor", "beats"))
	e2etest.Eventually(t, 20*time.Second, "the waiting object handled", func() error {
		if !handledBy(get(t, c, "p", "waiting"), "create_fn") {
			return fmt.Errorf("not handled yet")
		}
		return nil
	})
}

// handledBy reports whether the handler's result is in the status.
func handledBy(obj *unstructured.Unstructured, id string) bool {
	_, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", id)
	return ok
}
