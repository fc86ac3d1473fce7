package execution_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/rollout"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// writingModule posts an Event and creates a ConfigMap through its host,
// then answers its version as the result; block, when set, holds the call
// until it is closed.
type writingModule struct {
	version string
	block   chan struct{}
	mu      sync.Mutex
	answers []abi.KubeResponse
}

func (m *writingModule) Handle(ctx context.Context, _ *abi.Request, host wasmrt.Host) (*abi.Response, error) {
	if m.block != nil {
		<-m.block
	}
	_ = host.PostEvent(ctx, abi.EventRequest{Type: "Normal", Reason: "Handled", Message: m.version})
	resp := host.Kube(ctx, abi.KubeRequest{Verb: abi.VerbCreate, Version: "v1", Resource: "configmaps", Namespace: "ns",
		Body: json.RawMessage(`{"metadata":{"name":"cm-` + m.version + `"}}`)})
	m.mu.Lock()
	m.answers = append(m.answers, resp)
	m.mu.Unlock()
	return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: json.RawMessage(`{"version":"` + m.version + `"}`)}, nil
}

func (m *writingModule) HandleDedicated(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error) {
	return m.Handle(ctx, req, host)
}

// dryRunCluster records the writes it gets, plain or as dry runs.
type dryRunCluster struct {
	fakeCluster
	mu          sync.Mutex
	writes, dry []string
}

func (c *dryRunCluster) Do(_ context.Context, req abi.KubeRequest) abi.KubeResponse {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, string(req.Body))
	return abi.KubeResponse{Body: req.Body}
}

func (c *dryRunCluster) DoDryRun(_ context.Context, req abi.KubeRequest) abi.KubeResponse {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dry = append(c.dry, string(req.Body))
	return abi.KubeResponse{Body: req.Body}
}

// TestShadow calls a handler whose module has a shadow version: the
// serving call's Event and write go to the cluster; the shadow's Event is
// not posted and its write is a dry run; the different result is counted
// and described. With the shadow calls at their bound, a call is not
// shadowed and counted as skipped, and the serving call does not wait.
func TestShadow(t *testing.T) {
	cluster := &dryRunCluster{}
	stable := &writingModule{version: "v1"}
	shadow := &writingModule{version: "v2", block: make(chan struct{})}
	counters := &rollout.ShadowCounters{}
	set := settings.Default()
	set.Rollouts.ShadowConcurrency = 1
	exec := execution.New(execution.Options{
		Modules:  func(string) execution.Module { return stable },
		Shadow:   func(string) (execution.Module, *rollout.ShadowCounters) { return shadow, counters },
		Cluster:  cluster,
		Settings: set,
	})
	h, err := registry.NewHandler("m", abi.HandlerSpec{ID: "create_fn", Kind: abi.KindCreate}, ref)
	if err != nil {
		t.Fatal(err)
	}
	call := func() {
		t.Helper()
		r, err := exec.Call(context.Background(), h, execution.Input{Subject: execution.NewSubject(ref, true, object())}, execution.CallOptions{})
		if err != nil || string(r.Response.Result) != `{"version":"v1"}` {
			t.Fatalf("Call = %+v, %v; want the stable version's answer", r, err)
		}
	}
	call() // shadowed; the shadow call blocks
	call() // the bound is reached: not shadowed, and not held back
	if got := counters.Skipped(); got != 1 {
		t.Errorf("skipped = %d, want 1", got)
	}
	close(shadow.block)
	exec.WaitShadows()

	if counters.Calls() != 1 || counters.Differences() != 1 {
		t.Errorf("shadow calls %d, differences %d; want 1 and 1", counters.Calls(), counters.Differences())
	}
	if last := counters.Last(); !strings.Contains(last, `result: {"version":"v1"} -> {"version":"v2"}`) {
		t.Errorf("last difference %q does not describe the result", last)
	}
	cluster.mu.Lock()
	defer cluster.mu.Unlock()
	if len(cluster.writes) != 2 || strings.Contains(strings.Join(cluster.writes, " "), "cm-v2") {
		t.Errorf("stored writes %q; want the stable version's two", cluster.writes)
	}
	if len(cluster.dry) != 1 || !strings.Contains(cluster.dry[0], "cm-v2") {
		t.Errorf("dry-run writes %q; want the shadow's one", cluster.dry)
	}
	for _, ev := range cluster.events {
		if ev.Message == "v2" {
			t.Errorf("the shadow's Event was posted: %+v", ev)
		}
	}
	if len(shadow.answers) != 1 || shadow.answers[0].Error != nil {
		t.Errorf("the shadow's write was answered %+v; want the dry run's answer", shadow.answers)
	}
}

// BenchmarkShadowCost is what a shadow adds to the serving call: the
// serving call of a handler with no shadow, with a shadow started beside
// it (answering alike; on a loaded machine its goroutine competes for the
// same cores, so this is the host's whole work per call), and with the
// shadow calls at their bound (skipped). The modules answer at once, so
// the figures are the host's own work.
func BenchmarkShadowCost(b *testing.B) {
	h, err := registry.NewHandler("m", abi.HandlerSpec{ID: "create_fn", Kind: abi.KindCreate}, ref)
	if err != nil {
		b.Fatal(err)
	}
	stable, shadow := newFakeModule(success(`{"v":1}`)), newFakeModule(success(`{"v":1}`))
	for _, tc := range []struct {
		name  string
		bound int
		with  bool
	}{{"none", 4, false}, {"shadowed", 1 << 20, true}, {"skipped", 1, true}} {
		b.Run(tc.name, func(b *testing.B) {
			set := settings.Default()
			set.Rollouts.ShadowConcurrency = tc.bound
			opts := execution.Options{Modules: func(string) execution.Module { return stable }, Settings: set, Cluster: &fakeCluster{},
				Logger: slog.New(slog.DiscardHandler)}
			counters := &rollout.ShadowCounters{}
			block := make(chan struct{})
			if tc.with {
				mod := execution.Module(shadow)
				if tc.bound == 1 {
					mod = &writingModule{version: "v2", block: block} // holds the one slot
				}
				opts.Shadow = func(string) (execution.Module, *rollout.ShadowCounters) { return mod, counters }
			}
			exec := execution.New(opts)
			subj := execution.NewSubject(ref, true, object())
			b.ReportAllocs()
			for b.Loop() {
				if _, err := exec.Call(context.Background(), h, execution.Input{Subject: subj}, execution.CallOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			close(block)
			exec.WaitShadows()
		})
	}
}
