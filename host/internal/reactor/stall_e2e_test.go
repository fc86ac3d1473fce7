package reactor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-wasm/kopf-wasm/host/internal/metrics"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestStalledWatch runs the operator through a TCP proxy that silently
// stops forwarding every connection it has (the watch's among them) while
// objects change: the host notices the silent watch within the inactivity
// timeout, says so (kube.Client.Stalled, kopf_wasm_watch_stalled), watches
// again on a new connection, and handles every change made meanwhile.
func TestStalledWatch(t *testing.T) {
	c := startCluster(t)
	const ns = "stall"
	createNamespace(t, c, ns)
	set := testSettings()
	const inactivity = 4 * time.Second
	set.Watching.InactivityTimeout = inactivity
	proxy, kc := newProxiedKube(t, c, &set, nil)
	op := run(t, kc, newOperator(t, kc, ns, set, load(t, newRuntime(t), "kopfexample", "kopfexample")))

	const n = 5
	for i := range n {
		createExample(t, c, ns, fmt.Sprintf("before-%d", i), map[string]any{"field": "value"})
	}
	for i := range n {
		e2etest.Eventually(t, 60*time.Second, "created", hasMessage(t, c, ns, fmt.Sprintf("before-%d", i), "create_fn", "hello world"))
	}
	// Let the writes settle, so that nothing is in flight when the
	// connections go silent.
	time.Sleep(500 * time.Millisecond)
	stalls, _ := metrics.Sample("kopf_wasm_watch_stalls_total", "resource", "kopfexamples.v1.kopf.dev", "namespace", ns)

	frozen := proxy.Freeze()
	start := time.Now()
	t.Logf("froze %d connections", frozen)
	for i := range n {
		patch := []byte(`{"spec":{"field":"changed during the stall"}}`)
		if _, err := c.dyn.Resource(kopfexamples).Namespace(ns).Patch(context.Background(), fmt.Sprintf("before-%d", i),
			types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		createExample(t, c, ns, fmt.Sprintf("during-%d", i), map[string]any{"field": "value"})
	}

	var detected time.Duration
	e2etest.Eventually(t, inactivity+30*time.Second, "the stall noticed", func() error {
		if v, _ := metrics.Sample("kopf_wasm_watch_stalls_total", "resource", "kopfexamples.v1.kopf.dev", "namespace", ns); v <= stalls {
			return fmt.Errorf("kopf_wasm_watch_stalls_total is %v, as before the stall", v)
		}
		detected = time.Since(start)
		return nil
	})
	t.Logf("stall noticed after %s (inactivity timeout %s)", detected.Round(time.Millisecond), inactivity)
	// Slack for a loaded machine: the timer fires at the timeout, the
	// metric is read every 50ms.
	if detected > inactivity+5*time.Second {
		t.Errorf("the stall was noticed after %s, want within the inactivity timeout %s (+5s of slack)", detected, inactivity)
	}
	for i := range n {
		e2etest.Eventually(t, 60*time.Second, "updated during the stall", hasMessage(t, c, ns, fmt.Sprintf("before-%d", i), "update_fn", "updated"))
		e2etest.Eventually(t, 60*time.Second, "created during the stall", hasMessage(t, c, ns, fmt.Sprintf("during-%d", i), "create_fn", "hello world"))
	}
	handled := time.Since(start)
	t.Logf("every change made during the stall handled after %s", handled.Round(time.Millisecond))
	// Over HTTP/2 the resumed watch and the writes would wait for the
	// silent connection's health check (30 s + 15 s) instead.
	if limit := inactivity + 15*time.Second; handled > limit {
		t.Errorf("the changes made during the stall were handled after %s, want within %s", handled, limit)
	}
	e2etest.Eventually(t, 30*time.Second, "the watch re-established", func() error {
		if s := kc.Stalled(); len(s) > 0 {
			return fmt.Errorf("still stalled: %v", s)
		}
		if v, _ := metrics.Sample("kopf_wasm_watch_stalled", "resource", "kopfexamples.v1.kopf.dev", "namespace", ns); v != 0 {
			return fmt.Errorf("kopf_wasm_watch_stalled is %v", v)
		}
		return op.Ready()
	})
	if proxy.Accepted.Load() <= int64(frozen) {
		t.Errorf("the host made no new connection after the stall (%d accepted, %d frozen)", proxy.Accepted.Load(), frozen)
	}
}
