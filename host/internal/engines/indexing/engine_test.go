package indexing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/indexing"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

var ref = abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Namespaced: true}

// fakeModule answers index calls with answer(request), and callback
// filters with a match.
type fakeModule struct {
	mu     sync.Mutex
	answer func(req *abi.Request) *abi.Response
	calls  int
	last   *abi.Request
}

func (m *fakeModule) Handle(_ context.Context, req *abi.Request, _ wasmrt.Host) (*abi.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if req.Call == abi.CallWhen {
		yes := true
		return &abi.Response{Matched: &yes}, nil
	}
	m.calls++
	m.last = req
	return m.answer(req), nil
}

func (m *fakeModule) HandleDedicated(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error) {
	return m.Handle(ctx, req, host)
}

func ok(result string) *abi.Response {
	return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: json.RawMessage(result)}
}

func obj(name, owner string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name, "namespace": "ns", "labels": map[string]any{"indexed": "yes"}},
		"spec":     map[string]any{"owner": owner},
	}}
}

type fixture struct {
	engine *indexing.Engine
	mod    *fakeModule
	clock  *clocktesting.FakeClock
	reg    *registry.Registry
	ready  []string
}

// newFixture serves one module "m" with one index handler "by_owner" on
// objects labelled indexed=yes (opts sets its error options).
func newFixture(t testing.TB, inline int, opts abi.Options) *fixture {
	t.Helper()
	f := &fixture{mod: &fakeModule{}, clock: clocktesting.NewFakeClock(time.Now())}
	f.mod.answer = func(req *abi.Request) *abi.Response {
		var body map[string]any
		_ = json.Unmarshal(req.Body, &body)
		owner := body["spec"].(map[string]any)["owner"]
		return ok(fmt.Sprintf(`{%q:%q}`, owner, req.Name))
	}
	exec := execution.New(execution.Options{
		Modules:  func(string) execution.Module { return f.mod },
		Settings: settings.Default(), Clock: f.clock, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	f.engine = indexing.New(indexing.Options{Exec: exec, Inline: inline, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		OnReady: func(m string) { f.ready = append(f.ready, m) }})
	exec.ServeIndices(f.engine)
	f.reg = f.registry(t, opts)
	return f
}

func (f *fixture) registry(t testing.TB, opts abi.Options) *registry.Registry {
	t.Helper()
	sel := &abi.ResourceSelector{Group: ref.Group, Version: ref.Version, Name: ref.Plural}
	yes := "yes"
	specs := []abi.HandlerSpec{
		{ID: "by_owner", Kind: abi.KindIndex, Resource: sel, Options: opts,
			Filters: abi.Filters{Labels: map[string]abi.MetaFilter{"indexed": {Value: &yes}}}},
		{ID: "on_create", Kind: abi.KindCreate, Resource: sel},
	}
	reg, err := registry.New([]abi.Manifest{{ABIVersion: abi.Version, Module: abi.ModuleInfo{Name: "m"}, Handlers: specs}},
		func(abi.ResourceSelector) (abi.ResourceRef, error) { return ref, nil })
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func (f *fixture) lookup(t *testing.T, key string) string {
	t.Helper()
	resp := f.engine.Lookup("m", abi.IndexLookupRequest{Index: "by_owner", Key: json.RawMessage(key)})
	if resp.Error != nil {
		t.Fatalf("lookup %s: %v", key, resp.Error)
	}
	raw, _ := json.Marshal(resp.Values)
	return string(raw)
}

func (f *fixture) whole(t *testing.T) string {
	t.Helper()
	resp := f.engine.Lookup("m", abi.IndexLookupRequest{Index: "by_owner", All: true})
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	return string(resp.Index)
}

// Lookups across objects, changes replacing an object's values, filter
// mismatch and deletion removing them; readiness after MarkReady only.
func TestObserve(t *testing.T) {
	f := newFixture(t, 4096, abi.Options{})
	ctx := context.Background()
	fills := f.engine.Install(f.reg, nil)
	if len(fills) != 1 || fills[0].Module != "m" || f.engine.Ready("m") || !f.engine.Ready("other") {
		t.Fatalf("fills %+v, ready m %v", fills, f.engine.Ready("m"))
	}
	for _, o := range []*unstructured.Unstructured{obj("a", "alice"), obj("b", "alice"), obj("c", "bob")} {
		f.engine.Observe(ctx, ref, true, o, false)
	}
	f.engine.MarkReady(fills[0])
	if !f.engine.Ready("m") || len(f.ready) != 1 {
		t.Fatalf("not ready after MarkReady (%v)", f.ready)
	}
	if got := f.lookup(t, `"alice"`); got != `["a","b"]` {
		t.Errorf("alice: %s", got)
	}
	f.engine.Observe(ctx, ref, true, obj("b", "bob"), false) // b changes owner
	if got, want := f.whole(t), `{"alice":["a"],"bob":["b","c"]}`; got != want {
		t.Errorf("after b's change: %s, want %s", got, want)
	}
	unlabelled := obj("c", "bob")
	unlabelled.SetLabels(nil)
	f.engine.Observe(ctx, ref, true, unlabelled, false) // c no longer matches
	f.engine.Observe(ctx, ref, true, obj("a", "alice"), true)
	if got, want := f.whole(t), `{"bob":["b"]}`; got != want {
		t.Errorf("after a's deletion and c's mismatch: %s, want %s", got, want)
	}
	// Requests carry the index whole while it is small.
	if got := string(f.engine.Carried("m")["by_owner"]); got != `{"bob":["b"]}` {
		t.Errorf("carried %s", got)
	}
	if f.engine.Carried("other") != nil {
		t.Error("a module without indexes carries some")
	}
	if resp := f.engine.Lookup("m", abi.IndexLookupRequest{Index: "nope", Key: json.RawMessage(`"x"`)}); resp.Error == nil || resp.Error.Code != 404 {
		t.Errorf("unknown index: %+v", resp)
	}
}

// A large index is carried as null: the request does not grow with it.
func TestCarriedLarge(t *testing.T) {
	f := newFixture(t, 64, abi.Options{})
	ctx := context.Background()
	f.engine.Install(f.reg, nil)
	for i := range 10 {
		f.engine.Observe(ctx, ref, true, obj(fmt.Sprintf("o%d", i), fmt.Sprintf("owner-%d", i)), false)
	}
	if got := string(f.engine.Carried("m")["by_owner"]); got != "null" {
		t.Errorf("a %d-byte index carried as %s, want null", len(f.whole(t)), got)
	}
	// The index handler's own requests carry the indexes too.
	f.engine.Observe(ctx, ref, true, obj("o0", "owner-0"), false)
	if got := string(f.mod.last.Indices["by_owner"]); got != "null" {
		t.Errorf("the handler's request carries %s", got)
	}
}

// Errors as Kopf's: ignored keeps the previous values; temporary drops them
// and excludes the object until its next event after the delay; permanent
// excludes it for good.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	delay := 30.0
	for _, tc := range []struct {
		name    string
		opts    abi.Options
		fail    *abi.Response
		after   string // the index right after the failure
		later   string // after another event before the delay (ignored: called again)
		retried string // after an event past the delay
	}{
		{"ignored", abi.Options{}, &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeError, Message: "boom"}},
			`{"alice":["a"]}`, `{"bob":["a"]}`, `{"carol":["a"]}`},
		{"temporary", abi.Options{}, &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeTemporary, Delay: &delay}},
			`{}`, `{}`, `{"carol":["a"]}`},
		{"arbitrary-temporary", abi.Options{Errors: abi.ErrorsTemporary, Backoff: 30}, &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeError}},
			`{}`, `{}`, `{"carol":["a"]}`},
		{"permanent", abi.Options{}, &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomePermanent}},
			`{}`, `{}`, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 4096, tc.opts)
			f.engine.Install(f.reg, nil)
			f.engine.Observe(ctx, ref, true, obj("a", "alice"), false)
			good := f.mod.answer
			f.mod.answer = func(*abi.Request) *abi.Response { return tc.fail }
			f.engine.Observe(ctx, ref, true, obj("a", "bob"), false)
			if got := f.whole(t); got != tc.after {
				t.Errorf("after the failure: %s, want %s", got, tc.after)
			}
			f.mod.answer = good
			calls := f.mod.calls
			f.clock.Step(10 * time.Second)
			f.engine.Observe(ctx, ref, true, obj("a", "bob"), false)
			if got := f.whole(t); got != tc.later {
				t.Errorf("before the delay: %s, want %s", got, tc.later)
			}
			if tc.name != "ignored" && f.mod.calls != calls {
				t.Errorf("called again before the delay")
			}
			f.clock.Step(time.Minute)
			f.engine.Observe(ctx, ref, true, obj("a", "carol"), false)
			if got := f.whole(t); got != tc.retried {
				t.Errorf("past the delay: %s, want %s", got, tc.retried)
			}
		})
	}
}

// A swap of the module starts its indexes empty; a rebuild from the cache
// does not overwrite what a watch event indexed meanwhile; indexes of a
// kept module stay; a replaced set is never marked ready.
func TestInstallRebuild(t *testing.T) {
	f := newFixture(t, 4096, abi.Options{})
	ctx := context.Background()
	first := f.engine.Install(f.reg, nil)
	f.engine.Observe(ctx, ref, true, obj("a", "alice"), false)
	f.engine.MarkReady(first[0])

	if fills := f.engine.Install(f.registry(t, abi.Options{}), func(string) bool { return true }); len(fills) != 0 || !f.engine.Ready("m") {
		t.Fatalf("a kept module was refilled: %+v", fills)
	}
	fills := f.engine.Install(f.registry(t, abi.Options{}), func(string) bool { return false })
	if len(fills) != 1 || f.engine.Ready("m") || f.whole(t) != `{}` {
		t.Fatalf("a swapped module: fills %+v, ready %v, index %s", fills, f.engine.Ready("m"), f.whole(t))
	}
	f.engine.MarkReady(first[0]) // the old set: nothing happens
	if f.engine.Ready("m") {
		t.Fatal("marking the replaced set ready made the new one ready")
	}
	// An event delivers a's newer state; the cache still lists the old one.
	f.engine.Observe(ctx, ref, true, obj("a", "bob"), false)
	f.engine.Rebuild(ctx, fills[0], ref, true, []*unstructured.Unstructured{obj("a", "alice"), obj("b", "carol")})
	f.engine.MarkReady(fills[0])
	if got, want := f.whole(t), `{"bob":["a"],"carol":["b"]}`; got != want || !f.engine.Ready("m") {
		t.Errorf("rebuilt: %s (ready %v), want %s", got, f.engine.Ready("m"), want)
	}
}
