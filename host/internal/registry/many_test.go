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

// A callable selector serves what its module's pick takes of the
// candidates; without a pick (offline), or when the pick fails, the
// handler is left out as unresolved.
func TestCallableSelector(t *testing.T) {
	m := []abi.Manifest{manifest("a",
		spec("picky", abi.KindCreate, "", many(abi.ResourceSelector{Callback: true})),
		spec("plain", abi.KindCreate, "pods", nil),
	)}
	var asked []string
	pick := func(module string, s abi.HandlerSpec, refs []abi.ResourceRef) ([]abi.ResourceRef, error) {
		asked = append(asked, module+"/"+s.ID)
		if len(refs) != 2 {
			t.Errorf("candidates %v", refs)
		}
		return refs[1:], nil // pods
	}
	r, err := NewAllPicked(m, resolveAll, pick)
	if err != nil {
		t.Fatal(err)
	}
	if got := IDs(r.Handlers(pods)); len(got) != 2 || got[0] != "picky" || len(r.Handlers(kopfExamples)) != 0 {
		t.Errorf("pods: %v, kopfexamples: %v", got, IDs(r.Handlers(kopfExamples)))
	}
	if len(asked) != 1 || asked[0] != "a/picky" {
		t.Errorf("asked %v", asked)
	}
	boom := errors.New("guest trapped")
	r, err = NewAllPicked(m, resolveAll, func(string, abi.HandlerSpec, []abi.ResourceRef) ([]abi.ResourceRef, error) { return nil, boom })
	if err != nil {
		t.Fatal(err)
	}
	if un := r.Unresolved(); len(un) != 1 || un[0].Spec.ID != "picky" || !errors.Is(un[0].Err, boom) {
		t.Errorf("unresolved %+v", un)
	}
	r, err = NewAll(m, resolveAll)
	if err != nil {
		t.Fatal(err)
	}
	var unserved *UnservedError
	if un := r.Unresolved(); len(un) != 1 || !errors.As(un[0].Err, &unserved) {
		t.Errorf("without a pick: unresolved %+v", un)
	}
}
