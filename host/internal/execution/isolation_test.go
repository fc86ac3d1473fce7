package execution_test

import (
	"context"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// hostCaller is a module whose handler makes two Kubernetes requests and
// posts an Event through its host, and keeps what they answered.
type hostCaller struct{ answers []*abi.HostError }

func (m *hostCaller) Handle(ctx context.Context, _ *abi.Request, host wasmrt.Host) (*abi.Response, error) {
	for range 2 {
		m.answers = append(m.answers, host.Kube(ctx, abi.KubeRequest{Verb: abi.VerbGet}).Error)
	}
	if err := host.PostEvent(ctx, abi.EventRequest{Type: "Normal", Reason: "R", Message: "m"}); err != nil {
		m.answers = append(m.answers, err.(*abi.HostError))
	} else {
		m.answers = append(m.answers, nil)
	}
	return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}}, nil
}

func (m *hostCaller) HandleDedicated(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error) {
	return m.Handle(ctx, req, host)
}

// TestModuleRateLimit: a module's Kubernetes requests and Events wait for
// its own token bucket (one request per 1,000 s here, so a second one
// cannot fit in the call's minute and is refused at once with a 429), are
// counted against it, and another module's bucket is its own.
func TestModuleRateLimit(t *testing.T) {
	mods := map[string]*hostCaller{"slow": {}, "free": {}}
	exec := execution.New(execution.Options{
		Modules:  func(name string) execution.Module { return mods[name] },
		Cluster:  &fakeCluster{},
		Settings: settings.Default(),
		Limits: func(name string) settings.ModuleLimits {
			if name == "slow" {
				return settings.ModuleLimits{QPS: 0.001, Burst: 1}
			}
			return settings.ModuleLimits{}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name := range mods {
		h, _ := registry.NewHandler(name, abi.HandlerSpec{ID: "create_fn", Kind: abi.KindCreate}, ref)
		if _, err := exec.Call(ctx, h, execution.Input{Subject: execution.NewSubject(ref, true, object())}, execution.CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	slow := mods["slow"].answers
	if len(slow) != 3 || slow[0] == nil || slow[0].Code != 501 || slow[1] == nil || slow[1].Code != 429 || slow[2] == nil || slow[2].Code != 429 {
		t.Errorf("the limited module's answers %+v: want the first request through (the fake's 501), the others refused with 429", slow)
	}
	if hits := exec.Hits("slow"); hits.Throttled != 2 {
		t.Errorf("Hits(slow) = %+v, want 2 throttled", hits)
	}
	free := mods["free"].answers
	if len(free) != 3 || free[0].Code != 501 || free[1].Code != 501 || free[2] != nil {
		t.Errorf("the other module's answers %+v: want every request through", free)
	}
	if hits := exec.Hits("free"); hits.Throttled != 0 {
		t.Errorf("Hits(free) = %+v, want none", hits)
	}
}
