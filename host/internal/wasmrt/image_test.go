//go:build unix

package wasmrt

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero/api"

	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt/instrument"
)

// peekPoke is a module with one page of memory and two exports: get(addr)
// returns the byte at addr, set(addr, v) writes it.
var peekPoke = []byte{
	0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00,
	0x01, 0x0b, 0x02, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x60, 0x02, 0x7f, 0x7f, 0x00, // types
	0x03, 0x03, 0x02, 0x00, 0x01, // functions
	0x05, 0x03, 0x01, 0x00, 0x01, // memory: min 1
	0x07, 0x13, 0x03, 0x03, 'g', 'e', 't', 0x00, 0x00, 0x03, 's', 'e', 't', 0x00, 0x01,
	0x03, 'm', 'e', 'm', 0x02, 0x00, // exports
	0x0a, 0x13, 0x02,
	0x07, 0x00, 0x20, 0x00, 0x2d, 0x00, 0x00, 0x0b, // get: local.get 0; i32.load8_u; end
	0x09, 0x00, 0x20, 0x00, 0x20, 0x01, 0x3a, 0x00, 0x00, 0x0b, // set: local.get 0; local.get 1; i32.store8; end
}

// TestMemoryImage: the instances of a pre-initialised module start with
// its snapshot's memory, mapped from one image rather than written from
// data segments, and what one instance writes the others do not see.
func TestMemoryImage(t *testing.T) {
	ctx := context.Background()
	mem := make([]byte, wasmPage)
	mem[10], mem[wasmPage-1] = 7, 8
	snap, err := instrument.Snapshot(peekPoke, instrument.State{Memory: mem})
	if err != nil {
		t.Fatal(err)
	}
	r := newRuntime(t, Options{})
	c, err := r.acquire(ctx, Digest(snap), snap)
	if err != nil {
		t.Fatal(err)
	}
	defer r.release(c)
	if c.image == nil {
		t.Fatal("the snapshot's memory was not made an image")
	}
	a, err := newInstance(ctx, r, c)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	b, err := newInstance(ctx, r, c)
	if err != nil {
		t.Fatal(err)
	}
	defer b.close()
	get := func(inst *instance, addr uint32) uint32 {
		res, err := inst.mod.ExportedFunction("get").Call(ctx, api.EncodeU32(addr))
		if err != nil {
			t.Fatal(err)
		}
		return api.DecodeU32(res[0])
	}
	if got := []uint32{get(a, 10), get(a, wasmPage-1), get(b, 10), get(a, 11)}; got[0] != 7 || got[1] != 8 || got[2] != 7 || got[3] != 0 {
		t.Fatalf("the instances start with %v, want [7 8 7 0]", got)
	}
	if _, err := a.mod.ExportedFunction("set").Call(ctx, 10, 9); err != nil {
		t.Fatal(err)
	}
	if got := []uint32{get(a, 10), get(b, 10)}; got[0] != 9 || got[1] != 7 {
		t.Errorf("after a wrote 9: a reads %d, b %d; want 9 and 7 (copy-on-write)", got[0], got[1])
	}
	if size := a.mod.Memory().Size(); size != wasmPage {
		t.Errorf("memory of %d bytes, want the snapshot's page", size)
	}
}
