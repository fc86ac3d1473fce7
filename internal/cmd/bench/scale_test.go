package main

import (
	"io"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestHandledValue(t *testing.T) {
	obj := func(o map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: o} }
	kopf := func(base string) *unstructured.Unstructured {
		return obj(map[string]any{"spec": map[string]any{"field": "s-12"},
			"status": map[string]any{"kopf": map[string]any{"last-handled-configuration": base}}})
	}
	native := func(gen, observed int64, field string) *unstructured.Unstructured {
		return obj(map[string]any{"metadata": map[string]any{"generation": gen}, "spec": map[string]any{"field": field},
			"status": map[string]any{"observedGeneration": observed}})
	}
	annotated := obj(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		"kopf.zalando.org/last-handled-configuration": `{"spec":{"field":"s-12"}}`}}})
	for _, tt := range []struct {
		name string
		obj  *unstructured.Unstructured
		want string
		ok   bool
	}{
		{"diff-base in status holds the value", kopf(`{"spec":{"field":"s-12"}}`), "s-12", true},
		{"diff-base holds an older value", kopf(`{"spec":{"field":"s-1"}}`), "s-12", false},
		{"a prefix of the value is not it", kopf(`{"spec":{"field":"s-12"}}`), "s-1", false},
		{"diff-base in an annotation", annotated, "s-12", true},
		{"native: generation observed", native(3, 3, "s-12"), "s-12", true},
		{"native: generation not yet observed", native(3, 2, "s-12"), "s-12", false},
		{"native: another value", native(3, 3, "s-13"), "s-12", false},
	} {
		if got := handledValue(tt.obj, tt.want); got != tt.ok {
			t.Errorf("%s: handledValue = %v, want %v", tt.name, got, tt.ok)
		}
	}
}

func TestChildLine(t *testing.T) {
	c := &child{ready: make(chan struct{}), synced: make(chan struct{})}
	var ready, synced once
	for _, line := range []string{"cycles 3", "ready", "ready", "synced", "cycles x", "cycles 12", "synced"} {
		c.line(line, &ready, &synced)
	}
	for name, ch := range map[string]chan struct{}{"ready": c.ready, "synced": c.synced} {
		select {
		case <-ch:
		default:
			t.Errorf("%s not closed", name)
		}
	}
	if got := c.cycles.Load(); got != 12 {
		t.Errorf("cycles = %d, want 12 (the last valid report)", got)
	}
}

func TestLatencies(t *testing.T) {
	l := &latencies{pending: map[string]sentChange{}}
	at0 := time.Unix(100, 0)
	l.sent("kex-00001", "s-1", at0)
	l.sent("kex-00001", "s-2", at0) // changed again before the first result
	old := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"field": "s-1"},
		"status": map[string]any{"kopf": map[string]any{"last-handled-configuration": `{"spec":{"field":"s-1"}}`}}}}
	l.observe("kex-00001", old)
	if l.left() != 1 || len(l.took) != 0 {
		t.Fatalf("an older value's result counted: left %d, took %v", l.left(), l.took)
	}
	cur := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"field": "s-2"},
		"status": map[string]any{"kopf": map[string]any{"last-handled-configuration": `{"spec":{"field":"s-2"}}`}}}}
	l.observe("kex-00001", cur)
	l.observe("kex-00001", cur) // seen again: counted once
	if l.left() != 0 || len(l.took) != 1 || l.superseded != 1 {
		t.Errorf("left %d, took %v, superseded %d; want 0, one, 1", l.left(), l.took, l.superseded)
	}
}

func TestParseBenchScenarios(t *testing.T) {
	for _, tt := range []struct {
		args    []string
		scale   bool
		wantErr bool
	}{
		{nil, false, false},
		{[]string{"-scenario", "coldstart,steady", "-rate", "20", "-duration", "1m"}, true, false},
		{[]string{"-scenario", "steady"}, true, false},
		{[]string{"-scenario", "workload,steady"}, false, true},
		{[]string{"-scenario", "nope"}, false, true},
	} {
		o, err := parseBench(tt.args, io.Discard)
		if (err != nil) != tt.wantErr {
			t.Errorf("%q: err = %v, want error %v", tt.args, err, tt.wantErr)
			continue
		}
		if err == nil && o.scale() != tt.scale {
			t.Errorf("%q: scale() = %v, want %v", tt.args, o.scale(), tt.scale)
		}
	}
}
