package admission_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/admission"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

var ref = abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}

var sel = &abi.ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}

// fakeModule answers each handler with its function; it records requests.
type fakeModule struct {
	respond map[string]func(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error)
	// when answers the handlers' callback filters (default: yes).
	when func(req *abi.Request) bool

	mu   sync.Mutex
	reqs []*abi.Request
}

func (m *fakeModule) Handle(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error) {
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	if req.Call == abi.CallWhen {
		yes := m.when == nil || m.when(req)
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Matched: &yes}, nil
	}
	if f := m.respond[req.Handler]; f != nil {
		return f(ctx, req, host)
	}
	return allow(), nil
}

func (m *fakeModule) HandleDedicated(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error) {
	return m.Handle(ctx, req, host)
}

func (m *fakeModule) requests(handler string) []*abi.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*abi.Request
	for _, r := range m.reqs {
		if r.Handler == handler && r.Call != abi.CallWhen {
			out = append(out, r)
		}
	}
	return out
}

func allow(warnings ...string) *abi.Response {
	return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess},
		Admission: &abi.AdmissionResponse{Allowed: true, Warnings: warnings}}
}

// fixture is a server over one fake module named "m".
type fixture struct {
	mod  *fakeModule
	srv  *admission.Server
	reg  *registry.Registry
	exec *execution.Executor
}

func newFixture(t *testing.T, specs []abi.HandlerSpec, s settings.Admission) *fixture {
	t.Helper()
	reg, err := registry.New([]abi.Manifest{{ABIVersion: abi.Version, Module: abi.ModuleInfo{Name: "m"}, Handlers: specs}},
		func(abi.ResourceSelector) (abi.ResourceRef, error) { return ref, nil })
	if err != nil {
		t.Fatal(err)
	}
	mod := &fakeModule{respond: map[string]func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error){}}
	exec := execution.New(execution.Options{
		Modules: func(name string) execution.Module {
			if name == "m" {
				return mod
			}
			return nil
		},
		Settings: settings.Default(),
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	srv := admission.NewServer(admission.Options{
		Exec: exec, Registry: func() *registry.Registry { return reg }, Settings: s,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return &fixture{mod: mod, srv: srv, reg: reg, exec: exec}
}

func defaults() settings.Admission { return settings.Default().Admission }

// kex is a KopfExample body.
func kex(labels map[string]any, spec map[string]any) map[string]any {
	return map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "ex", "namespace": "ns", "labels": labels}, "spec": spec}
}

// reviewOf builds an AdmissionReview.
func reviewOf(op admissionv1.Operation, sub string, obj, old map[string]any, dryRun bool) []byte {
	req := map[string]any{
		"uid": "rev-1", "kind": map[string]any{"group": "kopf.dev", "version": "v1", "kind": "KopfExample"},
		"resource":  map[string]any{"group": "kopf.dev", "version": "v1", "resource": "kopfexamples"},
		"operation": op, "name": "ex", "namespace": "ns", "dryRun": dryRun,
		"userInfo": map[string]any{"username": "alice", "groups": []string{"devs"}},
	}
	if sub != "" {
		req["subResource"] = sub
	}
	if obj != nil {
		req["object"] = obj
	}
	if old != nil {
		req["oldObject"] = old
	}
	data, _ := json.Marshal(map[string]any{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req})
	return data
}

// post sends body to path and returns the HTTP code and the decoded
// response (nil when the answer is not an AdmissionReview).
func (f *fixture) post(t *testing.T, path string, body []byte) (int, *admissionv1.AdmissionResponse, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		return w.Code, nil, w.Body.String()
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		t.Fatalf("the answer is not an AdmissionReview: %v: %s", err, w.Body.String())
	}
	if out.Kind != "AdmissionReview" || out.APIVersion != "admission.k8s.io/v1" || out.Response == nil {
		t.Fatalf("answer = %s", w.Body.String())
	}
	if out.Response.UID != "rev-1" {
		t.Errorf("response uid = %q, want the request's", out.Response.UID)
	}
	return w.Code, out.Response, w.Body.String()
}

// applyJSONPatch applies an RFC 6902 patch to obj, as the API server does.
func applyJSONPatch(t *testing.T, obj map[string]any, patch []byte) map[string]any {
	t.Helper()
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		t.Fatalf("the patch is not a JSON patch: %v: %s", err, patch)
	}
	doc, _ := json.Marshal(obj)
	out, err := p.Apply(doc)
	if err != nil {
		t.Fatalf("the patch does not apply: %v: %s", err, patch)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
