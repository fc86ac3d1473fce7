package admission_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/engines/admission"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt"
)

func validate(id string, opts abi.Options, filters abi.Filters) abi.HandlerSpec {
	return abi.HandlerSpec{ID: id, Kind: abi.KindValidate, Resource: sel, Options: opts, Filters: filters}
}

func mutate(id string, opts abi.Options) abi.HandlerSpec {
	return abi.HandlerSpec{ID: id, Kind: abi.KindMutate, Resource: sel, Options: opts}
}

// A Service's path has DNS-1123 segments (the API server refuses others):
// the handler's Service path is lower case with "_" and other characters
// as "-", and the server answers it as the handler's own path.
func TestServicePath(t *testing.T) {
	for _, tt := range []struct{ module, id, want string }{
		{"m", "check", "/m/check"},
		{"admission", "add_label", "/admission/add-label"},
		{"Mod_1", "parent/Child_fn", "/mod-1/parent/child-fn"},
		{"m", "fn/spec.field", "/m/fn/spec.field"},
		{"m", "_private_", "/m/private"},
		{"m", "odd name?#", "/m/odd-name"},
		{"m", "___", "/m/x"},
	} {
		if got := admission.ServicePath(tt.module, tt.id); got != tt.want {
			t.Errorf("ServicePath(%s, %q) = %q, want %q", tt.module, tt.id, got, tt.want)
		}
	}
	f := newFixture(t, []abi.HandlerSpec{validate("check_field", abi.Options{}, abi.Filters{}), validate("other", abi.Options{}, abi.Filters{})}, defaults())
	f.mod.respond["check_field"] = func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error) {
		return allow("by check_field"), nil
	}
	for _, path := range []string{"/m/check_field", "/m/check-field"} {
		code, resp, body := f.post(t, path, reviewOf(admissionv1.Create, "", kex(nil, map[string]any{}), nil, false))
		if code != 200 || !resp.Allowed || !slices.Equal(resp.Warnings, []string{"by check_field"}) {
			t.Errorf("%s: %d %+v %s", path, code, resp, body)
		}
	}
	if code, _, _ := f.post(t, "/m/check-fields", reviewOf(admissionv1.Create, "", kex(nil, map[string]any{}), nil, false)); code != http.StatusNotFound {
		t.Errorf("an unknown path: %d, want 404", code)
	}
}

// A validating handler allows or denies with its code and message; the
// handler sees the request's operation, dry run, user, old object and
// subresource.
func TestValidate(t *testing.T) {
	f := newFixture(t, []abi.HandlerSpec{validate("check", abi.Options{}, abi.Filters{})}, defaults())
	f.mod.respond["check"] = func(_ context.Context, req *abi.Request, _ wasmrt.Host) (*abi.Response, error) {
		var body map[string]any
		_ = json.Unmarshal(req.Body, &body)
		if body["spec"].(map[string]any)["size"] == "huge" {
			return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomePermanent, Message: "too big", Code: 422},
				Admission: &abi.AdmissionResponse{Allowed: false, Code: 422, Message: "too big", Warnings: []string{"w1"}}}, nil
		}
		return allow("looks fine"), nil
	}
	code, resp, _ := f.post(t, "/m/check", reviewOf(admissionv1.Update, "", kex(nil, map[string]any{"size": "small"}),
		kex(nil, map[string]any{"size": "tiny"}), true))
	if code != 200 || !resp.Allowed || !slices.Equal(resp.Warnings, []string{"looks fine"}) || resp.Patch != nil {
		t.Fatalf("allowed review: code %d, %+v", code, resp)
	}
	reqs := f.mod.requests("check")
	if len(reqs) != 1 {
		t.Fatalf("%d calls", len(reqs))
	}
	a := reqs[0].Admission
	if a == nil || a.Operation != "UPDATE" || !a.DryRun || a.UID != "rev-1" || !strings.Contains(string(a.UserInfo), `"alice"`) {
		t.Errorf("admission request = %+v", a)
	}
	if !strings.Contains(string(reqs[0].Old), `"tiny"`) || !strings.Contains(string(reqs[0].New), `"small"`) || len(reqs[0].Diff) == 0 {
		t.Errorf("old/new/diff = %s / %s / %v", reqs[0].Old, reqs[0].New, reqs[0].Diff)
	}
	if reqs[0].Kind != abi.KindValidate || reqs[0].Name != "ex" || reqs[0].Namespace != "ns" {
		t.Errorf("request = %+v", reqs[0])
	}

	_, resp, _ = f.post(t, "/m/check", reviewOf(admissionv1.Create, "", kex(nil, map[string]any{"size": "huge"}), nil, false))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != 422 || resp.Result.Message != "too big" || !slices.Equal(resp.Warnings, []string{"w1"}) {
		t.Fatalf("denied review: %+v %+v", resp, resp.Result)
	}
}

// Errors other than an admission error deny with 500, and of several
// failures the admission error is reported (Kopf's priority).
func TestDenialPriority(t *testing.T) {
	f := newFixture(t, []abi.HandlerSpec{
		validate("temp", abi.Options{}, abi.Filters{}),
		validate("crash", abi.Options{}, abi.Filters{}),
		validate("adm", abi.Options{}, abi.Filters{}),
	}, defaults())
	f.mod.respond["temp"] = func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error) {
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeTemporary, Message: "later"}}, nil
	}
	f.mod.respond["crash"] = func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error) {
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomeError, Message: "boom"}}, nil
	}
	f.mod.respond["adm"] = func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error) {
		return &abi.Response{Outcome: abi.Outcome{Status: abi.OutcomePermanent, Message: "no way", Code: 403}}, nil
	}
	body := reviewOf(admissionv1.Create, "", kex(nil, nil), nil, false)
	_, resp, _ := f.post(t, admission.PathValidate, body)
	if resp.Allowed || resp.Result.Code != 403 || resp.Result.Message != "no way" {
		t.Fatalf("all three: %+v", resp.Result)
	}
	_, resp, _ = f.post(t, "/m/crash", body)
	if resp.Allowed || resp.Result.Code != 500 || !strings.Contains(resp.Result.Message, "boom") {
		t.Fatalf("an arbitrary error: %+v", resp.Result)
	}
	_, resp, _ = f.post(t, "/m/temp", body)
	if resp.Allowed || resp.Result.Code != 500 || !strings.Contains(resp.Result.Message, "later") {
		t.Fatalf("a temporary error: %+v", resp.Result)
	}
}

// Selection: operations, subresource, label filters; mutating handlers
// skip DELETE unless they list it.
func TestSelection(t *testing.T) {
	f := newFixture(t, []abi.HandlerSpec{
		validate("on-create", abi.Options{Operations: []string{"CREATE"}}, abi.Filters{}),
		validate("on-status", abi.Options{Subresource: "status"}, abi.Filters{}),
		validate("on-all-subs", abi.Options{Subresource: "*"}, abi.Filters{}),
		validate("labelled", abi.Options{}, abi.Filters{Labels: map[string]abi.MetaFilter{"team": {Present: true}}}),
		mutate("mut", abi.Options{}),
		mutate("mut-delete", abi.Options{Operations: []string{"DELETE"}}),
	}, defaults())
	called := func() []string {
		var out []string
		for _, id := range []string{"on-create", "on-status", "on-all-subs", "labelled", "mut", "mut-delete"} {
			if n := len(f.mod.requests(id)); n > 0 {
				out = append(out, id)
			}
		}
		f.mod.mu.Lock()
		f.mod.reqs = nil
		f.mod.mu.Unlock()
		return out
	}
	for _, tc := range []struct {
		name, path string
		body       []byte
		want       []string
	}{
		{"update of the main resource", admission.PathValidate, reviewOf(admissionv1.Update, "", kex(nil, nil), kex(nil, nil), false), []string{"on-all-subs"}},
		{"create", admission.PathValidate, reviewOf(admissionv1.Create, "", kex(nil, nil), nil, false), []string{"on-create", "on-all-subs"}},
		{"status update", admission.PathValidate, reviewOf(admissionv1.Update, "status", kex(nil, nil), kex(nil, nil), false), []string{"on-status", "on-all-subs"}},
		{"labelled", admission.PathValidate, reviewOf(admissionv1.Update, "", kex(map[string]any{"team": "a"}, nil), nil, false), []string{"on-all-subs", "labelled"}},
		{"labelled on delete: the old object", admission.PathValidate, reviewOf(admissionv1.Delete, "", nil, kex(map[string]any{"team": "a"}, nil), false), []string{"on-all-subs", "labelled"}},
		{"mutators on update", admission.PathMutate, reviewOf(admissionv1.Update, "", kex(nil, nil), kex(nil, nil), false), []string{"mut"}},
		{"mutators on delete", admission.PathMutate, reviewOf(admissionv1.Delete, "", nil, kex(nil, nil), false), []string{"mut-delete"}},
		{"one handler's path", "/m/on-create", reviewOf(admissionv1.Create, "", kex(nil, nil), nil, false), []string{"on-create"}},
		{"one handler's path, not selected", "/m/on-create", reviewOf(admissionv1.Update, "", kex(nil, nil), nil, false), nil},
	} {
		code, resp, _ := f.post(t, tc.path, tc.body)
		if code != 200 || !resp.Allowed {
			t.Errorf("%s: code %d %+v", tc.name, code, resp)
		}
		if got := called(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: called %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The mutating handlers' patches are applied in order and returned as one
// JSONPatch; a validating handler's patch is ignored.
func TestMutationsMerged(t *testing.T) {
	f := newFixture(t, []abi.HandlerSpec{
		mutate("labels", abi.Options{}),
		mutate("spec", abi.Options{}),
		validate("sneaky", abi.Options{}, abi.Filters{}),
	}, defaults())
	f.mod.respond["labels"] = func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error) {
		r := allow()
		r.Patch = &abi.Patch{Merge: json.RawMessage(`{"metadata":{"labels":{"mutated":"yes"}}}`)}
		return r, nil
	}
	f.mod.respond["spec"] = func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error) {
		r := allow("defaulted")
		r.Patch = &abi.Patch{Merge: json.RawMessage(`{"spec":{"b":2}}`),
			JSON: []abi.JSONPatchOp{{Op: "replace", Path: "/metadata/labels/mutated", Value: json.RawMessage(`"twice"`)}}}
		return r, nil
	}
	f.mod.respond["sneaky"] = func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error) {
		r := allow()
		r.Patch = &abi.Patch{Merge: json.RawMessage(`{"spec":{"hacked":true}}`)}
		return r, nil
	}
	obj := kex(map[string]any{"keep": "me"}, map[string]any{"a": 1})
	_, resp, _ := f.post(t, admission.PathMutate, reviewOf(admissionv1.Create, "", obj, nil, false))
	if !resp.Allowed || resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch || !slices.Equal(resp.Warnings, []string{"defaulted"}) {
		t.Fatalf("response %+v", resp)
	}
	got := applyJSONPatch(t, obj, resp.Patch)
	labels := got["metadata"].(map[string]any)["labels"].(map[string]any)
	spec := got["spec"].(map[string]any)
	if labels["mutated"] != "twice" || labels["keep"] != "me" || spec["a"] != float64(1) || spec["b"] != float64(2) {
		t.Errorf("patched object = %v (patch %s)", got, resp.Patch)
	}
	// The validating handler's patch is ignored.
	_, resp, _ = f.post(t, "/m/sneaky", reviewOf(admissionv1.Create, "", obj, nil, false))
	if !resp.Allowed || resp.Patch != nil {
		t.Errorf("a validating handler mutated: %s", resp.Patch)
	}
}

// A handler that runs past the review's time is answered by its failure
// policy before the API server's timeout: denied for Fail, allowed with a
// warning for Ignore.
func TestLoopingHandlerAnsweredInTime(t *testing.T) {
	s := defaults()
	s.TimeoutMargin = 300 * time.Millisecond
	f := newFixture(t, []abi.HandlerSpec{
		validate("loops", abi.Options{}, abi.Filters{}),
		validate("loops-ignored", abi.Options{IgnoreFailures: true}, abi.Filters{}),
	}, s)
	loop := func(ctx context.Context, _ *abi.Request, _ wasmrt.Host) (*abi.Response, error) {
		<-ctx.Done() // as the runtime does: the call ends with its context
		return nil, ctx.Err()
	}
	f.mod.respond["loops"], f.mod.respond["loops-ignored"] = loop, loop
	body := reviewOf(admissionv1.Create, "", kex(nil, nil), nil, false)
	for path, allowed := range map[string]bool{"/m/loops?timeout=1s": false, "/m/loops-ignored?timeout=1s": true} {
		start := time.Now()
		_, resp, _ := f.post(t, path, body)
		took := time.Since(start)
		if took > time.Second || took < 600*time.Millisecond {
			t.Errorf("%s answered after %s; want within the 1s timeout, after the 0.7s budget", path, took)
		}
		if resp.Allowed != allowed {
			t.Errorf("%s: allowed = %v, want %v (%+v)", path, resp.Allowed, allowed, resp.Result)
		}
		if allowed && (len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "did not answer in time")) {
			t.Errorf("%s: warnings %q", path, resp.Warnings)
		}
		if !allowed && (resp.Result.Code != 500 || !strings.Contains(resp.Result.Message, "did not answer in time")) {
			t.Errorf("%s: status %+v", path, resp.Result)
		}
	}
}

// During a dry run the Kubernetes writes of a handler without side effects
// are refused by the host; reads pass.
func TestDryRunRefusesWrites(t *testing.T) {
	f := newFixture(t, []abi.HandlerSpec{
		validate("writer", abi.Options{}, abi.Filters{}),
		validate("declared", abi.Options{SideEffects: true}, abi.Filters{}),
	}, defaults())
	codes := map[string]int{}
	writer := func(ctx context.Context, req *abi.Request, host wasmrt.Host) (*abi.Response, error) {
		resp := host.Kube(ctx, abi.KubeRequest{Verb: abi.VerbCreate, Version: "v1", Resource: "configmaps", Namespace: "ns"})
		codes[req.Handler] = 0
		if resp.Error != nil {
			codes[req.Handler] = resp.Error.Code
		}
		return allow(), nil
	}
	f.mod.respond["writer"], f.mod.respond["declared"] = writer, writer
	f.post(t, "/m/writer", reviewOf(admissionv1.Create, "", kex(nil, nil), nil, true))
	f.post(t, "/m/declared", reviewOf(admissionv1.Create, "", kex(nil, nil), nil, true))
	if codes["writer"] != http.StatusForbidden {
		t.Errorf("a write during a dry run: code %d, want 403", codes["writer"])
	}
	if codes["declared"] == http.StatusForbidden {
		t.Errorf("a handler with side effects was refused during a dry run")
	}
}

// Requests that are not AdmissionReviews get a 4xx with a reason.
func TestProtocolErrors(t *testing.T) {
	s := defaults()
	s.MaxRequestBytes = 4096
	f := newFixture(t, []abi.HandlerSpec{validate("check", abi.Options{}, abi.Filters{})}, s)
	good := reviewOf(admissionv1.Create, "", kex(nil, nil), nil, false)
	other := strings.Replace(string(good), `"resource":"kopfexamples"`, `"resource":"pods"`, 1)
	for _, tc := range []struct {
		name, path string
		body       string
		code       int
		reason     string
	}{
		{"not JSON", "/m/check", "{nope", 400, "not an AdmissionReview"},
		{"another kind", "/m/check", `{"apiVersion":"v1","kind":"Pod"}`, 400, "not an AdmissionReview"},
		{"no request", "/m/check", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, 400, "no request"},
		{"no uid", "/m/check", strings.Replace(string(good), `"uid":"rev-1"`, `"uid":""`, 1), 400, "no uid"},
		{"too large", "/m/check", `{"x":"` + strings.Repeat("a", 5000) + `"}`, 413, "larger than 4096"},
		{"unknown handler", "/m/nope", string(good), 404, "not loaded"},
		{"unknown module", "/other/check", string(good), 404, "not loaded"},
		{"another resource", "/m/check", other, 404, "serves kopfexamples.v1.kopf.dev, not pods.v1"},
		{"no handler in the path", "/m", string(good), 404, "paths are"},
	} {
		code, _, text := f.post(t, tc.path, []byte(tc.body))
		if code != tc.code || !strings.Contains(text, tc.reason) {
			t.Errorf("%s: %d %q, want %d with %q", tc.name, code, text, tc.code, tc.reason)
		}
	}
	r, _ := http.NewRequest(http.MethodGet, "/m/check", nil)
	w := &recorder{header: http.Header{}}
	f.srv.ServeHTTP(w, r)
	if w.code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", w.code)
	}
}

type recorder struct {
	header http.Header
	code   int
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *recorder) WriteHeader(code int)        { r.code = code }

// Handlers get the object's memo on UPDATE and DELETE, none on CREATE.
func TestMemo(t *testing.T) {
	f := newFixture(t, []abi.HandlerSpec{validate("check", abi.Options{}, abi.Filters{})}, defaults())
	var asked []string
	srv := admission.NewServer(admission.Options{
		Exec: f.exec, Registry: func() *registry.Registry { return f.reg }, Settings: defaults(),
		Memo: func(ref abi.ResourceRef, ns, name string) json.RawMessage {
			asked = append(asked, ref.Plural+"/"+ns+"/"+name)
			return json.RawMessage(`{"seen":1}`)
		},
	})
	f.srv = srv
	f.post(t, "/m/check", reviewOf(admissionv1.Create, "", kex(nil, nil), nil, false))
	f.post(t, "/m/check", reviewOf(admissionv1.Update, "", kex(nil, nil), kex(nil, nil), false))
	reqs := f.mod.requests("check")
	if len(reqs) != 2 || reqs[0].Memo != nil || string(reqs[1].Memo) != `{"seen":1}` {
		t.Fatalf("memos %q", []string{string(reqs[0].Memo), string(reqs[1].Memo)})
	}
	if len(asked) != 1 || asked[0] != "kopfexamples/ns/ex" {
		t.Errorf("memo asked for %q", asked)
	}
}

// A callback filter sees the review: here, only dry runs pass.
func TestWhenSeesTheReview(t *testing.T) {
	f := newFixture(t, []abi.HandlerSpec{validate("on-dry-runs", abi.Options{}, abi.Filters{When: true})}, defaults())
	f.mod.when = func(req *abi.Request) bool { return req.Admission != nil && req.Admission.DryRun }
	f.post(t, "/m/on-dry-runs", reviewOf(admissionv1.Create, "", kex(nil, nil), nil, false))
	if n := len(f.mod.requests("on-dry-runs")); n != 0 {
		t.Errorf("called %d times outside a dry run", n)
	}
	f.post(t, "/m/on-dry-runs", reviewOf(admissionv1.Create, "", kex(nil, nil), nil, true))
	if n := len(f.mod.requests("on-dry-runs")); n != 1 {
		t.Errorf("called %d times in a dry run, want once", n)
	}
}

// A handler whose call fails (a trap) is answered by its failure policy.
func TestTrapAnsweredByFailurePolicy(t *testing.T) {
	f := newFixture(t, []abi.HandlerSpec{
		validate("traps", abi.Options{}, abi.Filters{}),
		validate("traps-ignored", abi.Options{IgnoreFailures: true}, abi.Filters{}),
	}, defaults())
	trap := func(context.Context, *abi.Request, wasmrt.Host) (*abi.Response, error) {
		return nil, &wasmrt.CallError{Module: "m", Kind: wasmrt.KindTrap, Err: errors.New("unreachable")}
	}
	f.mod.respond["traps"], f.mod.respond["traps-ignored"] = trap, trap
	body := reviewOf(admissionv1.Create, "", kex(nil, nil), nil, false)
	_, resp, _ := f.post(t, "/m/traps", body)
	if resp.Allowed || resp.Result.Code != 500 || !strings.Contains(resp.Result.Message, "unreachable") {
		t.Errorf("a trap with failure policy Fail: %+v", resp.Result)
	}
	_, resp, _ = f.post(t, "/m/traps-ignored", body)
	if !resp.Allowed || len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "unreachable") {
		t.Errorf("a trap with failure policy Ignore: %+v", resp)
	}
}
