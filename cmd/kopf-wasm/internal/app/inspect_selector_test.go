package app

import (
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// inspect names every kind of selector.
func TestResourceName(t *testing.T) {
	for _, tt := range []struct {
		sel  *abi.ResourceSelector
		want string
	}{
		{nil, "-"},
		{&abi.ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}, "kopfexamples.v1.kopf.dev"},
		{&abi.ResourceSelector{Category: "all"}, "(category all)"},
		{&abi.ResourceSelector{Group: "kopf.dev", Everything: true}, "(everything).kopf.dev"},
	} {
		if got := resourceName(tt.sel); got != tt.want {
			t.Errorf("resourceName(%+v) = %q, want %q", tt.sel, got, tt.want)
		}
	}
}
