// Package kopftest runs a module's registered handlers natively, under
// plain go test, with a fake host: no wasm, no cluster.
//
// It drives the same entry points as the wasm exports, with the same JSON
// bytes: [Host.Call] sends an abi.Request to the module's handle entry
// point and decodes the abi.Response. The fake host answers the module's
// host calls: it records logs, Events and Kubernetes requests, refuses
// Kubernetes requests that the manifest does not permit (with the 403 the
// real host gives), and serves the permitted ones from an in-memory object
// store or a function the test provides.
//
//	func TestCreate(t *testing.T) {
//		h := kopftest.New(t)
//		res := h.Run("create_fn", obj, nil)
//		if res.Err != nil { t.Fatal(res.Err) }
//	}
//
// A test package registers handlers as the module does: by importing the
// module's package, or from its own init.
package kopftest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/guest-sdk/internal/hostcall"
)

// Host is a fake kopf-wasm host for one test. Its methods are safe for
// concurrent use.
type Host struct {
	t        testing.TB
	manifest abi.Manifest
	raw      []byte

	// Kube, when set, answers the permitted Kubernetes requests instead of
	// the object store.
	Kube func(abi.KubeRequest) abi.KubeResponse
	// StopAfter is how many sleeps a daemon or timer gets before it is
	// asked to stop: sleep number StopAfter+1 reports stopped. The default
	// 0 stops at the first sleep.
	StopAfter int
	// StopReason is the reason given when stopping ("exiting" by default).
	StopReason string
	// LargeIndexes carries every index in requests as null, as the host
	// carries indexes larger than its execution.indexInline setting: the
	// module then reads them through index look-ups (ctx.Index asks for
	// the whole index).
	LargeIndexes bool
	// Force makes [Host.Run] call a handler that the host would not call
	// for the object (see [Host.WhyNot]); by default that fails the test.
	Force bool

	mu      sync.Mutex
	calls   []HostCall
	store   store
	indices map[string]map[string][]any
	// contributed: index -> object -> key (JSON) -> value, from IndexObjects.
	contributed map[string]map[string]map[string]any
	memos       map[string]json.RawMessage
	sleeps      []float64
}

// HostCall is one call of a host function: its name and the exact bytes.
type HostCall struct {
	Func    string
	Request []byte
	Reply   []byte
}

// New loads the manifest of the handlers registered in this test binary;
// a registration mistake fails the test.
func New(t testing.TB) *Host {
	t.Helper()
	raw, err := hostcall.Served().Manifest()
	if err != nil {
		t.Fatalf("kopftest: the module's manifest: %v", err)
	}
	h := &Host{t: t, raw: raw, StopReason: "exiting", memos: map[string]json.RawMessage{}}
	if err := json.Unmarshal(raw, &h.manifest); err != nil {
		t.Fatalf("kopftest: decode the manifest: %v", err)
	}
	return h
}

// Manifest is the module's manifest.
func (h *Host) Manifest() abi.Manifest { return h.manifest }

// ManifestJSON is the manifest exactly as the module's export returns it.
func (h *Host) ManifestJSON() []byte { return h.raw }

// Spec returns the handler with an id, failing the test if there is none.
// Of one function registered under several kinds (one id), it is the first
// registration; [Host.Run] and [Host.Request] use it, so to call another,
// set the request's Kind and Reason and send it with [Host.Call].
func (h *Host) Spec(id string) abi.HandlerSpec {
	h.t.Helper()
	for _, s := range h.manifest.Handlers {
		if s.ID == id {
			return s
		}
	}
	h.t.Fatalf("kopftest: module %q has no handler %q", h.manifest.Module.Name, id)
	return abi.HandlerSpec{}
}

// Call sends a request to the module's handle entry point, as the host
// does. An error is a failure of the module (the export's non-zero code).
// The object's memo is kept for its next calls, as the host does.
func (h *Host) Call(req *abi.Request) (*Result, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("kopftest: encode the request: %w", err)
	}
	out, err := hostcall.Served().Handle(in, hostFuncs{h})
	if err != nil {
		return nil, err
	}
	res, err := newResult(out)
	if err != nil {
		return nil, err
	}
	if res.Response.Memo != nil && req.Call != abi.CallWhen {
		h.mu.Lock()
		h.memos[memoKey(req.Namespace, req.Name)] = res.Response.Memo
		h.mu.Unlock()
	}
	return res, nil
}

// Run builds the request of handler id for obj (old is the previous state
// for updates, field handlers and webhooks, else nil), calls it, and fails
// the test if the module fails. It first applies the handler's filters as
// the host does and fails the test, saying why, when the host would not
// call the handler for obj, unless [Host.Force] is set.
func (h *Host) Run(id string, obj, old map[string]any) *Result {
	h.t.Helper()
	if !h.Force {
		if why := h.WhyNot(id, obj, old); why != "" {
			h.t.Fatalf("kopftest: the host would not call handler %q for this object: %s (set Force to call it anyway; WhyNot tells without calling)", id, why)
		}
	}
	res, err := h.Call(h.Request(id, obj, old))
	if err != nil {
		h.t.Fatalf("kopftest: handler %q: %v", id, err)
	}
	return res
}

// Match asks the handler's When filter about obj, as the host does before
// calling it.
func (h *Host) Match(id string, obj, old map[string]any) bool {
	h.t.Helper()
	req := h.Request(id, obj, old)
	req.Call = abi.CallWhen
	res, err := h.Call(req)
	if err != nil {
		h.t.Fatalf("kopftest: when filter of %q: %v", id, err)
	}
	if res.Err != nil || res.Response.Matched == nil {
		h.t.Fatalf("kopftest: when filter of %q: no answer: %v", id, res.Err)
	}
	return *res.Response.Matched
}
