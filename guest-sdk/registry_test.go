package kopf

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func createFn(*Context) (any, error) { return nil, nil }

type operator struct{}

func (operator) reconcile(*Context) (any, error) { return nil, nil }

func TestDefaultIDs(t *testing.T) {
	closure := func(*Context) (any, error) { return nil, nil }
	tests := []struct {
		name     string
		register func()
		want     string
	}{
		{"function name without package", func() { OnCreate("", "v1", "pods", createFn) }, "createFn"},
		{"explicit id", func() { OnCreate("", "v1", "pods", createFn, ID("create_fn")) }, "create_fn"},
		{"field suffix", func() { OnField("", "v1", "pods", createFn, Field("spec.x")) }, "createFn/spec.x"},
		{"field suffix after explicit id", func() { OnUpdate("", "v1", "pods", createFn, ID("u"), Field("spec.x")) }, "u/spec.x"},
		{"index takes no suffix", func() { Index("", "v1", "pods", createFn, Field("spec.x")) }, "createFn"},
		{"closure", func() { OnCreate("", "v1", "pods", closure) }, "TestDefaultIDs.func1"},
		{"method value", func() { OnCreate("", "v1", "pods", operator{}.reconcile) }, "operator.reconcile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fresh(t)
			tt.register()
			m, err := r.manifest()
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Handlers[0].ID; got != tt.want {
				t.Errorf("id = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestShortName(t *testing.T) {
	tests := map[string]string{
		"main.createFn":                         "createFn",
		"github.com/a/b/handlers.createFn":      "createFn",
		"github.com/a/b/handlers.init.func1":    "init.func1",
		"github.com/a/b/handlers.(*T).Run-fm":   "T.Run",
		"github.com/a/b/handlers.generic[...]":  "generic",
		"example.com/x.y/handlers.delete_child": "delete_child",
	}
	for full, want := range tests {
		if got := shortName(full); got != want {
			t.Errorf("shortName(%q) = %q, want %q", full, got, want)
		}
	}
}

func TestRegistrationMistakes(t *testing.T) {
	tests := []struct {
		name     string
		register func()
		want     string
	}{
		{"option of another kind", func() { OnCreate("", "v1", "pods", createFn, Interval(time.Second)) },
			"option Interval does not apply to create handlers"},
		{"field handler without field", func() { OnField("", "v1", "pods", createFn) },
			"is a field handler without a field"},
		{"bad label filter", func() { OnCreate("", "v1", "pods", createFn, Labels(map[string]any{"a": 1})) },
			`the filter of "a" is int`},
		{"nil value", func() { OnCreate("", "v1", "pods", createFn, Field("spec.x"), Value(nil)) },
			"use kopf.Absent"},
		{"value without field", func() { OnUpdate("", "v1", "pods", createFn, New("x")) },
			"filters on value/old/new without a field"},
		{"one id for two functions", func() {
			OnCreate("", "v1", "pods", createFn)
			OnUpdate("", "v1", "pods", operator{}.reconcile, ID("createFn"))
		},
			`handler "createFn" is declared twice, for createFn and for operator.reconcile`},
		{"one function twice as one kind", func() { OnCreate("", "v1", "pods", createFn); OnCreate("", "v1", "pods", createFn) },
			`handler "createFn" is declared twice as a create handler`},
		{"one function as a daemon and a create handler", func() { OnCreate("", "v1", "pods", createFn); Daemon("", "v1", "pods", createFn) },
			`handler "createFn" is declared twice (only create, update, delete, resume and field handlers share an id)`},
		{"nil function", func() { OnCreate("", "v1", "pods", nil) }, "a create handler has no function"},
		{"empty operations", func() { OnValidate("", "v1", "pods", createFn, Operations()) }, "no operations"},
		{"empty versions", func() { OnConvert("kopf.dev", "v1", "widgets", createFn, Versions()) }, "no versions"},
		{"versions of a validator", func() { OnValidate("kopf.dev", "v1", "widgets", createFn, Versions("v1")) },
			"option Versions does not apply to validate handlers"},
		{"qualified version", func() { OnConvert("kopf.dev", "v1", "widgets", createFn, Versions("kopf.dev/v1")) },
			`declares the version "kopf.dev/v1"`},
		{"unknown verb", func() { OnStartup(createFn); Permit("", "pods", "steal") }, `unknown verb "steal"`},
		{"no resource", func() { OnCreate("", "v1", "", createFn) }, "has no resource"},
		{"events take no error options", func() { OnEvent("", "v1", "pods", createFn, Retries(3)) },
			"option Retries does not apply to event handlers"},
		{"named by the handler's id, not the function", func() {
			OnCreate("", "v1", "pods", func(*Context) (any, error) { return nil, nil }, Interval(time.Second), ID("make-pod"))
		}, "option Interval does not apply to create handlers (handler make-pod)"},
		{"a bad option named by the field handler's id", func() {
			OnField("", "v1", "pods", createFn, Field("spec.x"), ID("watch"), Labels(map[string]any{"a": 1}))
		}, "option Labels of handler watch/spec.x: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := fresh(t)
			tt.register()
			_, err := r.manifest()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("manifest error = %v, want it to mention %q", err, tt.want)
			}
			if _, ok := err.(*abi.ManifestError); !ok {
				t.Errorf("error is %T, want *abi.ManifestError", err)
			}
			if _, err := r.manifestJSON(); err == nil {
				t.Error("the manifest export succeeds despite the mistake")
			}
		})
	}
}

func TestOptionsReachTheManifest(t *testing.T) {
	r := fresh(t)
	Daemon("apps", "v1", "deployments", createFn, CancellationBackoff(2*time.Second),
		CancellationPolling(500*time.Millisecond), Field("spec.replicas"), Value(3))
	OnMutate("", "v1", "pods", createFn, ID("mutate"), Subresource("*"), Persistent(), SideEffects(), IgnoreFailures())
	OnDelete("", "v1", "pods", createFn, ID("del"), Optional())
	OnConvert("kopf.dev", "v1", "widgets", createFn, ID("conv"), Versions("v1alpha1", "v1"))
	OnResume("", "v1", "pods", createFn, ID("res"), Deleted(), Old(Absent))
	m, err := r.manifest()
	if err == nil {
		t.Fatal("Old on a resume handler was accepted")
	}
	r.problems = nil
	m, err = r.manifest()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`{"id":"createFn/spec.replicas","kind":"daemon","resource":{"group":"apps","version":"v1","name":"deployments"},"filters":{"field":"spec.replicas","value":{"value":3}},"options":{"cancellationBackoff":2,"cancellationPolling":0.5}}`,
		`{"id":"mutate","kind":"mutate","resource":{"version":"v1","name":"pods"},"filters":{},"options":{"subresource":"*","persistent":true,"sideEffects":true,"ignoreFailures":true}}`,
		`{"id":"del","kind":"delete","resource":{"version":"v1","name":"pods"},"filters":{},"options":{"optional":true}}`,
		`{"id":"conv","kind":"convert","resource":{"group":"kopf.dev","version":"v1","name":"widgets"},"filters":{},"options":{"versions":["v1alpha1","v1"]}}`,
		`{"id":"res","kind":"resume","resource":{"version":"v1","name":"pods"},"filters":{},"options":{"deleted":true}}`,
	}
	for i, w := range want {
		if got := jsonString(t, m.Handlers[i]); got != w {
			t.Errorf("handler %d:\n got %s\nwant %s", i, got, w)
		}
	}
}

func TestDefaultModuleName(t *testing.T) {
	r := fresh(t)
	r.module = abi.ModuleInfo{}
	OnStartup(createFn)
	m, err := r.manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Module.Name != "guest-sdk" {
		t.Errorf("default module name = %q, want the main package's last path element", m.Module.Name)
	}
}

// One function under several changing kinds (Kopf's @kopf.on.resume with
// @kopf.on.create) is one id in the manifest, once per kind; each entry
// keeps its own filters, and the request's kind picks the entry.
func TestOneFunctionUnderSeveralKinds(t *testing.T) {
	r := fresh(t)
	var reasons []Reason
	fn := func(ctx *Context) (any, error) {
		reasons = append(reasons, ctx.Reason())
		return string(ctx.Reason()), nil
	}
	OnResume("", "v1", "pods", fn, ID("reconcile"), When(func(*Context) bool { return false }))
	OnCreate("", "v1", "pods", fn, ID("reconcile"))
	OnUpdate("", "v1", "pods", fn, ID("reconcile"), Labels(map[string]any{"app": func(v any, _ *Context) bool { return v == "web" }}))
	m, err := r.manifest()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range m.Handlers {
		got = append(got, fmt.Sprintf("%s %s when=%v", h.ID, h.Kind, h.Filters.When))
	}
	if want := "[reconcile resume when=true reconcile create when=false reconcile update when=true]"; fmt.Sprint(got) != want {
		t.Errorf("manifest handlers = %v, want %s", got, want)
	}
	body := json.RawMessage(`{"metadata":{"labels":{"app":"web"}}}`)
	for _, tt := range []struct {
		kind abi.HandlerKind
		want bool
	}{{abi.KindResume, false}, {abi.KindUpdate, true}, {abi.KindCreate, true}} {
		resp := run(t, &recorder{}, abi.Request{Call: abi.CallWhen, Handler: "reconcile", Kind: tt.kind, Body: body})
		if resp.Matched == nil || *resp.Matched != tt.want {
			t.Errorf("when of the %s entry = %v, want %v", tt.kind, resp.Matched, tt.want)
		}
	}
	resp := run(t, &recorder{}, abi.Request{Handler: "reconcile", Kind: abi.KindUpdate, Reason: abi.ReasonUpdate, Body: body})
	if resp.Outcome.Status != abi.OutcomeSuccess || string(resp.Result) != `"update"` || fmt.Sprint(reasons) != "[update]" {
		t.Errorf("the update entry's call: %+v, reasons %v", resp, reasons)
	}
}

// A callable initial delay (Kopf's initial_delay=fn) is marked in the
// manifest; the host's "initialDelay" call runs it and gets the seconds.
func TestInitialDelayFunc(t *testing.T) {
	r := fresh(t)
	Timer("", "v1", "pods", createFn, ID("later"), Interval(time.Minute),
		InitialDelayFunc(func(ctx *Context) time.Duration {
			d, _ := ctx.Spec().Get("delay")
			f, _ := d.(float64)
			return time.Duration(f * float64(time.Second))
		}))
	Daemon("", "v1", "pods", createFn, ID("panics"), InitialDelayFunc(func(*Context) time.Duration { panic("no") }))
	OnCreate("", "v1", "pods", createFn, ID("wrong"), InitialDelayFunc(func(*Context) time.Duration { return 0 }))
	_, err := r.manifest()
	if err == nil || !strings.Contains(err.Error(), "option InitialDelayFunc does not apply to create handlers") {
		t.Fatalf("manifest error = %v", err)
	}
	r.problems = nil
	r.handlers = r.handlers[:2]
	m, err := r.manifest()
	if err != nil {
		t.Fatal(err)
	}
	if o := m.Handlers[0].Options; !o.InitialDelayCallback || o.InitialDelay != 0 {
		t.Errorf("options in the manifest: %+v", o)
	}
	resp := run(t, &recorder{}, abi.Request{Call: abi.CallInitialDelay, Handler: "later", Kind: abi.KindTimer,
		Body: json.RawMessage(`{"spec":{"delay":2.5}}`)})
	if resp.Outcome.Status != abi.OutcomeSuccess || string(resp.Result) != "2.5" {
		t.Errorf("the initial delay call: %+v %s", resp.Outcome, resp.Result)
	}
	resp = run(t, &recorder{}, abi.Request{Call: abi.CallInitialDelay, Handler: "panics", Kind: abi.KindDaemon})
	if resp.Outcome.Status != abi.OutcomeError || !strings.Contains(resp.Outcome.Message, "panic: no") {
		t.Errorf("a panicking initial delay: %+v", resp.Outcome)
	}
}

// A callable resource selector (Kopf's fn(resource) -> bool) is marked in
// the manifest; the host's "select" call gets one boolean per resource.
func TestSelectResources(t *testing.T) {
	r := fresh(t)
	OnCreate("apps", "", "", createFn, ID("picky"), SelectResources(func(res ResourceInfo) bool {
		return res.Preferred && res.Kind == "Deployment"
	}))
	OnCreate("", "v1", "pods", createFn, ID("named"), SelectResources(func(ResourceInfo) bool { return true }))
	if _, err := r.manifest(); err == nil || !strings.Contains(err.Error(), `option SelectResources of handler named: pass "" as the plural`) {
		t.Fatalf("manifest error = %v", err)
	}
	r.problems, r.handlers = nil, r.handlers[:1]
	m, err := r.manifest()
	if err != nil {
		t.Fatal(err)
	}
	if sel := m.Handlers[0].Resource; !sel.Callback || sel.Group != "apps" || sel.Name != "" {
		t.Errorf("selector in the manifest: %+v", sel)
	}
	resources, _ := json.Marshal([]abi.ResourceInfo{
		{Group: "apps", Version: "v1", Plural: "deployments", Kind: "Deployment", Preferred: true},
		{Group: "apps", Version: "v1beta2", Plural: "deployments", Kind: "Deployment"},
		{Group: "apps", Version: "v1", Plural: "replicasets", Kind: "ReplicaSet", Preferred: true},
	})
	resp := run(t, &recorder{}, abi.Request{Call: abi.CallSelect, Handler: "picky", Kind: abi.KindCreate, Body: resources})
	if resp.Outcome.Status != abi.OutcomeSuccess || string(resp.Result) != "[true,false,false]" {
		t.Errorf("the select call: %+v %s", resp.Outcome, resp.Result)
	}
}
