package kopftest_test

import (
	"fmt"
	"strings"
	"testing"

	kopf "github.com/kopf-wasm/kopf-wasm/guest-sdk"
	"github.com/kopf-wasm/kopf-wasm/guest-sdk/kopftest"
)

func init() {
	res := kopf.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples"}
	res.OnCreate(filtered, kopf.ID("gold"), kopf.Labels(map[string]any{"tier": "gold"}),
		kopf.Annotations(map[string]any{"paused": kopf.Absent}))
	res.Timer(filtered, kopf.ID("sized"), kopf.Field("spec.size"), kopf.Value(2))
	res.OnField(filtered, kopf.ID("grown"), kopf.Field("spec.size"), kopf.Old(1), kopf.New(kopf.Present))
	res.OnUpdate(filtered, kopf.ID("any-update"))
	res.OnCreate(filtered, kopf.ID("short"), kopf.When(func(ctx *kopf.Context) bool { return len(ctx.Name()) <= 2 }))
	res.OnCreate(filtered, kopf.ID("owned"), kopf.Annotations(map[string]any{"owner": func(v any, _ *kopf.Context) bool { return v == "me" }}))
}

func filtered(*kopf.Context) (any, error) { return "called", nil }

func labelled(labels, annotations map[string]any, size int) map[string]any {
	obj := example(size)
	meta := obj["metadata"].(map[string]any)
	meta["labels"], meta["annotations"] = labels, annotations
	return obj
}

// TestRunAppliesFilters: WhyNot says what the host would decide; Run
// fails the test when the host would not call the handler, unless Force.
func TestRunAppliesFilters(t *testing.T) {
	h := kopftest.New(t)
	gold := map[string]any{"tier": "gold"}
	long := example(2)
	long["metadata"].(map[string]any)["name"] = "long-name"
	tests := []struct {
		name     string
		id       string
		obj, old map[string]any
		want     string
	}{
		{"labels match", "gold", labelled(gold, nil, 1), nil, ""},
		{"label differs", "gold", labelled(map[string]any{"tier": "silver"}, nil, 1), nil, `its labels filter wants tier="gold", the object has tier="silver"`},
		{"annotation present", "gold", labelled(gold, map[string]any{"paused": "yes"}, 1), nil, `its annotations filter wants paused absent, the object has "yes"`},
		{"value matches", "sized/spec.size", example(2), nil, ""},
		{"value differs", "sized/spec.size", example(3), nil, "its field spec.size does not match the value filter 2"},
		{"old and new match", "grown/spec.size", example(2), example(1), ""},
		{"field unchanged", "grown/spec.size", example(1), example(1), "its field spec.size did not change"},
		{"old differs", "grown/spec.size", example(3), example(2), "the old value of spec.size does not match the old filter 1"},
		{"update without change", "any-update", example(1), example(1), "nothing essential changed between the old and the new object"},
		{"update with a change", "any-update", example(2), example(1), ""},
		{"when true", "short", example(1), nil, ""},
		{"when false", "short", long, nil, "its when filter returned false"},
		{"a callable annotation filter says no", "owned", labelled(nil, map[string]any{"owner": "you"}, 1), nil,
			"its callable annotations filter on owner (or its when filter, if it has one) returned false"},
		{"a callable annotation filter says yes", "owned", labelled(nil, map[string]any{"owner": "me"}, 1), nil, ""},
	}
	for _, tt := range tests {
		if got := h.WhyNot(tt.id, tt.obj, tt.old); got != tt.want {
			t.Errorf("%s: WhyNot = %q, want %q", tt.name, got, tt.want)
		}
	}

	fake := &fatalRecorder{TB: t}
	hf := kopftest.New(fake)
	func() {
		defer func() { _ = recover() }()
		hf.Run("gold", example(1), nil)
	}()
	if !strings.Contains(fake.msg, `the host would not call handler "gold" for this object: its labels filter wants tier="gold", the object has none`) {
		t.Errorf("Run of a filtered handler: %q", fake.msg)
	}
	h.Force = true
	if res := h.Run("gold", example(1), nil); res.Err != nil || res.Value != "called" {
		t.Errorf("forced: %+v", res)
	}
}

// fatalRecorder keeps a Fatalf message and stops the call with a panic.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic("fatal")
}
