package execution_test

import (
	"context"
	"sync"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

// fakeModule answers every call with respond and counts the calls by kind
// of call and handler.
type fakeModule struct {
	respond func(req *abi.Request) (*abi.Response, error)

	mu    sync.Mutex
	calls map[string]int // "<call>:<handler>", call "" for handler calls
	reqs  []*abi.Request
}

func newFakeModule(respond func(req *abi.Request) (*abi.Response, error)) *fakeModule {
	return &fakeModule{respond: respond, calls: map[string]int{}}
}

func (m *fakeModule) Handle(_ context.Context, req *abi.Request, _ wasmrt.Host) (*abi.Response, error) {
	m.mu.Lock()
	m.calls[string(req.Call)+":"+req.Handler]++
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	return m.respond(req)
}

func (m *fakeModule) HandleDedicated(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error) {
	return m.Handle(ctx, req, host)
}

func (m *fakeModule) count(call abi.Call, handler string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[string(call)+":"+handler]
}

func (m *fakeModule) total() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.calls {
		n += c
	}
	return n
}

// fakeCluster records patches and Events; patch answers each patch.
type fakeCluster struct {
	patch func(sub string) (*kube.Patched, error)

	mu      sync.Mutex
	patches []string // "<subresource> <data>"
	events  []abi.EventRequest
}

func (c *fakeCluster) Patch(_ context.Context, _ abi.ResourceRef, _, _, sub string, _ abi.PatchType, data []byte) (*kube.Patched, error) {
	c.mu.Lock()
	c.patches = append(c.patches, sub+" "+string(data))
	c.mu.Unlock()
	if c.patch != nil {
		return c.patch(sub)
	}
	return &kube.Patched{ResourceVersion: "2"}, nil
}

func (c *fakeCluster) PostEvent(_ context.Context, _ kube.ObjectRef, ev abi.EventRequest) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.events = append(c.events, ev)
	return nil
}

func (c *fakeCluster) Do(context.Context, abi.KubeRequest) abi.KubeResponse {
	return abi.KubeResponse{Error: &abi.HostError{Code: 501, Message: "not available"}}
}

func success(result string) func(req *abi.Request) (*abi.Response, error) {
	return func(req *abi.Request) (*abi.Response, error) {
		if req.Call == abi.CallWhen {
			yes := true
			return &abi.Response{Matched: &yes}, nil
		}
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: []byte(result)}, nil
	}
}
