package kopf

import (
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// TestUnexpectedTypes: an object whose spec has a string where the
// handler's type has a number (or an object where it has a list) gives
// the handler an error that names the field, which it returns as its
// outcome: an arbitrary error the host retries and reports, not a panic.
// The untyped getters read such a value as the zero value.
func TestUnexpectedTypes(t *testing.T) {
	type spec struct {
		Replicas int      `json:"replicas"`
		Items    []string `json:"items"`
	}
	cases := []struct{ body, field string }{
		{`{"spec":{"replicas":"three"}}`, "replicas"},
		{`{"spec":{"replicas":1.5}}`, "replicas"},
		{`{"spec":{"items":{"a":1}}}`, "items"},
		{`{"spec":"not an object"}`, "spec"},
	}
	for _, tc := range cases {
		fresh(t)
		var ints int64
		OnCreate("", "v1", "pods", func(ctx *Context) (any, error) {
			ints = ctx.Spec().Int("replicas")
			var s spec
			return nil, ctx.DecodeSpec(&s)
		}, ID("c"))
		resp := run(t, &recorder{}, bodyRequest("c", tc.body))
		if resp.Outcome.Status != abi.OutcomeError || !strings.Contains(resp.Outcome.Message, "decode the spec") ||
			!strings.Contains(resp.Outcome.Message, tc.field) {
			t.Errorf("%s: outcome %+v; want an error naming the spec and %s", tc.body, resp.Outcome, tc.field)
		}
		if ints != 0 {
			t.Errorf("%s: Int(replicas) = %d, want 0", tc.body, ints)
		}
	}
}
