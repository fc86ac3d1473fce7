package instrument

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// stateful is a module with one page of memory holding "hi" at 16, a
// mutable i32 global g (7) and an immutable one; "init" (() -> ()) writes
// 42 at 100, grows the memory by a page, writes 9 at 70000 and sets g to
// -5; "read" (i32) -> i32 returns the byte at its address plus g.
func stateful(withData bool) []byte {
	i32 := byte(0x7f)
	types := sec(1, vec(
		[]byte{0x60, 0x00, 0x00},           // () -> ()
		[]byte{0x60, 0x01, i32, 0x01, i32}, // (i32) -> i32
	))
	funcs := sec(3, vec(leb(0), leb(1)))
	mem := sec(5, vec([]byte{0x00, 0x01}))
	globals := sec(6, vec(
		cat([]byte{i32, 0x01, 0x41}, sleb(7), []byte{0x0b}),
		cat([]byte{i32, 0x00, 0x41}, sleb(3), []byte{0x0b}),
	))
	exports := sec(7, vec(
		cat(str("init"), []byte{0x00}, leb(0)),
		cat(str("read"), []byte{0x00}, leb(1)),
		cat(str("memory"), []byte{0x02}, leb(0)),
	))
	initBody := fn(noLocals,
		[]byte{0x41}, sleb(100), []byte{0x41}, sleb(42), []byte{0x3a, 0x00, 0x00}, // i32.store8
		[]byte{0x41}, sleb(1), []byte{0x40, 0x00, 0x1a}, // memory.grow 1; drop
		[]byte{0x41}, sleb(70000), []byte{0x41}, sleb(9), []byte{0x3a, 0x00, 0x00},
		[]byte{0x41}, sleb(-5), []byte{0x24}, leb(0), // global.set 0
		[]byte{0x0b})
	readBody := fn(noLocals,
		[]byte{0x20, 0x00, 0x2d, 0x00, 0x00}, // local.get 0; i32.load8_u
		[]byte{0x23}, leb(0), []byte{0x6a},   // global.get 0; i32.add
		[]byte{0x0b})
	sections := [][]byte{types, funcs, mem, globals, exports, code(initBody, readBody)}
	if withData {
		sections = append(sections, sec(11, vec(cat([]byte{0x00, 0x41}, sleb(16), []byte{0x0b}, str("hi")))))
	}
	sections = append(sections, custom("name"))
	return module(sections...)
}

func TestSnapshot(t *testing.T) {
	for _, withData := range []bool{true, false} {
		ctx := context.Background()
		rt := wazero.NewRuntime(ctx)
		defer rt.Close(ctx)
		snap, _ := takeSnapshot(t, rt, stateful(withData), 1)
		if err := Bounded(snap); err != nil {
			t.Fatal(err)
		}
		after, err := rt.InstantiateWithConfig(ctx, snap, wazero.NewModuleConfig().WithName("after"))
		if err != nil {
			t.Fatalf("the snapshot does not instantiate: %v", err)
		}
		if after.ExportedFunction("init") != nil {
			t.Error("init is still exported")
		}
		if pages, _ := after.Memory().Grow(0); pages != 2 {
			t.Errorf("the snapshot starts with %d pages, want 2", pages)
		}
		read := func(addr uint32) int32 {
			res, err := after.ExportedFunction("read").Call(ctx, api.EncodeU32(addr))
			if err != nil {
				t.Fatal(err)
			}
			return int32(api.DecodeU32(res[0]))
		}
		if got := []int32{read(100), read(70000), read(0)}; got[0] != 37 || got[1] != 4 || got[2] != -5 {
			t.Errorf("withData=%v: read = %v, want [37 4 -5] (42, 9 and 0, each with g = -5)", withData, got)
		}
		if withData && read(16) != 'h'-5 {
			t.Errorf("the data segment's bytes are lost: %d", read(16))
		}

	}
}

// takeSnapshot instantiates wasm (a stateful module), calls its init
// times, and returns its snapshot and the memory it was taken from.
func takeSnapshot(t *testing.T, rt wazero.Runtime, wasm []byte, times int) (snap, mem []byte) {
	t.Helper()
	ctx := context.Background()
	prepared, globals, err := ExportGlobals(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if len(globals) != 1 || globals[0] != 0 {
		t.Fatalf("mutable globals %v, want [0]", globals)
	}
	mod, err := rt.InstantiateWithConfig(ctx, prepared, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Close(ctx)
	for range times {
		if _, err := mod.ExportedFunction("init").Call(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mem, _ = mod.Memory().Read(0, mod.Memory().Size())
	mem = bytes.Clone(mem)
	g := mod.ExportedGlobal(ExportedGlobalPrefix + "0")
	snap, err = Snapshot(wasm, State{Memory: mem, Globals: map[uint32]uint64{0: g.Get()}, Drop: []string{"init"}})
	if err != nil {
		t.Fatal(err)
	}
	return snap, mem
}

func TestSnapshotRefuses(t *testing.T) {
	wasm := stateful(true)
	page := make([]byte, 65536)
	tests := []struct {
		name string
		st   State
		want string
	}{
		{"part of a page", State{Memory: make([]byte, 100)}, "not whole pages"},
		{"shrunk", State{Memory: nil}, ""}, // zero pages: below the minimum of 1
		{"immutable global", State{Memory: page, Globals: map[uint32]uint64{1: 4}}, "immutable"},
	}
	for _, tt := range tests {
		_, err := Snapshot(wasm, tt.st)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}

func TestDataSegments(t *testing.T) {
	mem := make([]byte, 1000)
	mem[5], mem[6], mem[40], mem[500], mem[999] = 1, 2, 3, 4, 5
	got := dataSegments(mem)
	want := []segment{{5, 41}, {500, 501}, {999, 1000}}
	if len(got) != len(want) {
		t.Fatalf("segments %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("segments %v, want %v", got, want)
		}
	}
}
