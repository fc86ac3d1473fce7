package kopftest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// TestFilterTable: the kit decides each case of abi/testdata/filters.json
// (format: abi/testdata/filters.md) as the host does, in the host's words;
// the module's callback filters answer the case's "when".
func TestFilterTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "abi", "testdata", "filters.json"))
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Cases []struct {
			Name    string          `json:"name"`
			Handler json.RawMessage `json:"handler"`
			Object  map[string]any  `json:"object"`
			Old     map[string]any  `json:"old"`
			When    *bool           `json:"when"`
			Why     string          `json:"why"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatalf("abi/testdata/filters.json: %v", err)
	}
	for _, tc := range table.Cases {
		var spec abi.HandlerSpec
		if err := json.Unmarshal(compact(t, tc.Handler), &spec); err != nil {
			t.Fatalf("%s: %v", tc.Name, err)
		}
		got := declaredWhyNot(spec, tc.Object, tc.Old)
		if got == "" && spec.Filters.When && tc.When != nil && !*tc.When {
			got = spec.Filters.CallbackRefusal()
		}
		if got != tc.Why {
			t.Errorf("%s: kopftest: %q, the table: %q", tc.Name, got, tc.Why)
		}
	}
}

// compact is raw JSON without insignificant space, as a module's manifest
// carries value literals.
func compact(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
