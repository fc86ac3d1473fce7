package abi

import "testing"

// The explanation of a refused callback names the callable filters the
// manifest declares, and the when filter alone when there are none.
func TestCallbackRefusal(t *testing.T) {
	tests := []struct {
		name    string
		filters Filters
		want    string
	}{
		{"only when", Filters{When: true}, "its when filter returned false"},
		{"an annotation callable", Filters{When: true, Annotations: map[string]MetaFilter{"a": {Callback: true}, "b": {Present: true}}},
			"its callable annotations filter on a (or its when filter, if it has one) returned false"},
		{"several", Filters{When: true, Field: "spec.size", Value: &ValueFilter{Callback: true}, New: &ValueFilter{Callback: true},
			Labels: map[string]MetaFilter{"tier": {Callback: true}, "app": {Callback: true}}},
			"one of its callable filters (labels filter on app, labels filter on tier, value filter on spec.size, new filter on spec.size) or its when filter, if it has one, returned false"},
	}
	for _, tt := range tests {
		if got := tt.filters.CallbackRefusal(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
