package kopftest

import (
	"encoding/json"
	"testing"
)

func TestSelects(t *testing.T) {
	labels := map[string]any{"app": "demo", "tier": "db"}
	tests := map[string]bool{
		"":                 true,
		"app=demo":         true,
		"app==demo":        true,
		"app=other":        false,
		"app!=other":       true,
		"app!=demo":        false,
		"tier":             true,
		"missing":          false,
		"!missing":         true,
		"!tier":            false,
		"app=demo, tier":   true,
		"app=demo,!tier":   false,
		"app=demo,tier=db": true,
	}
	for selector, want := range tests {
		if got := selects(selector, labels); got != want {
			t.Errorf("selects(%q) = %v, want %v", selector, got, want)
		}
	}
}

func TestMergePatch(t *testing.T) {
	tests := []struct{ target, patch, want string }{
		{`{"a":1}`, `{"b":2}`, `{"a":1,"b":2}`},
		{`{"a":{"x":1,"y":2}}`, `{"a":{"y":null,"z":3}}`, `{"a":{"x":1,"z":3}}`},
		{`{"a":[1,2]}`, `{"a":[3]}`, `{"a":[3]}`},
		{`null`, `{"a":{"b":1}}`, `{"a":{"b":1}}`},
		{`{"a":1}`, `"x"`, `"x"`},
	}
	for _, tt := range tests {
		var target, patch any
		_ = json.Unmarshal([]byte(tt.target), &target)
		_ = json.Unmarshal([]byte(tt.patch), &patch)
		got, _ := json.Marshal(mergePatch(target, patch))
		if string(got) != tt.want {
			t.Errorf("merge %s with %s = %s, want %s", tt.target, tt.patch, got, tt.want)
		}
	}
}

func TestEssence(t *testing.T) {
	obj := map[string]any{"apiVersion": "v1", "kind": "X", "status": map[string]any{"a": 1}, "spec": map[string]any{"b": 2},
		"metadata": map[string]any{"name": "n", "resourceVersion": "5", "labels": map[string]any{"l": "1"}}}
	got, _ := json.Marshal(essence(obj, ""))
	if string(got) != `{"metadata":{"labels":{"l":"1"}},"spec":{"b":2}}` {
		t.Errorf("essence = %s", got)
	}
}
