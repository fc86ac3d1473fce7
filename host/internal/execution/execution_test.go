package execution_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/kube"
	"github.com/kopf-wasm/kopf-wasm/host/internal/objects"
	"github.com/kopf-wasm/kopf-wasm/host/internal/persistence"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/settings"
)

var ref = abi.ResourceRef{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Namespaced: true}

func object() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "ex", "namespace": "ns", "uid": "u1", "labels": map[string]any{"a": "b"}},
		"spec":     map[string]any{"field": "x"},
	}}
}

func newExec(mod execution.Module, cluster execution.Cluster, clock *clocktesting.FakeClock) *execution.Executor {
	opts := execution.Options{
		Modules:  func(string) execution.Module { return mod },
		Settings: settings.Default(),
		Clock:    clock,
	}
	if cluster != nil {
		opts.Cluster = cluster
	}
	return execution.New(opts)
}

// A module whose every handler has a callback filter: one cycle asks the
// registry everything (timers and daemons, finalizer, prematch, due) and
// each callback runs once in the guest, not once per question.
func TestWhenRunsOncePerHandlerPerCycle(t *testing.T) {
	sel := &abi.ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	when := abi.Filters{When: true}
	specs := []abi.HandlerSpec{
		{ID: "create_fn", Kind: abi.KindCreate, Resource: sel, Filters: when},
		{ID: "update_fn", Kind: abi.KindUpdate, Resource: sel, Filters: when},
		{ID: "delete_fn", Kind: abi.KindDelete, Resource: sel, Filters: when},
		{ID: "tick", Kind: abi.KindTimer, Resource: sel, Filters: when, Options: abi.Options{Interval: 1}},
		{ID: "watch", Kind: abi.KindDaemon, Resource: sel, Filters: when},
	}
	reg, err := registry.New([]abi.Manifest{{ABIVersion: abi.Version, Module: abi.ModuleInfo{Name: "m"}, Handlers: specs}},
		func(abi.ResourceSelector) (abi.ResourceRef, error) { return ref, nil })
	if err != nil {
		t.Fatal(err)
	}
	mod := newFakeModule(success(`{}`))
	exec := newExec(mod, nil, clocktesting.NewFakeClock(time.Now()))
	obj := object()
	subj := execution.NewSubject(ref, true, obj)
	cause := registry.DetectCause(registry.CauseInput{Body: obj.Object, Finalizer: "f/f", New: map[string]any{"spec": obj.Object["spec"]}})
	sel2, err := reg.Select(ref, &cause, exec.When(context.Background(), subj, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !sel2.Prematched || !sel2.RequiresFinalizer || len(sel2.Spawned) != 2 || len(sel2.Due) != 1 || sel2.Due[0].ID() != "create_fn" {
		t.Fatalf("selection = %+v", sel2)
	}
	for _, id := range []string{"create_fn", "delete_fn", "tick", "watch"} {
		if n := mod.count(abi.CallWhen, id); n != 1 {
			t.Errorf("the callback of %s ran %d times in one cycle, want once", id, n)
		}
	}
	// update_fn is never due for a creation; its callback may be asked by
	// the prematch only, once at most.
	if n := mod.count(abi.CallWhen, "update_fn"); n > 1 {
		t.Errorf("the callback of update_fn ran %d times", n)
	}
	// The body is encoded once for all of them: every request shares it.
	first := mod.reqs[0].Body
	for _, req := range mod.reqs {
		if &req.Body[0] != &first[0] {
			t.Fatalf("request for %s has a body encoded again", req.Handler)
		}
	}
}

func TestCall(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	started := clock.Now().Add(-time.Hour)
	temporary := func(*abi.Request) (*abi.Response, error) {
		d := 5.0
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeTemporary, Message: "later", Delay: &d}}, nil
	}
	trap := func(*abi.Request) (*abi.Response, error) { return nil, errors.New("wasm trap") }
	tests := []struct {
		name     string
		spec     abi.HandlerSpec
		respond  func(*abi.Request) (*abi.Response, error)
		rec      persistence.Record
		called   bool
		finished bool
		delay    time.Duration
		errType  any
	}{
		{"success", abi.HandlerSpec{ID: "c", Kind: abi.KindCreate}, success(`{"m":1}`), persistence.Record{}, true, true, 0, nil},
		{"temporary error", abi.HandlerSpec{ID: "c", Kind: abi.KindCreate}, temporary, persistence.Record{}, true, false, 5 * time.Second, &execution.TemporaryError{}},
		{"a trap is an arbitrary error, retried after the backoff", abi.HandlerSpec{ID: "c", Kind: abi.KindCreate}, trap, persistence.Record{}, true, false, time.Minute, &execution.TemporaryError{}},
		{"timeout reached: failed without a call", abi.HandlerSpec{ID: "c", Kind: abi.KindCreate, Options: abi.Options{Timeout: 60}},
			success(`{}`), persistence.Record{Started: started, Retries: 3}, false, true, 0, &execution.HandlerTimeoutError{}},
		{"event handler errors are ignored", abi.HandlerSpec{ID: "e", Kind: abi.KindEvent}, trap, persistence.Record{}, true, true, 0, &execution.IgnoredError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mod := newFakeModule(tt.respond)
			exec := newExec(mod, nil, clock)
			h, err := registry.NewHandler("m", tt.spec, ref)
			if err != nil {
				t.Fatal(err)
			}
			r, err := exec.Call(context.Background(), h, execution.Input{Subject: execution.NewSubject(ref, true, object()), Record: tt.rec}, execution.CallOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if called := mod.total() > 0; called != tt.called {
				t.Errorf("called = %v, want %v", called, tt.called)
			}
			if r.Step.Finished != tt.finished || r.Step.Delay != tt.delay {
				t.Errorf("step = %+v, want finished %v delay %s", r.Step, tt.finished, tt.delay)
			}
			if (tt.errType == nil) != (r.Step.Err == nil) || (tt.errType != nil && !sameType(r.Step.Err, tt.errType)) {
				t.Errorf("step error = %T %v, want %T", r.Step.Err, r.Step.Err, tt.errType)
			}
		})
	}
}

func sameType(err error, want any) bool {
	switch want.(type) {
	case *execution.TemporaryError:
		var e *execution.TemporaryError
		return errors.As(err, &e)
	case *execution.HandlerTimeoutError:
		var e *execution.HandlerTimeoutError
		return errors.As(err, &e)
	case *execution.IgnoredError:
		var e *execution.IgnoredError
		return errors.As(err, &e)
	}
	return false
}

func TestCallNotLoaded(t *testing.T) {
	exec := execution.New(execution.Options{Modules: func(string) execution.Module { return nil }, Settings: settings.Default()})
	h, _ := registry.NewHandler("gone", abi.HandlerSpec{ID: "c", Kind: abi.KindCreate}, ref)
	_, err := exec.Call(context.Background(), h, execution.Input{Subject: execution.NewSubject(ref, true, object())}, execution.CallOptions{})
	var nl *execution.NotLoadedError
	if !errors.As(err, &nl) || nl.Module != "gone" {
		t.Errorf("err = %v, want a NotLoadedError for module gone", err)
	}
}

// A result goes to status (one request per endpoint), a failed write of an
// object that is gone is ErrGone, and the outcome is reported with an Event
// only for failures at the default posting level.
func TestFoldApplyReport(t *testing.T) {
	cluster := &fakeCluster{}
	mod := newFakeModule(func(*abi.Request) (*abi.Response, error) {
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Result: []byte(`{"message":"hi"}`),
			Patch: &abi.Patch{Merge: []byte(`{"metadata":{"labels":{"seen":"yes"}}}`)}}, nil
	})
	exec := newExec(mod, cluster, clocktesting.NewFakeClock(time.Now()))
	subj := execution.NewSubject(ref, true, object())
	h, _ := registry.NewHandler("m", abi.HandlerSpec{ID: "create_fn", Kind: abi.KindCreate}, ref)
	r, err := exec.Call(context.Background(), h, execution.Input{Subject: subj}, execution.CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := persistence.NewPatch(true)
	exec.Fold(p, subj, h, r, true)
	exec.Report(context.Background(), subj, h, r.Step, "")
	if _, err := exec.Apply(context.Background(), subj, p); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cluster.patches, "\n")
	want := ` {"metadata":{"labels":{"seen":"yes"}}}` + "\n" + `status {"status":{"create_fn":{"message":"hi"}}}`
	if got != want {
		t.Errorf("patches:\n%s\nwant:\n%s", got, want)
	}
	if len(cluster.events) != 0 {
		t.Errorf("a success posted Events at the default level: %+v", cluster.events)
	}
	exec.Report(context.Background(), subj, h, execution.Step{Err: errors.New("boom"), Finished: true}, "")
	if len(cluster.events) != 1 || cluster.events[0].Type != "Warning" {
		t.Errorf("events = %+v, want one Warning", cluster.events)
	}

	gone := &fakeCluster{patch: func(string) (*kube.Patched, error) { return nil, kube.ErrGone }}
	exec = newExec(mod, gone, clocktesting.NewFakeClock(time.Now()))
	p = persistence.NewPatch(true)
	exec.Fold(p, subj, h, r, true)
	if _, err := exec.Apply(context.Background(), subj, p); !errors.Is(err, execution.ErrGone) {
		t.Errorf("apply to a deleted object: %v, want ErrGone", err)
	}
}

// At debug level (-v) every write is logged with its body, as Kopf's
// "Patching with: ..."; at info nothing is.
func TestApplyLogsPatchesAtDebug(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelDebug, slog.LevelInfo} {
		var logs strings.Builder
		opts := execution.Options{
			Modules: func(string) execution.Module { return nil }, Settings: settings.Default(), Cluster: &fakeCluster{},
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level})),
		}
		exec := execution.New(opts)
		p := persistence.NewPatch(true)
		p.Set(objects.ParsePath("status.create_fn.message"), "hi")
		if _, err := exec.Apply(context.Background(), execution.NewSubject(ref, true, object()), p); err != nil {
			t.Fatal(err)
		}
		logged := strings.Contains(logs.String(), `msg="Patching status with: {\"status\":{\"create_fn\":{\"message\":\"hi\"}}}"`)
		if logged != (level == slog.LevelDebug) {
			t.Errorf("at level %s the log is %q", level, logs.String())
		}
	}
}

// A call's request says when the host stops it: wasm.callTimeout after its
// start, or the caller's deadline when sooner; a daemon's only the caller's.
func TestCallDeadline(t *testing.T) {
	mod := newFakeModule(func(*abi.Request) (*abi.Response, error) {
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}}, nil
	})
	now := time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC)
	exec := newExec(mod, &fakeCluster{}, clocktesting.NewFakeClock(now))
	h, _ := registry.NewHandler("m", abi.HandlerSpec{ID: "create_fn", Kind: abi.KindCreate}, ref)
	soon := now.Add(2 * time.Second)
	short, cancel := context.WithDeadline(context.Background(), soon)
	defer cancel()
	tests := []struct {
		name      string
		ctx       context.Context
		dedicated bool
		want      time.Time
	}{
		{"the call timeout", context.Background(), false, now.Add(settings.Default().Wasm.CallTimeout)},
		{"a sooner caller", short, false, soon},
		{"a daemon", context.Background(), true, time.Time{}},
		{"a daemon of a caller with a deadline", short, true, soon},
	}
	for _, tt := range tests {
		in := execution.Input{Subject: execution.NewSubject(ref, true, object())}
		if _, err := exec.Call(tt.ctx, h, in, execution.CallOptions{Dedicated: tt.dedicated}); err != nil {
			t.Fatal(err)
		}
		if got := mod.reqs[len(mod.reqs)-1].Deadline; !got.Equal(tt.want) {
			t.Errorf("%s: deadline %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A write that fails for a transient reason part-way returns what is left
// to send (the failed request first), which Send sends later; any other
// failure returns none.
func TestApplyKeepsUnsent(t *testing.T) {
	for _, tt := range []struct {
		name     string
		fail     error
		wantLeft []string // subresources of the requests left, "" for the object
	}{
		{"status unavailable", fmt.Errorf("patch: %w", kube.ErrUnavailable), []string{"status"}},
		{"status refused", fmt.Errorf("patch: %w", kube.ErrInvalid), nil},
		{"status too large", fmt.Errorf("patch: %w", kube.ErrTooLarge), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			failing := true
			cluster := &fakeCluster{patch: func(sub string) (*kube.Patched, error) {
				if sub == "status" && failing {
					return nil, tt.fail
				}
				return &kube.Patched{ResourceVersion: "7"}, nil
			}}
			exec := newExec(nil, cluster, clocktesting.NewFakeClock(time.Now()))
			subj := execution.NewSubject(ref, true, object())
			p := persistence.NewPatch(true)
			p.Set(objects.ParsePath("metadata.labels.seen"), "yes")
			p.Set(objects.ParsePath("status.create_fn.message"), "hi")
			_, err := exec.Apply(context.Background(), subj, p)
			var unsent *execution.Unsent
			if !errors.As(err, &unsent) {
				if tt.wantLeft != nil || err == nil {
					t.Fatalf("apply: %v, want the requests left", err)
				}
				return
			}
			if tt.wantLeft == nil {
				t.Fatalf("apply: kept %d requests of a failure that is not transient (%v)", len(unsent.Requests), err)
			}
			var left []string
			for _, r := range unsent.Requests {
				left = append(left, r.Subresource)
			}
			if !slices.Equal(left, tt.wantLeft) || !errors.Is(err, kube.ErrUnavailable) {
				t.Fatalf("left %q (%v), want %q", left, err, tt.wantLeft)
			}
			failing = false
			last, err := exec.Send(context.Background(), subj, unsent.Requests)
			if err != nil || last == nil || last.ResourceVersion != "7" {
				t.Fatalf("send: %+v, %v", last, err)
			}
			if n := len(cluster.patches); n != 3 {
				t.Errorf("patches sent: %d (%q), want 3: the object once, status twice", n, cluster.patches)
			}
		})
	}
}
