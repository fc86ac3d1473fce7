package wasmrt

import (
	"runtime"
	"testing"
)

// TestReleaseBodies: once compiled, a module's function bodies are
// dropped from wazero's decoded module (release.go), and the module still
// instantiates and answers calls. It fails if a wazero upgrade moves the
// fields releaseBodies reaches for.
func TestReleaseBodies(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("wazero interprets modules on ", runtime.GOARCH, ": the bodies are kept")
	}
	r := newRuntime(t, Options{})
	m, err := r.Load(t.Context(), "good", guest(t, "good"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if !releaseBodies(m.code.code) {
		t.Fatal("releaseBodies does not find wazero's function bodies: check it against the wazero in go.mod")
	}
	for range 3 { // more instances than the pool keeps: new ones are made from the released module
		inst, err := m.newInstance(t.Context())
		if err != nil {
			t.Fatalf("an instance of the released module: %v", err)
		}
		if _, cerr := m.handle(t.Context(), inst, request("ok", 1<<10), nil); cerr != nil {
			t.Fatalf("a call on an instance of the released module: %v", cerr)
		}
		inst.close()
	}
}
