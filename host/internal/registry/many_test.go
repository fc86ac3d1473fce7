package registry

import (
	"errors"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// resolveAll resolves names as resolver does, the category "all" and
// everything to both test resources.
func resolveAll(sel abi.ResourceSelector) ([]abi.ResourceRef, error) {
	if sel.Many() {
		return []abi.ResourceRef{kopfExamples, pods}, nil
	}
	ref, err := resolver(sel)
	if err != nil {
		return nil, err
	}
	return []abi.ResourceRef{ref}, nil
}

func many(sel abi.ResourceSelector) func(*abi.HandlerSpec) {
	return func(s *abi.HandlerSpec) { s.Resource = &sel }
}

// A category or everything selector serves each resource it resolves to,
// with the handler's id; webhooks of such selectors are left out as
// unserved, and an id clash with another module's handler that names the
// resource leaves out only that resource (the named handler wins,
// whatever the order).
func TestNewAll(t *testing.T) {
	r, err := NewAll([]abi.Manifest{
		manifest("a",
			spec("log", abi.KindEvent, "", many(abi.ResourceSelector{Category: "all"})),
			spec("everything", abi.KindCreate, "", many(abi.ResourceSelector{Everything: true})),
			spec("check", abi.KindValidate, "", many(abi.ResourceSelector{Category: "all"})),
		),
		manifest("b", spec("everything", abi.KindCreate, "pods", nil)),
	}, resolveAll)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		ref  abi.ResourceRef
		want []string
	}{
		{kopfExamples, []string{"a/log", "a/everything"}},
		{pods, []string{"a/log", "b/everything"}}, // the named one wins
	} {
		var got []string
		for _, h := range r.Handlers(tt.ref) {
			if h.Resource != tt.ref {
				t.Errorf("handler %s of %s has resource %v", h.ID(), tt.ref.Plural, h.Resource)
			}
			got = append(got, h.Module+"/"+h.ID())
		}
		if len(got) != len(tt.want) || got[0] != tt.want[0] || got[1] != tt.want[1] {
			t.Errorf("%s: handlers %v, want %v", tt.ref.Plural, got, tt.want)
		}
	}
	un := r.Unresolved()
	if len(un) != 2 {
		t.Fatalf("unresolved: %+v, want the webhook and the clash", un)
	}
	var unserved *UnservedError
	if un[0].Spec.ID != "check" || !errors.As(un[0].Err, &unserved) {
		t.Errorf("unresolved[0] = %s: %v, want check unserved", un[0].Spec.ID, un[0].Err)
	}
	var dup *DuplicateHandlerError
	if un[1].Spec.ID != "everything" || un[1].Module != "a" || !errors.As(un[1].Err, &dup) || dup.Resource != pods {
		t.Errorf("unresolved[1] = %s: %v, want the clash on pods", un[1].Spec.ID, un[1].Err)
	}
}
