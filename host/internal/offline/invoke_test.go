package offline

import (
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

func TestPluralOf(t *testing.T) {
	for kind, want := range map[string]string{"Pod": "pods", "Ingress": "ingresses", "NetworkPolicy": "networkpolicies",
		"Endpoints": "endpoints", "Gateway": "gateways", "KopfExample": "kopfexamples", "StatefulSet": "statefulsets"} {
		if got := pluralOf(kind); got != want {
			t.Errorf("pluralOf(%s) = %s, want %s", kind, got, want)
		}
	}
}

// An id that one function carries under several kinds is invoked as the
// entry that fits the call: the update entry with an old object, the
// create entry without one, else the first.
func TestFindHandlerOfSeveralKinds(t *testing.T) {
	res := &abi.ResourceSelector{Name: "kopfexamples"}
	m := abi.Manifest{Handlers: []abi.HandlerSpec{
		{ID: "reconcile", Kind: abi.KindResume, Resource: res},
		{ID: "reconcile", Kind: abi.KindCreate, Resource: res},
		{ID: "reconcile", Kind: abi.KindUpdate, Resource: res},
		{ID: "resumer", Kind: abi.KindResume, Resource: res},
	}}
	for _, tt := range []struct {
		id   string
		old  bool
		want abi.HandlerKind
	}{
		{"reconcile", false, abi.KindCreate}, {"reconcile", true, abi.KindUpdate},
		{"resumer", false, abi.KindResume}, {"resumer", true, abi.KindResume},
	} {
		spec, err := findHandler(m, tt.id, tt.old)
		if err != nil || spec.Kind != tt.want {
			t.Errorf("%s (old %v): %s, %v; want %s", tt.id, tt.old, spec.Kind, err, tt.want)
		}
	}
}
