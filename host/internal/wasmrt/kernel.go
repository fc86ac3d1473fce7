package wasmrt

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// kernel is the state behind the extism:host/env functions for one
// instance: the memory blocks that guest and host exchange (Extism's
// "kernel memory"), the input and output of the call in progress, the
// error the guest set, and the guest's variables.
//
// Extism's go-sdk keeps this memory in a second wasm module (its kernel)
// and reaches it through exported functions, which costs a dozen calls into
// wasm per call and a fresh call engine for each; here the blocks live in a
// Go slice, so a kernel call is one Go function call. TestKernelLikeExtism
// (extism_compare_test.go) runs the go-pdk test guests under this kernel
// and under go-sdk's and compares what they give.
//
// Blocks are allocated back to back from offset kernelBase up (offset 0 is
// never a block: it means "none" in the ABI). Freeing the topmost blocks
// gives their space back at once; a block freed below a live one is reused
// after the call, when reset frees everything.
type kernel struct {
	mem    []byte  // mem[:kernelBase] is unused padding
	blocks []block // live and freed blocks, by offset
	limit  uint64  // the most bytes mem may hold

	input, inputLen   uint64 // the input block (offset 0: none)
	output, outputLen uint64 // set by output_set
	errorAt           uint64 // offset of the error message block, set by error_set

	vars      map[string][]byte
	varsBytes int

	httpStatus  int32
	httpHeaders map[string]string
}

// block is one allocation in kernel memory.
type block struct {
	offset, length uint64
	freed          bool
}

const (
	// kernelBase is the first offset handed out; below it lies padding so
	// that no block starts at 0.
	kernelBase = 8
	// kernelKeep is the most capacity a kernel keeps between calls; a call
	// that used more gives it back to the garbage collector.
	kernelKeep = 256 << 10
	// maxVarsBytes bounds the keys and values of a guest's variables.
	maxVarsBytes = 1 << 20
)

// kernelError is what a kernel function panics with when a guest misuses
// it; wazero turns the panic into a failed call.
type kernelError struct{ msg string }

func (e *kernelError) Error() string { return "extism kernel: " + e.msg }

func kernelFault(format string, args ...any) {
	panic(&kernelError{msg: fmt.Sprintf(format, args...)})
}

func newKernel(limit uint64) *kernel {
	k := &kernel{limit: limit}
	k.reset()
	return k
}

// reset frees every block and forgets the previous call's input, output and
// error; variables stay, as in Extism.
func (k *kernel) reset() {
	if cap(k.mem) > kernelKeep {
		k.mem = nil
	}
	if k.mem == nil {
		k.mem = make([]byte, kernelBase, 4<<10)
	}
	k.mem = k.mem[:kernelBase]
	k.blocks = k.blocks[:0]
	k.input, k.inputLen, k.output, k.outputLen, k.errorAt = 0, 0, 0, 0, 0
	k.httpStatus, k.httpHeaders = 0, nil
}

// alloc returns the offset of a new block of n bytes (zeroed only where
// mem never held anything before; callers overwrite it).
func (k *kernel) alloc(n uint64) uint64 {
	off := uint64(len(k.mem))
	off = (off + 7) &^ 7
	end := off + blockSpan(n)
	if end > k.limit || end < off {
		kernelFault("the guest asked for a block of %d bytes, which would take kernel memory past its limit of %d bytes (out of memory)", n, k.limit)
	}
	k.mem = slices.Grow(k.mem, int(end)-len(k.mem))[:end]
	k.blocks = append(k.blocks, block{offset: off, length: n})
	return off
}

// blockSpan is the space a block of n bytes takes: an empty block takes one
// byte, so that no two blocks share an offset.
func blockSpan(n uint64) uint64 { return max(n, 1) }

// write allocates a block holding b.
func (k *kernel) write(b []byte) uint64 {
	off := k.alloc(uint64(len(b)))
	copy(k.mem[off:], b)
	return off
}

// find returns the index of the live block at off, or -1.
func (k *kernel) find(off uint64) int {
	i, ok := slices.BinarySearchFunc(k.blocks, off, func(b block, off uint64) int {
		switch {
		case b.offset < off:
			return -1
		case b.offset > off:
			return 1
		}
		return 0
	})
	if !ok || k.blocks[i].freed {
		return -1
	}
	return i
}

// length returns the length of the block at off, or 0 if there is none.
func (k *kernel) length(off uint64) uint64 {
	if i := k.find(off); i >= 0 {
		return k.blocks[i].length
	}
	return 0
}

// bytes returns the contents of the block at off (aliasing kernel memory),
// or an error if off is not a live block.
func (k *kernel) bytes(off uint64) ([]byte, error) {
	i := k.find(off)
	if i < 0 {
		return nil, fmt.Errorf("offset %d is not a block of kernel memory", off)
	}
	return k.mem[off : off+k.blocks[i].length], nil
}

// free frees the block at off; freeing the input or something that is not
// a block does nothing.
func (k *kernel) free(off uint64) {
	i := k.find(off)
	if i < 0 || off == k.input {
		return
	}
	k.blocks[i].freed = true
	for len(k.blocks) > 0 && k.blocks[len(k.blocks)-1].freed {
		k.blocks = k.blocks[:len(k.blocks)-1]
	}
	top := uint64(kernelBase)
	if n := len(k.blocks); n > 0 {
		top = k.blocks[n-1].offset + blockSpan(k.blocks[n-1].length)
	}
	k.mem = k.mem[:top]
}

// span checks that [off, off+n) lies in kernel memory.
func (k *kernel) span(fn string, off, n uint64) {
	if off < kernelBase || off+n > uint64(len(k.mem)) || off+n < off {
		kernelFault("%s: offset %d (+%d) is outside kernel memory (%d bytes)", fn, off, n, len(k.mem))
	}
}

func (k *kernel) loadU8(off uint64) uint32 {
	k.span("load_u8", off, 1)
	return uint32(k.mem[off])
}

func (k *kernel) loadU64(off uint64) uint64 {
	k.span("load_u64", off, 8)
	return binary.LittleEndian.Uint64(k.mem[off:])
}

func (k *kernel) storeU8(off uint64, v uint32) {
	k.span("store_u8", off, 1)
	k.mem[off] = byte(v)
}

func (k *kernel) storeU64(off, v uint64) {
	k.span("store_u64", off, 8)
	binary.LittleEndian.PutUint64(k.mem[off:], v)
}

// setInput stores a call's input as a block.
func (k *kernel) setInput(in []byte) {
	k.input, k.inputLen = 0, 0
	if in != nil {
		k.input, k.inputLen = k.write(in), uint64(len(in))
	}
}

func (k *kernel) inputLength() uint64 { return k.inputLen }

func (k *kernel) inputLoadU8(i uint64) uint32 {
	if i >= k.inputLen {
		kernelFault("input_load_u8: index %d is past the input's %d bytes", i, k.inputLen)
	}
	return uint32(k.mem[k.input+i])
}

func (k *kernel) inputLoadU64(i uint64) uint64 {
	if i+8 > k.inputLen || i+8 < i {
		kernelFault("input_load_u64: index %d is past the input's %d bytes", i, k.inputLen)
	}
	return binary.LittleEndian.Uint64(k.mem[k.input+i:])
}

func (k *kernel) setOutput(off, n uint64) {
	k.span("output_set", off, n)
	k.output, k.outputLen = off, n
}

// outputBytes returns the output the guest set (aliasing kernel memory).
func (k *kernel) outputBytes() []byte {
	if k.output == 0 {
		return nil
	}
	return k.mem[k.output : k.output+k.outputLen]
}

// errorMessage returns the error the guest set, or "".
func (k *kernel) errorMessage() string {
	if k.errorAt == 0 {
		return ""
	}
	b, err := k.bytes(k.errorAt)
	if err != nil {
		return ""
	}
	return string(b)
}

// setVar sets (or with a nil value deletes) a guest variable.
func (k *kernel) setVar(name string, value []byte) {
	if k.vars == nil {
		k.vars = map[string][]byte{}
	}
	if old, ok := k.vars[name]; ok {
		k.varsBytes -= len(name) + len(old)
		delete(k.vars, name)
	}
	if value == nil {
		return
	}
	if k.varsBytes+len(name)+len(value) > maxVarsBytes {
		kernelFault("var_set %q: the variables would take more than %d bytes", name, maxVarsBytes)
	}
	k.vars[name] = slices.Clone(value)
	k.varsBytes += len(name) + len(value)
}
