package offline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// filterCase is one case of abi/testdata/filters.json (its format:
// abi/testdata/filters.md), the table every SDK's test kit runs too.
type filterCase struct {
	Name    string          `json:"name"`
	Handler abi.HandlerSpec `json:"handler"`
	Object  json.RawMessage `json:"object"`
	Old     json.RawMessage `json:"old"`
	When    *bool           `json:"when"`
	Called  bool            `json:"called"`
	Why     string          `json:"why"`
}

// TestFilterTable: the host decides each case of the shared table as the
// table says, through the operator's code: the cause detected from the
// two states on persistence's essences (as `kopf-wasm invoke` builds it),
// then registry.WhyNot, the callback filters answering the case's "when";
// and the operator's own selection (Registry.Due, Registry.Matching) agrees.
func TestFilterTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "abi", "testdata", "filters.json"))
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Cases []filterCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatalf("abi/testdata/filters.json: %v", err)
	}
	for _, tc := range table.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			if tc.Called != (tc.Why == "") {
				t.Fatalf("the case says called=%v with why %q", tc.Called, tc.Why)
			}
			if got := hostWhyNot(t, tc); got != tc.Why {
				t.Errorf("the host: %q, the table: %q", got, tc.Why)
			}
			if selected, asked := operatorSelects(t, tc); asked && selected != tc.Called {
				t.Errorf("the operator's selection (Registry.Due or Matching) calls it: %v, the table: %v", selected, tc.Called)
			}
		})
	}
}

// hostWhyNot is whyNotCalled with the case's answer for the guest's when.
func hostWhyNot(t *testing.T, tc filterCase) string {
	t.Helper()
	spec := compactSpec(t, tc.Handler)
	var object, old []byte
	if !isNull(tc.Object) {
		object = tc.Object
	}
	if !isNull(tc.Old) {
		old = tc.Old
	}
	h, in, err := offlineCall("m", spec, object, old, "kopf.zalando.org", "", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if h.Kind().IsActivity() || h.Kind() == abi.KindConvert || in.Subject == nil {
		return ""
	}
	cause := in.Cause
	if cause == nil {
		cause = &registry.Cause{Body: in.Subject.Object.Object}
	}
	when := func(*registry.Handler, *registry.Cause) (bool, error) { return tc.When == nil || *tc.When, nil }
	why, err := registry.WhyNot(h, cause, when)
	if err != nil {
		t.Fatal(err)
	}
	return why
}

// operatorSelects asks the registry the operator's question about the
// case: Registry.Due for changing handlers (resume handlers on initial
// objects), Registry.Matching for the other kinds. asked is false where
// the operator asks nothing of the registry: activities, conversions, and
// update handlers without a field on a change of nothing essential (the
// operator detects no update then: a noop).
func operatorSelects(t *testing.T, tc filterCase) (selected, asked bool) {
	t.Helper()
	spec := compactSpec(t, tc.Handler)
	var object, old []byte
	if !isNull(tc.Object) {
		object = tc.Object
	}
	if !isNull(tc.Old) {
		old = tc.Old
	}
	h, in, err := offlineCall("m", spec, object, old, "kopf.zalando.org", "", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if h.Kind().IsActivity() || h.Kind() == abi.KindConvert || in.Subject == nil {
		return false, false
	}
	r, err := registry.New([]abi.Manifest{{ABIVersion: abi.Version, Module: abi.ModuleInfo{Name: "m"}, Handlers: []abi.HandlerSpec{spec}}},
		func(abi.ResourceSelector) (abi.ResourceRef, error) { return h.Resource, nil })
	if err != nil {
		t.Fatal(err)
	}
	when := func(*registry.Handler, *registry.Cause) (bool, error) { return tc.When == nil || *tc.When, nil }
	var found []*registry.Handler
	if h.Kind().IsChanging() {
		cause := *in.Cause
		cause.Initial = h.Kind() == abi.KindResume
		if h.Kind() == abi.KindUpdate && h.Field == nil && len(cause.Diff) == 0 {
			return false, false
		}
		found, err = r.Due(h.Resource, &cause, when)
	} else {
		found, err = r.Matching(h.Resource, h.Kind(), in.Subject.Object.Object, when)
	}
	if err != nil {
		t.Fatal(err)
	}
	return len(found) == 1, true
}

// compactSpec re-encodes a spec as a module's manifest carries it: value
// literals in compact JSON.
func compactSpec(t *testing.T, spec abi.HandlerSpec) abi.HandlerSpec {
	t.Helper()
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var out abi.HandlerSpec
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }
