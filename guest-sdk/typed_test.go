package kopf

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

type widgetSpec struct {
	Size     string            `json:"size"`
	Replicas int               `json:"replicas"`
	Labels   map[string]string `json:"labels"`
}

func TestDecode(t *testing.T) {
	got, err := Decode[widgetSpec](Object{"size": "L", "replicas": 3.0, "labels": map[string]any{"a": "b"}})
	if err != nil || got.Size != "L" || got.Replicas != 3 || got.Labels["a"] != "b" {
		t.Fatalf("Decode = %+v, %v", got, err)
	}
	if _, err := Decode[widgetSpec](Object{"replicas": "three"}); err == nil || !strings.Contains(err.Error(), "kopf.widgetSpec") {
		t.Errorf("a string into an int: err = %v, want one naming the type", err)
	}
}

// TestDecodeParts: DecodeSpec and its siblings decode the request's parts,
// before and after the body's map was built, and leave v alone without a
// part.
func TestDecodeParts(t *testing.T) {
	fresh(t)
	var spec, specAfterBody widgetSpec
	var status struct {
		Phase string `json:"phase"`
	}
	var meta struct {
		Name string `json:"name"`
	}
	var body struct {
		Kind string `json:"kind"`
	}
	var missingErr error
	OnCreate("", "v1", "pods", func(ctx *Context) (any, error) {
		if err := ctx.DecodeSpec(&spec); err != nil {
			return nil, err
		}
		_ = ctx.Body()
		if err := errors.Join(ctx.DecodeSpec(&specAfterBody), ctx.DecodeStatus(&status), ctx.DecodeMeta(&meta), ctx.DecodeBody(&body)); err != nil {
			return nil, err
		}
		var bad struct {
			Size int `json:"size"`
		}
		missingErr = ctx.DecodeSpec(&bad)
		return nil, nil
	}, ID("c"))
	resp := run(t, &recorder{}, bodyRequest("c", `{"kind":"W","metadata":{"name":"w"},"spec":{"size":"L","replicas":2},"status":{"phase":"up"}}`))
	if resp.Outcome.Status != abi.OutcomeSuccess {
		t.Fatal(resp.Outcome)
	}
	if spec.Size != "L" || spec.Replicas != 2 || specAfterBody.Size != "L" || specAfterBody.Replicas != 2 {
		t.Errorf("spec = %+v, after the body %+v", spec, specAfterBody)
	}
	if status.Phase != "up" || meta.Name != "w" || body.Kind != "W" {
		t.Errorf("status %+v meta %+v body %+v", status, meta, body)
	}
	if missingErr == nil || !strings.Contains(missingErr.Error(), "decode the spec") {
		t.Errorf("a string into an int: %v", missingErr)
	}

	fresh(t)
	spec = widgetSpec{Size: "keep"}
	OnCreate("", "v1", "pods", func(ctx *Context) (any, error) { return nil, ctx.DecodeSpec(&spec) }, ID("c"))
	if resp := run(t, &recorder{}, bodyRequest("c", `{"kind":"W"}`)); resp.Outcome.Status != abi.OutcomeSuccess || spec.Size != "keep" {
		t.Errorf("no spec: %+v, spec %+v", resp.Outcome, spec)
	}
}

func TestClientInto(t *testing.T) {
	type cm struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Data map[string]string `json:"data"`
	}
	fresh(t)
	var one cm
	var many []cm
	var decodeErr error
	OnCreate("", "v1", "pods", func(ctx *Context) (any, error) {
		k := ctx.Client("", "v1", "configmaps").Namespace("ns")
		if err := k.GetInto("a", &one); err != nil {
			return nil, err
		}
		if err := k.ListInto(ListOptions{LabelSelector: "x"}, &many); err != nil {
			return nil, err
		}
		var wrong []int
		decodeErr = k.ListInto(ListOptions{}, &wrong)
		return nil, nil
	}, ID("c"))
	host := &recorder{reply: func(_ string, req []byte) []byte {
		if strings.Contains(string(req), `"verb":"get"`) {
			return []byte(`{"body":{"metadata":{"name":"a"},"data":{"k":"v"}}}`)
		}
		return []byte(`{"body":{"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}}`)
	}}
	if resp := run(t, host, abi.Request{Handler: "c"}); resp.Outcome.Status != abi.OutcomeSuccess {
		t.Fatal(resp.Outcome)
	}
	if one.Metadata.Name != "a" || one.Data["k"] != "v" || len(many) != 2 || many[1].Metadata.Name != "b" {
		t.Errorf("get %+v, list %+v", one, many)
	}
	if decodeErr == nil || !strings.Contains(decodeErr.Error(), "list configmaps ns") {
		t.Errorf("list into []int: %v", decodeErr)
	}

	fresh(t)
	var notFound error
	OnCreate("", "v1", "pods", func(ctx *Context) (any, error) {
		notFound = ctx.Client("", "v1", "configmaps").GetInto("a", &one)
		return nil, nil
	}, ID("c"))
	run(t, &recorder{reply: replyWith(abi.KubeResponse{Error: &abi.HostError{Code: 404, Message: "gone"}})}, abi.Request{Handler: "c"})
	if !errors.Is(notFound, ErrNotFound) {
		t.Errorf("GetInto of a missing object: %v", notFound)
	}
}

func TestNumbers(t *testing.T) {
	o := Object{"spec": map[string]any{"replicas": 3.0, "ratio": 0.5, "big": json.Number("9007199254740993"),
		"int": 7, "on": true, "items": []any{1.0}, "name": "x"}}
	tests := []struct {
		path  string
		int   int64
		float float64
	}{
		{"spec.replicas", 3, 3},
		{"spec.ratio", 0, 0.5}, // not a whole number
		{"spec.big", 9007199254740993, 9007199254740992},
		{"spec.int", 7, 7},
		{"spec.name", 0, 0},
		{"spec.missing", 0, 0},
	}
	for _, tt := range tests {
		if got := o.Int(tt.path); got != tt.int {
			t.Errorf("Int(%s) = %d, want %d", tt.path, got, tt.int)
		}
		if got := o.Float(tt.path); got != tt.float {
			t.Errorf("Float(%s) = %g, want %g", tt.path, got, tt.float)
		}
	}
	if !o.Bool("spec.on") || o.Bool("spec.name") || len(o.Slice("spec.items")) != 1 || o.Slice("spec.on") != nil {
		t.Error("Bool or Slice")
	}
	if _, ok := IntOf(1e300); ok {
		t.Error("IntOf(1e300) is out of range")
	}
}

var errCause = errors.New("the cause")

func TestErrorsWrap(t *testing.T) {
	five := 5.0
	api := &APIError{Code: 404, Message: "gone", Call: "get pods x"}
	tests := []struct {
		name string
		err  error
		want abi.Outcome
	}{
		{"Temporary", Temporary(errCause, 5*time.Second), abi.Outcome{Status: abi.OutcomeTemporary, Message: "the cause", Delay: &five}},
		{"message and cause", TemporaryError{Message: "waiting", Err: errCause}, abi.Outcome{Status: abi.OutcomeTemporary, Message: "waiting: the cause"}},
		{"Permanent", Permanent(errCause), abi.Outcome{Status: abi.OutcomePermanent, Message: "the cause"}},
		{"Permanent of an API error", Permanent(api), abi.Outcome{Status: abi.OutcomePermanent, Message: api.Error()}},
		{"admission with a cause", AdmissionError{Code: 422, Err: errCause}, abi.Outcome{Status: abi.OutcomePermanent, Message: "the cause", Code: 422}},
	}
	for _, tt := range tests {
		if got := outcome(tt.err); jsonString(t, got) != jsonString(t, tt.want) {
			t.Errorf("%s: %s, want %s", tt.name, jsonString(t, got), jsonString(t, tt.want))
		}
	}
	for _, err := range []error{Temporary(errCause, 0), Permanent(errCause), AdmissionError{Err: errCause},
		fmt.Errorf("outer: %w", Temporary(errCause, 0))} {
		if !errors.Is(err, errCause) {
			t.Errorf("%T: errors.Is(cause) is false", err)
		}
	}
	var got *APIError
	if !errors.As(Temporary(api, time.Second), &got) || got != api || !errors.Is(Permanent(api), ErrNotFound) {
		t.Error("errors.As/Is do not see the API error through the wrapper")
	}
	var tmp TemporaryError
	if !errors.As(fmt.Errorf("x: %w", Temporary(errCause, time.Second)), &tmp) || tmp.Delay != time.Second {
		t.Error("errors.As finds the TemporaryError")
	}
}

func TestResourceRegisters(t *testing.T) {
	r := fresh(t)
	res := Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples"}
	res.OnCreate(createFn)
	res.OnUpdate(createFn, ID("upd"))
	res.OnField(createFn, Field("spec.x"))
	res.Timer(createFn, ID("tick"), Interval(time.Second))
	res.Daemon(watchFn)
	res.OnValidate(checkFn)
	res.OnMutate(func(*AdmissionContext) error { return nil }, ID("mut"))
	res.Permit("get", "patch")
	m, err := r.manifest()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range m.Handlers {
		if *h.Resource != (abi.ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}) {
			t.Errorf("%s: resource %+v", h.ID, h.Resource)
		}
		ids = append(ids, h.ID+":"+string(h.Kind))
	}
	want := "createFn:create upd:update createFn/spec.x:field tick:timer watchFn:daemon checkFn:validate mut:validate"
	want = strings.Replace(want, "mut:validate", "mut:mutate", 1)
	if strings.Join(ids, " ") != want {
		t.Errorf("handlers %s\nwant     %s", strings.Join(ids, " "), want)
	}
	if p := m.Permissions.Kubernetes; len(p) != 1 || p[0].Group != "kopf.dev" || p[0].Resource != "kopfexamples" {
		t.Errorf("permissions %+v", p)
	}
}

func watchFn(ctx *DaemonContext) (any, error) {
	ctx.SleepUntilStopped(time.Second)
	return map[string]any{"stopped": ctx.StopReason()}, nil
}

func checkFn(ctx *AdmissionContext) error {
	if ctx.Spec().Int("replicas") > 3 {
		return AdmissionError{Message: "too many", Code: 422}
	}
	ctx.Warn(ctx.Operation() + " by " + ctx.UserInfo().String("username"))
	return nil
}

// TestKindSpecificHandlers: the package functions take both handler
// types, with the author's function as the default id, and the typed
// contexts see the call's kwargs.
func TestKindSpecificHandlers(t *testing.T) {
	fresh(t)
	OnValidate("", "v1", "pods", checkFn)
	OnValidate("", "v1", "pods", createFn, ID("old-style"))
	Daemon("", "v1", "pods", watchFn)
	Daemon("", "v1", "pods", createFn, ID("old-daemon"))
	m, err := registered.manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Handlers[0].ID != "checkFn" || m.Handlers[2].ID != "watchFn" {
		t.Errorf("ids %s, %s", m.Handlers[0].ID, m.Handlers[2].ID)
	}
	review := func(replicas int) abi.Request {
		return abi.Request{Handler: "checkFn", Kind: abi.KindValidate, Body: json.RawMessage(fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)),
			Admission: &abi.AdmissionRequest{Operation: "CREATE", UserInfo: json.RawMessage(`{"username":"ann"}`)}}
	}
	resp := run(t, &recorder{}, review(2))
	if !resp.Admission.Allowed || len(resp.Admission.Warnings) != 1 || resp.Admission.Warnings[0] != "CREATE by ann" {
		t.Errorf("allowed review: %+v", resp.Admission)
	}
	if resp := run(t, &recorder{}, review(5)); resp.Admission.Allowed || resp.Admission.Code != 422 || resp.Admission.Message != "too many" {
		t.Errorf("denied review: %+v", resp.Admission)
	}
	host := &recorder{reply: replyWith(abi.SleepResponse{Stopped: true, Reason: "deleted"})}
	resp = run(t, host, abi.Request{Handler: "watchFn", Kind: abi.KindDaemon})
	if string(resp.Result) != `{"stopped":"deleted"}` || host.calls[0].fn != abi.HostSleepUntilStopped {
		t.Errorf("daemon: result %s, calls %+v", resp.Result, host.calls)
	}

	fresh(t)
	var nilCheck func(*AdmissionContext) error
	OnValidate("", "v1", "pods", nilCheck)
	if _, err := registered.manifest(); err == nil || !strings.Contains(err.Error(), "a validate handler has no function") {
		t.Errorf("a nil typed handler: %v", err)
	}
}

func TestContextDeadline(t *testing.T) {
	fresh(t)
	type seen struct {
		deadline time.Time
		ok       bool
		err      error
	}
	var with, without, after seen
	var kept *Context
	OnCreate("", "v1", "pods", func(ctx *Context) (any, error) {
		with.deadline, with.ok = ctx.Context().Deadline()
		kept = ctx
		return nil, nil
	}, ID("timed"), Timeout(time.Minute))
	OnCreate("", "v1", "pods", func(ctx *Context) (any, error) {
		without.deadline, without.ok = ctx.Context().Deadline()
		return nil, ctx.Context().Err()
	}, ID("untimed"))
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	run(t, &recorder{}, abi.Request{Handler: "timed", Started: started})
	after.err = kept.Context().Err()
	if !with.ok || !with.deadline.Equal(started.Add(time.Minute)) {
		t.Errorf("with a timeout: deadline %v %v", with.deadline, with.ok)
	}
	if after.err == nil {
		t.Error("the context outlives the call")
	}
	if resp := run(t, &recorder{}, abi.Request{Handler: "untimed", Started: started}); without.ok || resp.Outcome.Status != abi.OutcomeSuccess {
		t.Errorf("without a timeout: deadline %v, outcome %+v", without.ok, resp.Outcome)
	}
	// The host's limit for the call counts too, whichever is sooner.
	hostLimit := started.Add(30 * time.Second)
	run(t, &recorder{}, abi.Request{Handler: "timed", Started: started, Deadline: hostLimit})
	if !with.ok || !with.deadline.Equal(hostLimit) {
		t.Errorf("a host limit before the timeout: deadline %v %v, want %v", with.deadline, with.ok, hostLimit)
	}
	run(t, &recorder{}, abi.Request{Handler: "timed", Started: started, Deadline: started.Add(time.Hour)})
	if !with.deadline.Equal(started.Add(time.Minute)) {
		t.Errorf("a host limit after the timeout: deadline %v, want the timeout's", with.deadline)
	}
	run(t, &recorder{}, abi.Request{Handler: "untimed", Started: started, Deadline: hostLimit})
	if !without.ok || !without.deadline.Equal(hostLimit) {
		t.Errorf("without a timeout, with a host limit: deadline %v %v", without.deadline, without.ok)
	}
}

func TestPermitDidYouMean(t *testing.T) {
	tests := []struct {
		name  string
		group string
		res   string
		want  string // "" when fine
	}{
		{"plural", "", "pods", ""},
		{"subresource", "", "pods/status", ""},
		{"wildcard", "", "*", ""},
		{"singular", "", "pod", `did you mean "pods"?`},
		{"kind", "", "ConfigMap", `did you mean "configmaps"?`},
		{"typo", "", "configmpas", `did you mean "configmaps"?`},
		{"singular with subresource", "", "pod/log", `did you mean "pods/log"?`},
		{"wrong group", "", "deployments", `did you mean Permit("apps", "deployments", ...)?`},
		{"kind in the wrong group", "", "Deployment", `did you mean Permit("apps", "deployments", ...)?`},
		{"own resource, singular", "kopf.dev", "kopfexample", `did you mean "kopfexamples"?`},
		{"own resource, typo", "kopf.dev", "kopfexmaples", ""}, // distance 2 in a custom group: not told
		{"own resource, one letter", "kopf.dev", "kopfexamplez", `did you mean "kopfexamples"?`},
		{"own resource", "kopf.dev", "kopfexamples/status", ""},
		{"another custom resource", "example.com", "nonexistents", ""},
		{"unknown core resource far from any", "", "frobnicators", ""},
	}
	for _, tt := range tests {
		r := fresh(t)
		OnCreate("kopf.dev", "v1", "kopfexamples", createFn)
		Permit(tt.group, tt.res, "get")
		_, err := r.manifest()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
