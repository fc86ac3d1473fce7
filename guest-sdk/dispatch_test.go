package kopf

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func TestPanicIsAnArbitraryError(t *testing.T) {
	fresh(t)
	OnCreate("", "v1", "pods", func(ctx *Context) (any, error) {
		ctx.Patch().Set("metadata.labels.before", "panic")
		var m map[string]int
		m["x"] = 1
		return nil, nil
	}, ID("boom"))
	host := &recorder{}
	resp := run(t, host, abi.Request{Handler: "boom", Kind: abi.KindCreate})
	if resp.Outcome.Status != abi.OutcomeError || !strings.Contains(resp.Outcome.Message, "panic: assignment to entry in nil map") {
		t.Errorf("outcome = %+v, want an arbitrary error with the panic message", resp.Outcome)
	}
	if resp.Patch == nil || string(resp.Patch.Merge) != `{"metadata":{"labels":{"before":"panic"}}}` {
		t.Errorf("patch = %+v, want the patch made before the panic", resp.Patch)
	}
	if len(host.calls) != 1 || host.calls[0].fn != abi.HostLog || !strings.Contains(string(host.calls[0].request), "goroutine") {
		t.Errorf("host calls = %v, want one log with the stack", host.calls)
	}
}

func TestUnknownHandler(t *testing.T) {
	fresh(t)
	resp := run(t, &recorder{}, abi.Request{Handler: "nope"})
	if resp.Outcome.Status != abi.OutcomeError || !strings.Contains(resp.Outcome.Message, `no handler "nope"`) {
		t.Errorf("outcome = %+v", resp.Outcome)
	}
}

func TestBadRequestIsAModuleFailure(t *testing.T) {
	fresh(t)
	if _, err := registered.handleJSON([]byte("{"), &recorder{}); err == nil {
		t.Fatal("no error for a request that is not JSON")
	}
}

func TestWhen(t *testing.T) {
	fresh(t)
	calls := 0
	OnCreate("", "v1", "pods", func(*Context) (any, error) { calls++; return nil, nil }, ID("h"),
		When(func(ctx *Context) bool { return ctx.Labels()["app"] == "demo" }))
	OnCreate("", "v1", "pods", createFn, ID("panics"), When(func(*Context) bool { panic("oops") }))
	for body, want := range map[string]bool{
		`{"metadata":{"labels":{"app":"demo"}}}`:  true,
		`{"metadata":{"labels":{"app":"other"}}}`: false,
	} {
		resp := run(t, &recorder{}, abi.Request{Call: abi.CallWhen, Handler: "h", Body: json.RawMessage(body)})
		if resp.Matched == nil || *resp.Matched != want || resp.Outcome.Status != abi.OutcomeSuccess {
			t.Errorf("when(%s) = %+v, want matched %v", body, resp, want)
		}
	}
	if calls != 0 {
		t.Errorf("the handler ran %d times during when calls", calls)
	}
	resp := run(t, &recorder{}, abi.Request{Call: abi.CallWhen, Handler: "panics"})
	if resp.Matched != nil || resp.Outcome.Status != abi.OutcomeError || resp.Outcome.Message != "panic: oops" {
		t.Errorf("a panicking when filter gave %+v", resp)
	}
}

func TestContextViews(t *testing.T) {
	fresh(t)
	var seen map[string]any
	OnUpdate("kopf.dev", "v1", "kopfexamples", func(ctx *Context) (any, error) {
		seen = map[string]any{
			"name": ctx.Name(), "namespace": ctx.Namespace(), "uid": ctx.UID(), "reason": ctx.Reason(),
			"spec": ctx.Spec(), "status": ctx.Status(), "labels": ctx.Labels(), "annotations": ctx.Annotations(),
			"old": ctx.Old(), "new": ctx.New(), "diff": ctx.Diff(), "retry": ctx.Retry(),
			"runtime": ctx.Runtime().String(), "started": ctx.Started().Format(time.RFC3339), "param": ctx.Param(),
			"handler": ctx.Handler(), "plural": ctx.Resource().Plural, "memo": ctx.Memo(), "event": ctx.Event() == nil,
			"admission": ctx.Admission() == nil, "index": ctx.Index("byName"),
		}
		return "done", nil
	}, ID("u"), Param([]int{1, 2}))
	req := abi.Request{
		Handler: "u", Kind: abi.KindUpdate, Reason: abi.ReasonUpdate, Name: "x", Namespace: "ns", UID: "1",
		Resource: &abi.ResourceRef{Version: "v1", Plural: "kopfexamples"},
		Body:     json.RawMessage(`{"metadata":{"labels":{"a":"b"},"annotations":{"c":"d"}},"spec":{"f":1},"status":{"s":true}}`),
		Old:      json.RawMessage(`{"spec":{"f":0}}`), New: json.RawMessage(`{"spec":{"f":1}}`),
		Diff:  []abi.DiffItem{{Op: abi.DiffChange, Field: []string{"spec", "f"}, Old: json.RawMessage("0"), New: json.RawMessage("1")}},
		Retry: 2, Runtime: 1.5, Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Param: json.RawMessage(`[1,2]`), Memo: json.RawMessage(`{"k":"v"}`),
		Indices: map[string]json.RawMessage{"byName": json.RawMessage(`{"x":["ns"]}`)},
	}
	resp := run(t, &recorder{}, req)
	want := `{"admission":true,"annotations":{"c":"d"},"diff":[{"op":"change","field":["spec","f"],"old":0,"new":1}],` +
		`"event":true,"handler":"u","index":{"x":["ns"]},"labels":{"a":"b"},"memo":{"k":"v"},"name":"x","namespace":"ns",` +
		`"new":{"spec":{"f":1}},"old":{"spec":{"f":0}},"param":[1,2],"plural":"kopfexamples","reason":"update","retry":2,` +
		`"runtime":"1.5s","spec":{"f":1},"started":"2026-01-02T03:04:05Z","status":{"s":true},"uid":"1"}`
	if got := jsonString(t, seen); got != want {
		t.Errorf("views:\n got %s\nwant %s", got, want)
	}
	if resp.Memo != nil {
		t.Errorf("an unchanged memo was returned: %s", resp.Memo)
	}
	if string(resp.Result) != `"done"` || resp.Outcome.Status != abi.OutcomeSuccess || resp.Patch != nil {
		t.Errorf("response = %+v", resp)
	}
}

func TestWebhookVerdicts(t *testing.T) {
	fresh(t)
	OnMutate("", "v1", "pods", func(ctx *Context) (any, error) {
		a := ctx.Admission()
		if a.Operation != "CREATE" || !a.DryRun || a.UserInfo.String("username") != "admin" {
			return nil, PermanentError{Message: "wrong admission view"}
		}
		a.Warnings = append(a.Warnings, "defaulted")
		ctx.Patch().Add("/metadata/labels/x", "y")
		return nil, nil
	}, ID("m"))
	OnValidate("", "v1", "pods", func(*Context) (any, error) { return nil, TemporaryError{Message: "later"} }, ID("v"))
	adm := &abi.AdmissionRequest{UID: "1", Operation: "CREATE", DryRun: true, UserInfo: json.RawMessage(`{"username":"admin"}`)}
	resp := run(t, &recorder{}, abi.Request{Handler: "m", Kind: abi.KindMutate, Admission: adm})
	if got := jsonString(t, resp); got != `{"outcome":{"status":"success"},"patch":{"json":[{"op":"add","path":"/metadata/labels/x","value":"y"}]},"admission":{"allowed":true,"warnings":["defaulted"]}}` {
		t.Errorf("mutation response = %s", got)
	}
	resp = run(t, &recorder{}, abi.Request{Handler: "v", Kind: abi.KindValidate, Admission: adm})
	if got := jsonString(t, resp); got != `{"outcome":{"status":"temporary","message":"later"},"admission":{"allowed":false,"code":500,"message":"later"}}` {
		t.Errorf("denial response = %s", got)
	}
}

func TestResultThatCannotBeEncoded(t *testing.T) {
	fresh(t)
	OnCreate("", "v1", "pods", func(*Context) (any, error) { return func() {}, nil }, ID("c"))
	resp := run(t, &recorder{}, abi.Request{Handler: "c"})
	if resp.Outcome.Status != abi.OutcomeError || !strings.Contains(resp.Outcome.Message, "encode the result of c") || resp.Result != nil {
		t.Errorf("response = %+v", resp)
	}
}

func TestMemo(t *testing.T) {
	fresh(t)
	OnCreate("", "v1", "pods", func(ctx *Context) (any, error) {
		if ctx.Name() == "write" {
			ctx.Memo()["k"] = "v"
		} else {
			_ = ctx.Memo()["k"]
		}
		return nil, nil
	}, ID("m"))
	tests := []struct{ name, memo, want string }{
		{"write", ``, `{"k":"v"}`},
		{"write", `null`, `{"k":"v"}`},
		{"write", `{"a":1}`, `{"a":1,"k":"v"}`},
		{"write", `{"k":"v"}`, ``},
		{"read", `{"k":"v"}`, ``},
		{"read", ``, ``},
	}
	for _, tt := range tests {
		resp := run(t, &recorder{}, abi.Request{Handler: "m", Name: tt.name, Memo: json.RawMessage(tt.memo)})
		if string(resp.Memo) != tt.want || resp.Outcome.Status != abi.OutcomeSuccess {
			t.Errorf("%s with memo %q: response memo %s (%+v), want %q", tt.name, tt.memo, resp.Memo, resp.Outcome, tt.want)
		}
	}
}
