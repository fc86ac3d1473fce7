//go:build unix

package wasmrt

import (
	"testing"

	"github.com/tetratelabs/wazero/experimental"
)

func TestLinearMemories(t *testing.T) {
	const page = 64 << 10
	memories := map[string]experimental.LinearMemory{
		"mapped": allocate(page, 4*page, nil),
		"slice":  &sliceMemory{},
	}
	for name, mem := range memories {
		t.Run(name, func(t *testing.T) {
			defer mem.Free()
			buf := mem.Reallocate(page)
			if len(buf) != page || buf[page-1] != 0 {
				t.Fatalf("first page: len %d", len(buf))
			}
			buf[0], buf[page-1] = 1, 2
			buf = mem.Reallocate(3 * page)
			if len(buf) != 3*page || buf[0] != 1 || buf[page-1] != 2 || buf[3*page-1] != 0 {
				t.Fatalf("grown memory lost its contents or is not zeroed: len %d", len(buf))
			}
			if _, mapped := mem.(*mappedMemory); mapped && mem.Reallocate(5*page) != nil {
				t.Error("a mapping grew past its maximum")
			}
		})
	}
	if _, ok := memories["mapped"].(*mappedMemory); !ok {
		t.Fatalf("allocate returned %T, want a mapping", memories["mapped"])
	}
}
