package reactor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/spawning"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

// The processing cycle on fakes: a module whose handlers answer as told, a
// cluster that applies merge patches to one stored object, and a fake
// clock. The end-to-end tests run the same cycle on a real API server.

var testRes = kube.Resource{ResourceRef: abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Namespaced: true}, Status: true}

// store is a fake cluster holding one object.
type store struct {
	mu     sync.Mutex
	obj    map[string]any
	rv     int
	writes int
}

func (s *store) Patch(ctx context.Context, _ abi.ResourceRef, _, _, _ string, kind abi.PatchType, data []byte) (*kube.Patched, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // a real client's request ends with its context
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if kind != abi.PatchMerge {
		return nil, fmt.Errorf("fake store: only merge patches, got %s", kind)
	}
	doc, err := objects.DecodeMap(data)
	if err != nil {
		return nil, err
	}
	s.obj = objects.ApplyMerge(s.obj, doc).(map[string]any)
	s.rv++
	s.writes++
	objects.Set(s.obj, objects.Path{"metadata", "resourceVersion"}, strconv.Itoa(s.rv))
	status := map[string]json.RawMessage{}
	if st, ok := s.obj["status"].(map[string]any); ok {
		for k, v := range st {
			status[k], _ = json.Marshal(v)
		}
	}
	return &kube.Patched{ResourceVersion: strconv.Itoa(s.rv), Status: status}, nil
}

func (s *store) PostEvent(context.Context, kube.ObjectRef, abi.EventRequest) error { return nil }
func (s *store) Do(context.Context, abi.KubeRequest) abi.KubeResponse              { return abi.KubeResponse{} }

// current returns a copy of the stored object.
func (s *store) current() *unstructured.Unstructured {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &unstructured.Unstructured{Object: objects.DeepCopyMap(s.obj)}
}

// guest is a fake module: answers says what each handler returns; calls
// lists "handler reason retry".
type guest struct {
	mu      sync.Mutex
	answers map[string]func(req *abi.Request) abi.Outcome
	calls   []string
	// hold keeps a stopped daemon from returning until it is closed.
	hold chan struct{}
	// daemons counts the daemon calls that began.
	daemons atomic.Int32
}

func (g *guest) Handle(_ context.Context, req *abi.Request, _ wasmrt.Host) (*abi.Response, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, fmt.Sprintf("%s %s %d", req.Handler, req.Reason, req.Retry))
	out := abi.Outcome{Status: abi.OutcomeSuccess}
	if a := g.answers[req.Handler]; a != nil {
		out = a(req)
	}
	return &abi.Response{Outcome: out, Result: []byte(`{"message":"done"}`)}, nil
}

func (g *guest) HandleDedicated(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error) {
	// Daemons of these tests sleep until they are stopped, then wait for
	// hold.
	g.daemons.Add(1)
	host.SleepUntilStopped(ctx, time.Hour)
	if g.hold != nil {
		select {
		case <-g.hold:
		case <-ctx.Done(): // terminated at the end of the test
		}
	}
	return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}}, nil
}

func (g *guest) called() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return strings.Join(g.calls, ", ")
}

type cycleFixture struct {
	op    *Operator
	clock *clocktesting.FakeClock
	store *store
	guest *guest
}

func newCycleFixture(t *testing.T, specs ...abi.HandlerSpec) *cycleFixture {
	t.Helper()
	f := &cycleFixture{clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		guest: &guest{answers: map[string]func(*abi.Request) abi.Outcome{}},
		store: &store{obj: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
			"metadata": map[string]any{"name": "ex", "namespace": "ns", "uid": "u1", "resourceVersion": "0"},
			"spec":     map[string]any{"x": 1.0}}}}
	reg, err := registry.New([]abi.Manifest{{ABIVersion: abi.Version, Module: abi.ModuleInfo{Name: "m"}, Handlers: specs}},
		func(abi.ResourceSelector) (abi.ResourceRef, error) { return testRes.ResourceRef, nil })
	if err != nil {
		t.Fatal(err)
	}
	set := settings.Default()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	exec := execution.New(execution.Options{Modules: func(string) execution.Module { return f.guest },
		Cluster: f.store, Settings: set, Logger: log, Clock: f.clock})
	popts := persistence.Options{Prefix: set.Persistence.Prefix, DiffBaseKey: set.Persistence.DiffBaseKey,
		Finalizer: set.Persistence.Finalizer, V1Keys: true, DiffBaseInStatus: true}
	storage, err := persistence.New(popts)
	if err != nil {
		t.Fatal(err)
	}
	f.op = &Operator{opts: Options{Settings: set}, log: log, storage: storage, annotated: storage, mem: newMemories(),
		registry: reg, exec: exec, limiter: newErrorDelays(set.Queueing.ErrorDelays)}
	f.op.spawner = spawning.New(spawning.Options{Exec: exec, Modules: []string{"m"}, StatusSubresource: func(string) bool { return true }})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		f.op.spawner.Shutdown(ctx)
	})
	return f
}

// cycle runs one processing cycle on the stored object.
func (f *cycleFixture) cycle(t *testing.T) outcome {
	t.Helper()
	obj := f.store.current()
	key := objectKey{resource: testRes.String(), namespace: "ns", name: "ex"}
	out, err := f.op.cycle(context.Background(), testRes, key, obj, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func spec(id string, kind abi.HandlerKind, opts abi.Options) abi.HandlerSpec {
	return abi.HandlerSpec{ID: id, Kind: kind, Resource: &abi.ResourceSelector{Name: "kopfexamples"}, Options: opts}
}

func temporary(delay float64, times int) func(*abi.Request) abi.Outcome {
	return func(req *abi.Request) abi.Outcome {
		if req.Retry < times {
			return abi.Outcome{Status: abi.OutcomeTemporary, Message: "not yet", Delay: &delay}
		}
		return abi.Outcome{Status: abi.OutcomeSuccess}
	}
}

// A temporary error is retried on the host's own clock: the cycle asks to
// be requeued after the delay and stores the record with it; no other write
// happens until the retry, which succeeds and ends the cause.
func TestCycleRetriesOnTheHostsClock(t *testing.T) {
	f := newCycleFixture(t, spec("create_fn", abi.KindCreate, abi.Options{}))
	f.guest.answers["create_fn"] = temporary(30, 1)
	out := f.cycle(t)
	if out.delay != 30*time.Second || f.store.writes != 1 {
		t.Fatalf("outcome %+v after %d writes, want a 30s delay after one write", out, f.store.writes)
	}
	rec := f.store.current().GetAnnotations()["kopf.zalando.org/create_fn"]
	want := `"delayed":"2026-01-01T00:00:30.000000+00:00"`
	if !strings.Contains(rec, want) || !strings.Contains(rec, `"retries":1`) {
		t.Errorf("record %s, want %s and one retry", rec, want)
	}
	f.clock.Step(10 * time.Second)
	if out := f.cycle(t); out.delay != 20*time.Second || f.store.writes != 1 {
		t.Fatalf("a cycle before the delay: %+v, %d writes; want 20s left and no write", out, f.store.writes)
	}
	f.clock.Step(20 * time.Second)
	if out := f.cycle(t); out.delay != 0 || out.again {
		t.Errorf("after the retry: %+v, want nothing more to do", out)
	}
	obj := f.store.current()
	if _, left := obj.GetAnnotations()["kopf.zalando.org/create_fn"]; left || statusMessage(obj, "create_fn") != "done" {
		t.Errorf("after success: annotations %v, status %v", obj.GetAnnotations(), obj.Object["status"])
	}
	if got, want := f.guest.called(), "create_fn create 0, create_fn create 1"; got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
}

// A cycle whose handlers ran writes their outcome even when the host began
// to stop meanwhile: otherwise they would run again after the restart.
func TestCycleWritesAfterTheStopBegan(t *testing.T) {
	f := newCycleFixture(t, spec("create_fn", abi.KindCreate, abi.Options{}))
	ctx, cancel := context.WithCancel(context.Background())
	f.guest.answers["create_fn"] = func(*abi.Request) abi.Outcome {
		cancel() // the stop begins while the handler runs
		return abi.Outcome{Status: abi.OutcomeSuccess}
	}
	key := objectKey{resource: testRes.String(), namespace: "ns", name: "ex"}
	if _, err := f.op.cycle(ctx, testRes, key, f.store.current(), nil); err != nil {
		t.Fatal(err)
	}
	if obj := f.store.current(); statusMessage(obj, "create_fn") != "done" {
		t.Errorf("the outcome was not written: status %v", obj.Object["status"])
	}
}

// A handler with a timeout fails once its runtime passes it, measured on
// the clock, without being called again.
func TestCycleTimeoutOnTheClock(t *testing.T) {
	f := newCycleFixture(t, spec("create_fn", abi.KindCreate, abi.Options{Timeout: 50}))
	f.guest.answers["create_fn"] = temporary(30, 100)
	f.cycle(t)
	f.clock.Step(30 * time.Second)
	f.cycle(t) // the next attempt would pass the timeout: it fails now
	rec := f.store.current().GetAnnotations()
	if got, want := f.guest.called(), "create_fn create 0, create_fn create 1"; got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
	if _, left := rec["kopf.zalando.org/create_fn"]; left {
		t.Errorf("the failed handler's record is left: %v", rec)
	}
	if !strings.Contains(fmt.Sprint(f.store.current().Object["status"]), "last-handled-configuration") {
		t.Errorf("the cause did not end (no diff-base): %v", f.store.current().Object["status"])
	}
}

// A deletion whose delete handler is done while a daemon is still
// stopping keeps the finished record and the finalizer; the cycle after the
// daemon stopped releases the object without calling the handler again
// (issue 15, bug 2), and the version the API server answered with does not
// count as caught up.
func TestCycleDeletionWaitsForDaemonsWithoutRerunning(t *testing.T) {
	f := newCycleFixture(t, spec("delete_fn", abi.KindDelete, abi.Options{}), spec("watch", abi.KindDaemon, abi.Options{}))
	f.guest.hold = make(chan struct{})
	f.cycle(t) // adds the finalizer, spawns the daemon
	f.cycle(t) // creation: no create handler, the diff-base
	if fins := f.store.current().GetFinalizers(); len(fins) != 1 {
		t.Fatalf("finalizers %v", fins)
	}
	// The daemon must be running, not merely spawned: one stopped before
	// its first call ends at once, and then nothing holds the object.
	key := spawning.Key{Resource: testRes.String(), Namespace: "ns", Name: "ex"}
	for deadline := time.Now().Add(5 * time.Second); f.guest.daemons.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the daemon was not called")
		}
	}
	f.store.mu.Lock()
	objects.Set(f.store.obj, objects.Path{"metadata", "deletionTimestamp"}, "2026-01-01T00:00:00Z")
	f.store.mu.Unlock()

	out := f.cycle(t)
	obj := f.store.current()
	if out.released || len(obj.GetFinalizers()) != 1 || !strings.Contains(obj.GetAnnotations()["kopf.zalando.org/delete_fn"], `"success":true`) {
		t.Fatalf("while the daemon stops: released %v, finalizers %v, annotations %v", out.released, obj.GetFinalizers(), obj.GetAnnotations())
	}
	close(f.guest.hold)
	for deadline := time.Now().Add(5 * time.Second); f.op.spawner.Running(key) > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the daemon did not stop")
		}
	}
	out = f.cycle(t)
	obj = f.store.current()
	if !out.released || len(obj.GetFinalizers()) != 0 || obj.GetAnnotations()["kopf.zalando.org/delete_fn"] != "" {
		t.Errorf("after the daemon stopped: released %v, finalizers %v, annotations %v", out.released, obj.GetFinalizers(), obj.GetAnnotations())
	}
	if got, want := f.guest.called(), "delete_fn delete 0"; got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
	// The object the API server returned is the one the cache still holds
	// until the deletion arrives: it must not be processed again.
	if caughtUp(out.patched, out.patched, out.released) {
		t.Errorf("a released object's own version %s counts as caught up", out.patched)
	}
}

func TestCaughtUp(t *testing.T) {
	tests := []struct {
		rv, pending string
		strict      bool
		want        bool
	}{
		{"5", "", false, true},
		{"5", "5", false, true},
		{"6", "5", false, true},
		{"4", "5", false, false},
		{"5", "5", true, false},
		{"6", "5", true, true},
		{"abc", "abd", false, false},
		{"abc", "abc", false, true},
	}
	for _, tt := range tests {
		if got := caughtUp(tt.rv, tt.pending, tt.strict); got != tt.want {
			t.Errorf("caughtUp(%q, %q, %v) = %v, want %v", tt.rv, tt.pending, tt.strict, got, tt.want)
		}
	}
}

func statusMessage(obj *unstructured.Unstructured, id string) string {
	msg, _, _ := unstructured.NestedString(obj.Object, "status", id, "message")
	return msg
}
