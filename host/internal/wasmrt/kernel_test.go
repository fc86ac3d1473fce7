package wasmrt

import (
	"bytes"
	"strings"
	"testing"
)

// kernelPanic runs f and returns the *kernelError it panicked with, failing
// the test if it did not panic or panicked with something else.
func kernelPanic(t *testing.T, f func()) (kerr *kernelError) {
	t.Helper()
	defer func() {
		t.Helper()
		v := recover()
		if v == nil {
			t.Fatal("no fault")
		}
		e, ok := v.(*kernelError)
		if !ok {
			t.Fatalf("panicked with %T %v, want a *kernelError", v, v)
		}
		if msg := e.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "extism kernel: ") {
			t.Errorf("message %q: want one line starting with %q", msg, "extism kernel: ")
		}
		kerr = e
	}()
	f()
	return nil
}

func TestKernelAlloc(t *testing.T) {
	k := newKernel(1 << 20)
	prevEnd := uint64(0)
	for _, n := range []uint64{1, 3, 8, 13, 100, 7, 16} {
		off := k.alloc(n)
		if off == 0 || off < kernelBase || off%8 != 0 {
			t.Fatalf("alloc(%d) = %d, want an 8-aligned offset >= %d", n, off, kernelBase)
		}
		if off < prevEnd {
			t.Fatalf("alloc(%d) = %d overlaps the previous block ending at %d", n, off, prevEnd)
		}
		if got := k.length(off); got != n {
			t.Errorf("length(%d) = %d, want %d", off, got, n)
		}
		prevEnd = off + n
	}
}

func TestKernelAllocZero(t *testing.T) {
	// go-pdk allocates zero bytes for an empty string (pdk.Log(level, ""),
	// pdk.Output(nil)); such a block must not share its offset with the
	// next one, or length and free would find the wrong block.
	k := newKernel(1 << 20)
	z := k.alloc(0)
	b := k.alloc(8)
	if z == b {
		t.Fatalf("alloc(0) and the next alloc(8) both returned %d", z)
	}
	if got := k.length(b); got != 8 {
		t.Errorf("length of the 8-byte block = %d, want 8", got)
	}
	k.free(b)
	if got := k.length(z); got != 0 {
		t.Errorf("length of the empty block = %d, want 0", got)
	}
	c := k.alloc(16)
	if c == z || k.length(c) != 16 {
		t.Errorf("after freeing the top block, alloc(16) = %d (length %d); the empty block is at %d", c, k.length(c), z)
	}
}

func TestKernelLength(t *testing.T) {
	k := newKernel(1 << 20)
	a := k.alloc(24)
	b := k.alloc(5)
	k.free(a) // below b: stays in the blocks, freed
	for _, tc := range []struct {
		name string
		off  uint64
		want uint64
	}{
		{"live block", b, 5},
		{"freed block", a, 0},
		{"inside a block", b + 1, 0},
		{"zero", 0, 0},
		{"padding", 4, 0},
		{"past memory", 1 << 30, 0},
	} {
		if got := k.length(tc.off); got != tc.want {
			t.Errorf("%s: length(%d) = %d, want %d", tc.name, tc.off, got, tc.want)
		}
	}
}

func TestKernelFree(t *testing.T) {
	t.Run("topmost blocks give their space back", func(t *testing.T) {
		k := newKernel(1 << 20)
		a := k.alloc(16)
		b := k.alloc(32)
		c := k.alloc(8)
		k.free(c)
		k.free(b)
		if got := k.alloc(4); got != b {
			t.Errorf("alloc after freeing the two top blocks = %d, want %d (reused)", got, b)
		}
		if k.length(a) != 16 {
			t.Errorf("the live block below lost its length: %d", k.length(a))
		}
	})
	t.Run("freed in any order", func(t *testing.T) {
		k := newKernel(1 << 20)
		a := k.alloc(16)
		b := k.alloc(16)
		k.free(a) // below b: not reusable yet
		k.free(b) // now both are free: everything back
		if got := k.alloc(16); got != a {
			t.Errorf("alloc after freeing every block = %d, want %d", got, a)
		}
	})
	t.Run("a block freed below a live one waits for reset", func(t *testing.T) {
		k := newKernel(1 << 20)
		a := k.alloc(16)
		b := k.alloc(16)
		k.free(a)
		c := k.alloc(16)
		if c == a || c <= b {
			t.Errorf("alloc = %d while %d (freed) lies below the live %d; want a new offset above", c, a, b)
		}
		k.reset()
		if got := k.alloc(16); got != a {
			t.Errorf("alloc after reset = %d, want %d", got, a)
		}
	})
	t.Run("input cannot be freed", func(t *testing.T) {
		k := newKernel(1 << 20)
		k.setInput([]byte("the input"))
		k.free(k.input)
		if got := k.length(k.input); got != 9 {
			t.Errorf("length of the input after free = %d, want 9", got)
		}
		if got := k.alloc(8); got == k.input {
			t.Errorf("alloc reused the input's offset %d", got)
		}
		if k.inputLoadU8(0) != 't' {
			t.Errorf("input_load_u8(0) = %q, want 't'", rune(k.inputLoadU8(0)))
		}
	})
	t.Run("non-blocks are ignored", func(t *testing.T) {
		k := newKernel(1 << 20)
		a := k.alloc(16)
		k.free(0)
		k.free(a + 8)
		k.free(1 << 30)
		if k.length(a) != 16 {
			t.Errorf("freeing non-blocks changed the block at %d: length %d", a, k.length(a))
		}
	})
}

func TestKernelLoadStore(t *testing.T) {
	k := newKernel(1 << 20)
	a := k.alloc(16)
	k.storeU64(a, 0x0102030405060708)
	k.storeU8(a+8, 0x1ff) // only the low byte
	if got := k.loadU64(a); got != 0x0102030405060708 {
		t.Errorf("load_u64 = %#x", got)
	}
	if got := k.loadU8(a); got != 0x08 {
		t.Errorf("load_u8 of the u64's low byte = %#x, want 0x08 (little-endian)", got)
	}
	if got := k.loadU8(a + 8); got != 0xff {
		t.Errorf("load_u8 = %#x, want 0xff", got)
	}
	b, err := k.bytes(a)
	if err != nil || len(b) != 16 || b[0] != 8 || b[8] != 0xff {
		t.Errorf("bytes(%d) = %v, %v", a, b, err)
	}
	if _, err := k.bytes(a + 1); err == nil {
		t.Error("bytes of a non-block: no error")
	}

	end := uint64(len(k.mem))
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"load_u8 at 0", func() { k.loadU8(0) }, "load_u8: offset 0 (+1) is outside kernel memory"},
		{"load_u8 at the end", func() { k.loadU8(end) }, "load_u8: offset"},
		{"load_u64 across the end", func() { k.loadU64(end - 4) }, "load_u64: offset"},
		{"store_u8 in the padding", func() { k.storeU8(kernelBase-1, 1) }, "store_u8: offset 7"},
		{"store_u64 past the end", func() { k.storeU64(end+64, 1) }, "store_u64: offset"},
		{"store_u64 wrapping around", func() { k.storeU64(^uint64(0)-3, 1) }, "store_u64: offset"},
		{"output_set past the end", func() { k.setOutput(a, end) }, "output_set: offset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kerr := kernelPanic(t, tc.f)
			if !strings.HasPrefix(kerr.msg, tc.want) || !strings.Contains(kerr.msg, "outside kernel memory") {
				t.Errorf("message %q, want it to start with %q and say outside kernel memory", kerr.msg, tc.want)
			}
		})
	}
}

func TestKernelInput(t *testing.T) {
	k := newKernel(1 << 20)
	in := []byte("0123456789abc") // 13 bytes
	k.setInput(in)
	if k.inputLength() != 13 || k.input < kernelBase {
		t.Fatalf("input at %d, %d bytes", k.input, k.inputLength())
	}
	if got := k.inputLoadU64(5); got != 0x6362613938373635 { // "56789abc", little-endian
		t.Errorf("input_load_u64(5) = %#x, want 0x6362613938373635", got)
	}
	if got := k.inputLoadU8(12); got != 'c' {
		t.Errorf("input_load_u8(12) = %q", rune(got))
	}
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"u64 past the end", func() { k.inputLoadU64(6) }, "input_load_u64: index 6 is past the input's 13 bytes"},
		{"u64 wrapping around", func() { k.inputLoadU64(^uint64(0) - 2) }, "input_load_u64: index"},
		{"u8 at the end", func() { k.inputLoadU8(13) }, "input_load_u8: index 13 is past the input's 13 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if kerr := kernelPanic(t, tc.f); kerr.msg != tc.want && !strings.HasPrefix(kerr.msg, tc.want) {
				t.Errorf("message %q, want %q", kerr.msg, tc.want)
			}
		})
	}

	k.reset()
	k.setInput(nil)
	if k.input != 0 || k.inputLength() != 0 {
		t.Errorf("no input: at %d, %d bytes", k.input, k.inputLength())
	}
	kernelPanic(t, func() { k.inputLoadU8(0) })
}

func TestKernelOutOfMemory(t *testing.T) {
	const limit = 4096
	k := newKernel(limit)
	a := k.alloc(limit - 64)
	kerr := kernelPanic(t, func() { k.alloc(100) })
	if !strings.HasSuffix(kerr.msg, "(out of memory)") || !strings.Contains(kerr.msg, "100 bytes") {
		t.Errorf("message %q, want it to name the 100 bytes and end with (out of memory)", kerr.msg)
	}
	kerr = kernelPanic(t, func() { k.alloc(^uint64(0) - 2) }) // wraps around
	if !strings.HasSuffix(kerr.msg, "(out of memory)") {
		t.Errorf("message %q, want it to end with (out of memory)", kerr.msg)
	}
	if k.length(a) != limit-64 {
		t.Errorf("a failed alloc changed the live block: length %d", k.length(a))
	}
	if got := k.alloc(8); got == 0 || k.length(got) != 8 {
		t.Errorf("an alloc that fits after the failure = %d", got)
	}
}

func TestKernelReset(t *testing.T) {
	k := newKernel(1 << 20)
	k.setVar("counter", []byte{3})
	k.setInput([]byte("input"))
	out := k.write([]byte(`{"outcome":{}}`))
	k.setOutput(out, 14)
	k.errorAt = k.write([]byte("boom"))
	if got := k.errorMessage(); got != "boom" {
		t.Fatalf("errorMessage = %q", got)
	}
	if got := string(k.outputBytes()); got != `{"outcome":{}}` {
		t.Fatalf("outputBytes = %q", got)
	}

	k.reset()
	if k.input != 0 || k.inputLength() != 0 || k.outputBytes() != nil || k.errorMessage() != "" {
		t.Errorf("after reset: input %d (%d bytes), output %q, error %q",
			k.input, k.inputLength(), k.outputBytes(), k.errorMessage())
	}
	if k.length(out) != 0 || len(k.blocks) != 0 || len(k.mem) != kernelBase {
		t.Errorf("after reset: %d blocks, %d bytes of memory", len(k.blocks), len(k.mem))
	}
	if v := k.vars["counter"]; !bytes.Equal(v, []byte{3}) {
		t.Errorf("after reset the var is %v, want [3]", v)
	}

	small := cap(k.mem)
	if small > kernelKeep {
		t.Fatalf("a new kernel keeps %d bytes", small)
	}
	k.alloc(kernelKeep + 1)
	if cap(k.mem) <= kernelKeep {
		t.Fatalf("memory did not grow: cap %d", cap(k.mem))
	}
	k.reset()
	if cap(k.mem) > kernelKeep {
		t.Errorf("reset after a big call kept %d bytes, want at most %d", cap(k.mem), kernelKeep)
	}
	if got := k.alloc(8); got != kernelBase {
		t.Errorf("first alloc after reset = %d, want %d", got, kernelBase)
	}
}

func TestKernelVars(t *testing.T) {
	k := newKernel(1 << 20)
	value := []byte("v1")
	k.setVar("a", value)
	value[0] = 'x' // setVar keeps a copy
	if got := string(k.vars["a"]); got != "v1" {
		t.Errorf("var a = %q, want v1", got)
	}
	k.setVar("a", []byte("longer"))
	k.setVar("b", []byte("12"))
	if k.varsBytes != len("a")+len("longer")+len("b")+len("12") {
		t.Errorf("varsBytes = %d after an overwrite", k.varsBytes)
	}
	k.setVar("a", nil)
	if _, ok := k.vars["a"]; ok || k.varsBytes != 3 {
		t.Errorf("setVar(nil) did not delete: %v, %d bytes", k.vars, k.varsBytes)
	}
	k.setVar("missing", nil) // deleting nothing is fine
	k.setVar("empty", []byte{})
	if v, ok := k.vars["empty"]; !ok || len(v) != 0 {
		t.Errorf("an empty value is a value: %v %v", v, ok)
	}

	k.setVar("big", make([]byte, maxVarsBytes-k.varsBytes-len("big")-5)) // 5 bytes left
	if k.varsBytes != maxVarsBytes-5 {
		t.Fatalf("varsBytes = %d, want %d", k.varsBytes, maxVarsBytes-5)
	}
	kerr := kernelPanic(t, func() { k.setVar("more", make([]byte, 10)) })
	if !strings.Contains(kerr.msg, `var_set "more"`) || !strings.Contains(kerr.msg, "more than 1048576 bytes") {
		t.Errorf("message %q, want it to name the var and the limit", kerr.msg)
	}
	if _, ok := k.vars["more"]; ok {
		t.Error("the var over the limit was stored")
	}
	k.setVar("big", nil)
	k.setVar("more", make([]byte, 10)) // fits again once big is gone
	if len(k.vars["more"]) != 10 {
		t.Errorf("var more = %v", k.vars["more"])
	}
}
