package abi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestFilterTableIsWellFormed: every case of testdata/filters.json (the
// table the host and every SDK's test kit run; format:
// testdata/filters.md) has a unique name, a handler a host accepts, and a
// verdict that agrees with itself (called exactly when why is empty).
func TestFilterTableIsWellFormed(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "filters.json"))
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Cases []struct {
			Name    string      `json:"name"`
			Handler HandlerSpec `json:"handler"`
			Called  *bool       `json:"called"`
			Why     *string     `json:"why"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatalf("testdata/filters.json: %v", err)
	}
	if len(table.Cases) == 0 {
		t.Fatal("testdata/filters.json has no cases")
	}
	seen := map[string]bool{}
	for _, c := range table.Cases {
		if c.Name == "" || seen[c.Name] {
			t.Errorf("case %q: a case needs a name of its own", c.Name)
		}
		seen[c.Name] = true
		if c.Called == nil || c.Why == nil || *c.Called != (*c.Why == "") {
			t.Errorf("case %q: called and why must both be set, called exactly when why is empty", c.Name)
		}
		m := Manifest{ABIVersion: Version, Module: ModuleInfo{Name: "m"}, Handlers: []HandlerSpec{c.Handler}}
		if err := m.Validate(); err != nil {
			t.Errorf("case %q: the handler is not one a host accepts: %v", c.Name, err)
		}
	}
}
