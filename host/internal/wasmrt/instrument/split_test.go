package instrument

import (
	"bytes"
	"context"
	"strconv"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// startSplit instantiates code and gives it st as the host does: the
// memory grown to st.Pages, the image written into it, the globals set.
func startSplit(t *testing.T, rt wazero.Runtime, code []byte, st Start) api.Module {
	t.Helper()
	ctx := context.Background()
	mod, err := rt.InstantiateWithConfig(ctx, code, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatalf("the split code does not instantiate: %v", err)
	}
	if b, _ := mod.Memory().Read(0, mod.Memory().Size()); len(bytes.Trim(b, "\x00")) != 0 {
		t.Error("the split code still writes data into its memory")
	}
	if have := mod.Memory().Size() / wasmPage; have < st.Pages {
		mod.Memory().Grow(st.Pages - have)
	}
	if !mod.Memory().Write(0, st.Image.Bytes()) {
		t.Fatalf("the image (%d bytes) does not fit %d pages", st.Image.Size, st.Pages)
	}
	for idx, v := range st.Globals {
		g, ok := mod.ExportedGlobal(ExportedGlobalPrefix + strconv.FormatUint(uint64(idx), 10)).(api.MutableGlobal)
		if !ok {
			t.Fatalf("global %d is not exported as mutable", idx)
		}
		g.Set(v)
	}
	return mod
}

func readAt(t *testing.T, mod api.Module, addr uint32) int32 {
	t.Helper()
	res, err := mod.ExportedFunction("read").Call(context.Background(), api.EncodeU32(addr))
	if err != nil {
		t.Fatal(err)
	}
	return int32(api.DecodeU32(res[0]))
}

func TestSplitSnapshot(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	once, mem := takeSnapshot(t, rt, stateful(true), 1)
	twice, _ := takeSnapshot(t, rt, stateful(true), 2)

	code, st, ok, err := Split(once)
	if err != nil || !ok {
		t.Fatalf("Split: ok %v, %v", ok, err)
	}
	if err := Bounded(code); err != nil {
		t.Fatal(err)
	}
	if st.Pages != 2 || st.Globals[0] != uint64(uint32(0xfffffffb)) || len(st.Globals) != 1 {
		t.Errorf("start: %d pages, globals %v; want 2 pages and global 0 at -5", st.Pages, st.Globals)
	}
	image := st.Image.Bytes()
	if len(image) > len(mem) || !bytes.Equal(image, mem[:len(image)]) || len(bytes.Trim(mem[len(image):], "\x00")) != 0 {
		t.Errorf("the image (%d bytes) is not the memory (%d bytes)", len(image), len(mem))
	}
	mod := startSplit(t, rt, code, st)
	if got := []int32{readAt(t, mod, 100), readAt(t, mod, 70000), readAt(t, mod, 0), readAt(t, mod, 16)}; got[0] != 37 || got[1] != 4 || got[2] != -5 || got[3] != 'h'-5 {
		t.Errorf("read = %v, want [37 4 -5 %d]: the snapshot's state", got, 'h'-5)
	}

	code2, st2, ok, err := Split(twice)
	if err != nil || !ok {
		t.Fatalf("Split of the second snapshot: ok %v, %v", ok, err)
	}
	if !bytes.Equal(code, code2) {
		t.Error("two snapshots of one module split into different code: their compiled code cannot be shared")
	}
	if st2.Pages != 3 {
		t.Errorf("the second snapshot starts with %d pages, want 3", st2.Pages)
	}
	mod2 := startSplit(t, rt, code2, st2)
	if got, size := readAt(t, mod2, 100), mod2.Memory().Size(); got != 37 || size != 3*wasmPage {
		t.Errorf("the second snapshot reads %d at 100 with %d bytes of memory, want 37 and 3 pages", got, size)
	}
}

func TestSplitDataOnly(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	code, st, ok, err := Split(stateful(true))
	if err != nil || !ok {
		t.Fatalf("Split: ok %v, %v", ok, err)
	}
	if st.Globals != nil || st.Pages != 1 || st.Image.Size != 18 {
		t.Errorf("start: globals %v, %d pages, image %d bytes; want no globals, 1 page, 18 bytes", st.Globals, st.Pages, st.Image.Size)
	}
	if got := readAt(t, startSplit(t, rt, code, st), 17); got != 'i'+7 {
		t.Errorf("read(17) = %d, want %d: the data and the global's own start", got, 'i'+7)
	}
}

func TestSplitLeavesAlone(t *testing.T) {
	const i32 = 0x7f
	dataAt := func(off int64) []byte {
		return module(sec(5, vec([]byte{0x00, 0x01})), sec(11, vec(cat([]byte{0x00, 0x41}, sleb(off), []byte{0x0b}, str("hi")))))
	}
	tests := []struct {
		name string
		wasm []byte
	}{
		{"no data", stateful(false)},
		{"a segment past the initial memory", dataAt(65535)},
		{"passive data", module(sec(5, vec([]byte{0x00, 0x01})), sec(12, leb(1)), sec(11, vec(cat([]byte{0x01}, str("hi")))))},
		{"an imported memory", module(sec(2, vec(cat(str("env"), str("memory"), []byte{0x02, 0x00, 0x01}))), sec(11, vec(cat([]byte{0x00, 0x41}, sleb(0), []byte{0x0b}, str("hi")))))},
		{"an offset from a global", module(sec(2, vec(cat(str("env"), str("base"), []byte{0x03, i32, 0x00}))), sec(5, vec([]byte{0x00, 0x01})),
			sec(11, vec(cat([]byte{0x00, 0x23}, leb(0), []byte{0x0b}, str("hi")))))},
	}
	for _, tt := range tests {
		code, _, ok, err := Split(tt.wasm)
		if err != nil || ok || !bytes.Equal(code, tt.wasm) {
			t.Errorf("%s: ok %v, %v; want the module back as it is", tt.name, ok, err)
		}
	}
	if _, _, ok, _ := Split(dataAt(65534)); !ok {
		t.Error("a segment ending at the end of the initial memory was not taken out")
	}
}

// FuzzSplit feeds arbitrary bytes to Split: it may not panic; a module it
// takes apart stays within bounds, and when wazero compiles the original
// (within bounds, as the host checks first) it compiles the code too, and
// the image fits the initial memory.
func FuzzSplit(f *testing.F) {
	f.Add(stateful(true))
	f.Add(stateful(false))
	f.Add(runnableModule())
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	f.Cleanup(func() { rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, in []byte) {
		code, st, ok, err := Split(in)
		if err != nil || !ok {
			if !bytes.Equal(code, in) {
				t.Fatal("a module Split left alone came back changed")
			}
			return
		}
		if st.Image.Size > uint64(st.Pages)*wasmPage {
			t.Fatalf("an image of %d bytes for %d pages", st.Image.Size, st.Pages)
		}
		if Bounded(in) != nil {
			return
		}
		if err := Bounded(code); err != nil {
			t.Fatalf("the split code is out of bounds: %v", err)
		}
		before, err := compile(ctx, rt, in)
		if err != nil {
			return
		}
		defer before.Close(ctx)
		after, err := compile(ctx, rt, code)
		if err != nil {
			t.Fatalf("wazero compiles the module but not its split code: %v", err)
		}
		after.Close(ctx)
	})
}
