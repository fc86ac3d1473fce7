package reactor

import (
	"errors"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
	"github.com/kopf-wasm/kopf-wasm/host/internal/registry"
)

// A rescan that resolves the same handlers to the same resources changes
// nothing; a resource that appeared or went, or a handler left out for
// another reason, is a change.
func TestFingerprint(t *testing.T) {
	pods := abi.ResourceRef{Version: "v1", Plural: "pods", Kind: "Pod", Namespaced: true}
	widgets := abi.ResourceRef{Group: "scan.kopf.dev", Version: "v1", Plural: "widgets", Kind: "Widget", Namespaced: true}
	m := []abi.Manifest{{ABIVersion: abi.Version, Module: abi.ModuleInfo{Name: "m"}, Handlers: []abi.HandlerSpec{
		{ID: "all", Kind: abi.KindEvent, Resource: &abi.ResourceSelector{Category: "all"}},
		{ID: "w", Kind: abi.KindCreate, Resource: &abi.ResourceSelector{Name: "widgets"}},
	}}}
	build := func(served ...abi.ResourceRef) string {
		reg, err := registry.NewAll(m, func(sel abi.ResourceSelector) ([]abi.ResourceRef, error) {
			var out []abi.ResourceRef
			for _, ref := range served {
				if sel.Many() || sel.Name == ref.Plural {
					out = append(out, ref)
				}
			}
			if len(out) == 0 {
				return nil, errors.New("not served")
			}
			return out, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return fingerprint(reg)
	}
	before := build(pods)
	if build(pods) != before {
		t.Error("the same resolution gave another fingerprint")
	}
	if build(pods, widgets) == before {
		t.Error("a CRD that appeared did not change the fingerprint")
	}
	if build(widgets) == build(pods, widgets) {
		t.Error("a resource that went did not change the fingerprint")
	}
}
