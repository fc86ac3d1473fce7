package reactor

import (
	"strings"
	"testing"

	"github.com/kopf-wasm/kopf-wasm/abi"
)

// TestUnionManifest checks what a canary may change: it may add or drop
// handlers of the kinds that handle objects (each object gets its
// version's), but must declare shared ids alike and keep the handlers the
// stable version serves for every object.
func TestUnionManifest(t *testing.T) {
	sel := &abi.ResourceSelector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	create := abi.HandlerSpec{ID: "create_fn", Kind: abi.KindCreate, Resource: sel}
	resume := abi.HandlerSpec{ID: "resume_fn", Kind: abi.KindResume, Resource: sel}
	tick := abi.HandlerSpec{ID: "tick", Kind: abi.KindTimer, Resource: sel, Options: abi.Options{Interval: 1}}
	slower := tick
	slower.Options.Interval = 5
	index := abi.HandlerSpec{ID: "by_name", Kind: abi.KindIndex, Resource: sel}
	manifest := func(hs ...abi.HandlerSpec) abi.Manifest {
		return abi.Manifest{ABIVersion: abi.Version, Module: abi.ModuleInfo{Name: "m"}, Handlers: hs}
	}
	tests := []struct {
		name           string
		stable, canary abi.Manifest
		want           []string // the union's ids
		err            string
	}{
		{name: "same", stable: manifest(create, tick), canary: manifest(create, tick), want: []string{"create_fn", "tick"}},
		{name: "adds a resume handler", stable: manifest(create), canary: manifest(create, resume), want: []string{"create_fn", "resume_fn"}},
		{name: "drops a timer", stable: manifest(create, tick), canary: manifest(create), want: []string{"create_fn", "tick"}},
		{name: "changes a timer", stable: manifest(tick), canary: manifest(slower), err: "declares handler 'tick' otherwise"},
		{name: "adds an index", stable: manifest(create), canary: manifest(create, index), err: "adds the index handler 'by_name'"},
		{name: "drops an index", stable: manifest(create, index), canary: manifest(create), err: "lacks the index handler 'by_name'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			union, err := unionManifest(tt.stable, tt.canary)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, h := range union.Handlers {
				ids = append(ids, h.ID)
			}
			if strings.Join(ids, ",") != strings.Join(tt.want, ",") {
				t.Errorf("union = %v, want %v", ids, tt.want)
			}
		})
	}
}
