package reactor_test

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestStalledWrite runs the operator through a TCP proxy that silently
// stops forwarding the connection its requests other than watches share
// (HTTP/2), while the watches (HTTP/1.1, connections of their own) go on:
// the handlers' PATCHes of the changes made then wait on the silent
// connection until settings.Kube.RequestTimeout, are retried on a new
// connection (or, if the silent one still carries another request, they can
// wait on it until HTTP/2's health check closes it), and land; every change is
// handled, each handler once.
func TestStalledWrite(t *testing.T) {
	c := startCluster(t)
	const ns = "stallwrite"
	createNamespace(t, c, ns)
	set := testSettings()
	const timeout = 3 * time.Second
	set.Kube.RequestTimeout = timeout
	proxy, kc := newProxiedKube(t, c, &set)
	logs := &logRecorder{}
	run(t, kc, newLoggedOperator(t, kc, ns, set, slog.New(logs), load(t, newRuntime(t), "reactor", "testguests/reactor")))

	const n = 5
	for i := range n {
		createExample(t, c, ns, fmt.Sprintf("obj-%d", i), map[string]any{"field": "a"})
	}
	for i := range n {
		e2etest.Eventually(t, 60*time.Second, "created", hasMessage(t, c, ns, fmt.Sprintf("obj-%d", i), "create_fn", "created"))
	}
	// Let the writes settle, so that the freeze finds the connection idle
	// and the next PATCH is the first request to hang on it.
	time.Sleep(500 * time.Millisecond)
	accepted := proxy.Accepted.Load()
	frozen := proxy.FreezeMultiplexed()
	if frozen == 0 {
		t.Fatal("no HTTP/2 connection to freeze")
	}
	start := time.Now()
	for i := range n {
		patchSpec(t, c, ns, fmt.Sprintf("obj-%d", i), `{"spec":{"field":"b"}}`)
	}
	createExample(t, c, ns, "during", map[string]any{"field": "a"})
	for i := range n {
		e2etest.Eventually(t, 90*time.Second, "changed during the stall", hasField(t, c, ns, fmt.Sprintf("obj-%d", i), "a", "b"))
	}
	e2etest.Eventually(t, 90*time.Second, "created during the stall", hasMessage(t, c, ns, "during", "create_fn", "created"))
	handled := time.Since(start)
	t.Logf("froze %d connection(s); every change made then handled after %s (request timeout %s); %d new connections",
		frozen, handled.Round(time.Millisecond), timeout, proxy.Accepted.Load()-accepted)
	// A PATCH waits for its timeout; the retrier then closes the idle
	// connections, and its retry (after 1 s) goes out on a new one: about
	// 2*timeout in all. That holds only when the silent connection is idle
	// by then: if another request still waits on it (several PATCHes hang
	// at once, and their cancelled streams are not always gone when the
	// first one's retry starts), the retry can wait on it too, until HTTP/2's
	// health check gives up on it (30 s + 15 s). One run in CI took 54 s
	// that way. The bound is that of the health check: the host recovers
	// and loses nothing either way; the fast path is logged above.
	if limit := 2*timeout + 45*time.Second + 15*time.Second; handled > limit {
		t.Errorf("the changes made during the stall were handled after %s, want within %s", handled, limit)
	}
	for i := range n {
		name := fmt.Sprintf("obj-%d", i)
		if got := len(logs.about(name, "Handler 'field_fn/spec.field' succeeded")); got != 2 {
			t.Errorf("%s: field_fn succeeded %d times, want twice (creation and one change)", name, got)
		}
		if got := len(logs.about(name, "Handler 'create_fn' succeeded")); got != 1 {
			t.Errorf("%s: create_fn succeeded %d times, want once", name, got)
		}
	}
}
