package reactor_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/internal/e2etest"
)

// TestStalledWrite runs the operator through a TCP proxy that silently
// stops forwarding the connection its requests other than watches share
// (HTTP/2), while the watches (HTTP/1.1, connections of their own) go on,
// and while other requests keep that connection busy: the handlers'
// PATCHes of the changes made then wait on the silent connection until
// settings.Kube.RequestTimeout; the first attempt to run out of it closes
// the client's connections, busy or not, and the retries land on a new one.
// Every change is handled within about twice the request timeout, each
// handler once.
func TestStalledWrite(t *testing.T) {
	c := startCluster(t)
	const ns = "stallwrite"
	createNamespace(t, c, ns)
	set := testSettings()
	const timeout = 3 * time.Second
	set.Kube.RequestTimeout = timeout
	logs := &logRecorder{}
	proxy, kc := newProxiedKube(t, c, &set, slog.New(logs))
	run(t, kc, newLoggedOperator(t, kc, ns, set, slog.New(logs), load(t, newRuntime(t), "reactor", "testguests/reactor")))

	const n = 5
	for i := range n {
		createExample(t, c, ns, fmt.Sprintf("obj-%d", i), map[string]any{"field": "a"})
	}
	for i := range n {
		e2etest.Eventually(t, 60*time.Second, "created", hasMessage(t, c, ns, fmt.Sprintf("obj-%d", i), "create_fn", "created"))
	}
	// Let the writes settle, so that the freeze finds the connection idle
	// and the next requests are the first to hang on it.
	time.Sleep(500 * time.Millisecond)
	accepted := proxy.Accepted.Load()
	frozen := proxy.FreezeMultiplexed()
	if frozen == 0 {
		t.Fatal("no HTTP/2 connection to freeze")
	}
	start := time.Now()
	// The operator's other requests (guests' reads, Events, lease renewals)
	// keep the shared connection busy: a request every second, each waiting
	// up to the request timeout. The silent connection is then never idle
	// when a PATCH's attempt times out, as in the CI run whose changes were
	// handled after 54 s: closing only the idle connections freed nothing,
	// and every retry waited on the silent connection until HTTP/2's health
	// check gave up on it (30 s + 15 s). (Much more traffic frees it sooner:
	// the streams reset on it count against the server's limit of concurrent
	// streams until it answers, and once full, the client dials a new one.)
	stopTraffic := keepBusy(kc, time.Second)
	defer stopTraffic()
	for i := range n {
		patchSpec(t, c, ns, fmt.Sprintf("obj-%d", i), `{"spec":{"field":"b"}}`)
	}
	createExample(t, c, ns, "during", map[string]any{"field": "a"})
	for i := range n {
		e2etest.Eventually(t, 90*time.Second, "changed during the stall", hasField(t, c, ns, fmt.Sprintf("obj-%d", i), "a", "b"))
	}
	e2etest.Eventually(t, 90*time.Second, "created during the stall", hasMessage(t, c, ns, "during", "create_fn", "created"))
	handled := time.Since(start)
	stopTraffic()
	drops := len(logs.about("", "closing the connections to the API server"))
	t.Logf("froze %d connection(s); every change made then handled after %s (request timeout %s); "+
		"connections closed %d time(s); %d new connections",
		frozen, handled.Round(time.Millisecond), timeout, drops, proxy.Accepted.Load()-accepted)
	// A PATCH waits for its timeout, its retry (after 1 s) goes out on a new
	// connection: about 2*timeout in all, and 15 s of slack for a loaded
	// machine (far below the health check's 45 s).
	if limit := 2*timeout + 15*time.Second; handled > limit {
		t.Errorf("the changes made during the stall were handled after %s, want within %s", handled, limit)
	}
	if drops == 0 {
		t.Error("no request ran out of its timeout and closed the connections")
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

// keepBusy sends a request through kc every period (a ping, bounded by
// the request timeout), each from a goroutine of its own, until the
// returned function is called; that function waits for them and may be
// called more than once.
func keepBusy(kc *kube.Client, period time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				wg.Add(1)
				go func() {
					defer wg.Done()
					_ = kc.Ping(ctx)
				}()
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}
