package execution_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/execution"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// Memos as Kopf's: a module's activities share its operator memo; every
// handler kind about an object shares the module's object memo, which
// starts as the operator memo; modules do not see each other's memos;
// callback filters, conversions and reviews of objects being created do
// not keep theirs; a forgotten object starts again from the operator memo.
func TestMemosAcrossKinds(t *testing.T) {
	// Each call answers with its request's memo plus one mark.
	mod := newFakeModule(func(req *abi.Request) (*abi.Response, error) {
		memo := map[string]any{}
		_ = json.Unmarshal(req.Memo, &memo)
		memo[req.Handler] = true
		raw, _ := json.Marshal(memo)
		if req.Call == abi.CallWhen {
			yes := true
			return &abi.Response{Matched: &yes, Memo: raw}, nil
		}
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Memo: raw}, nil
	})
	exec := newExec(mod, nil, clocktesting.NewFakeClock(time.Now()))
	ctx := context.Background()
	handler := func(module, id string, kind abi.HandlerKind) *registry.Handler {
		spec := abi.HandlerSpec{ID: id, Kind: kind}
		r := abi.ResourceRef{}
		if !kind.IsActivity() {
			spec.Resource = &abi.ResourceSelector{Group: ref.Group, Version: ref.Version, Name: ref.Plural}
			r = ref
		}
		h, err := registry.NewHandler(module, spec, r)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	call := func(h *registry.Handler, in execution.Input) string {
		t.Helper()
		r, err := exec.Call(ctx, h, in, execution.CallOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return string(r.Request.Memo)
	}
	subj := func(name string) *execution.Subject {
		obj := object()
		obj.SetName(name)
		return execution.NewSubject(ref, true, obj)
	}

	if got := call(handler("m", "startup", abi.KindStartup), execution.Input{}); got != "" {
		t.Errorf("first startup memo %q, want none", got)
	}
	if got := call(handler("m", "probe", abi.KindProbe), execution.Input{}); got != `{"startup":true}` {
		t.Errorf("probe memo %q, want the startup's operator memo", got)
	}
	// Every kind about object a: the chain of marks shows one shared memo.
	want := `{"probe":true,"startup":true}`
	for _, step := range []struct {
		id   string
		kind abi.HandlerKind
		in   execution.Input
	}{
		{"on_create", abi.KindCreate, execution.Input{}},
		{"on_event", abi.KindEvent, execution.Input{Event: &execution.EventInput{Type: "ADDED"}}},
		{"tick", abi.KindTimer, execution.Input{}},
		{"watch", abi.KindDaemon, execution.Input{}},
		{"by_owner", abi.KindIndex, execution.Input{}},
		{"check", abi.KindValidate, execution.Input{Admission: &execution.AdmissionInput{Request: abi.AdmissionRequest{Operation: "UPDATE"}}}},
	} {
		step.in.Subject = subj("a")
		if got := call(handler("m", step.id, step.kind), step.in); got != want {
			t.Errorf("%s (%s) got memo %s, want %s", step.id, step.kind, got, want)
		}
		var m map[string]any
		_ = json.Unmarshal([]byte(want), &m)
		m[step.id] = true
		raw, _ := json.Marshal(m)
		want = string(raw)
	}
	// Not kept: a callback filter's, a review of an object being created.
	h := handler("m", "on_update", abi.KindUpdate)
	if _, err := exec.When(ctx, subj("a"), nil)(h, &registry.Cause{Reason: abi.ReasonUpdate, Body: object().Object}); err != nil {
		t.Fatal(err)
	}
	create := execution.Input{Subject: subj("a"), EphemeralMemo: true,
		Admission: &execution.AdmissionInput{Request: abi.AdmissionRequest{Operation: "CREATE"}}}
	call(handler("m", "check", abi.KindValidate), create)
	if got := call(h, execution.Input{Subject: subj("a")}); got != want {
		t.Errorf("after a filter and a CREATE review the memo is %s, want %s", got, want)
	}
	// Another object starts from the operator memo; another module has its own.
	if got := call(handler("m", "on_create", abi.KindCreate), execution.Input{Subject: subj("b")}); got != `{"probe":true,"startup":true}` {
		t.Errorf("object b starts with %s, want the operator memo", got)
	}
	if got := call(handler("other", "on_create", abi.KindCreate), execution.Input{Subject: subj("a")}); got != "" {
		t.Errorf("module other sees memo %s of module m", got)
	}
	// Gone: forgotten.
	exec.ForgetObject(ref, "ns", "a")
	if got := call(handler("m", "on_create", abi.KindCreate), execution.Input{Subject: subj("a")}); got != `{"probe":true,"startup":true}` {
		t.Errorf("a forgotten object starts with %s, want the operator memo", got)
	}
}

// Overlapping calls about one object (an index handler on the watch and a
// change handler) each change their own members of the memo: neither
// undoes the other's change, as with Kopf's one shared memo object; a
// removed member goes.
func TestMemosOverlappingCalls(t *testing.T) {
	answers := map[string]string{}
	mod := newFakeModule(func(req *abi.Request) (*abi.Response, error) {
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeSuccess}, Memo: json.RawMessage(answers[req.Handler])}, nil
	})
	exec := newExec(mod, nil, clocktesting.NewFakeClock(time.Now()))
	ctx := context.Background()
	subj := execution.NewSubject(ref, true, object())
	sel := &abi.ResourceSelector{Group: ref.Group, Version: ref.Version, Name: ref.Plural}
	call := func(id string, kind abi.HandlerKind, start string) {
		t.Helper()
		h, err := registry.NewHandler("m", abi.HandlerSpec{ID: id, Kind: kind, Resource: sel}, ref)
		if err != nil {
			t.Fatal(err)
		}
		in := execution.Input{Subject: subj}
		if start != "" {
			in.Memo = json.RawMessage(start) // as the call began, before the other answered
		}
		if _, err := exec.Call(ctx, h, in, execution.CallOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	answers["first"] = `{"a":1,"gone":true}`
	call("first", abi.KindCreate, "")
	answers["by_owner"] = `{"a":1,"gone":true,"indexed":1}`
	answers["report"] = `{"a":1,"reported":"create"}` // removes "gone"
	call("by_owner", abi.KindIndex, `{"a":1,"gone":true}`)
	call("report", abi.KindCreate, `{"a":1,"gone":true}`)
	answers["show"] = ""
	call("show", abi.KindTimer, "")
	if got, want := string(mod.reqs[len(mod.reqs)-1].Memo), `{"a":1,"indexed":1,"reported":"create"}`; got != want {
		t.Errorf("memo after overlapping calls: %s, want %s", got, want)
	}
}
