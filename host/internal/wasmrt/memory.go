//go:build unix

package wasmrt

import (
	"context"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// withMemoryAllocator makes the instances created with ctx back each
// linear memory with its own anonymous mapping of the memory's maximum
// size (at most Options.MemoryLimitPages), reserved but not committed.
// Growing the memory then only lengthens the slice: nothing is copied
// (wazero's default appends, copying the whole memory as it grows), pages
// cost RSS only once the guest touches them, and closing an instance
// returns its memory to the system at once instead of at the next GC.
//
// wazero frees a memory only on the goroutine that called into it, or when
// the module is closed while no call runs; the pool never closes a busy
// instance, so no guest can touch an unmapped memory.
//
// With an image (the module's initial memory, see memoryImage), the mapping
// is the image's, copy-on-write, so the memory starts as the image.
func withMemoryAllocator(ctx context.Context, image *memoryImage) context.Context {
	return experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(func(capBytes, maxBytes uint64) experimental.LinearMemory {
		return budgeted(ctx, allocate(capBytes, maxBytes, image))
	}))
}

func allocate(capBytes, maxBytes uint64, image *memoryImage) experimental.LinearMemory {
	if maxBytes == 0 || maxBytes > 1<<32 {
		return &sliceMemory{buf: make([]byte, 0, capBytes)}
	}
	if buf, ok := image.mapMemory(maxBytes); ok {
		return &mappedMemory{buf: buf}
	}
	buf, err := syscall.Mmap(-1, 0, int(maxBytes), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		buf = make([]byte, maxBytes) // a Go slice, still lazily backed by the system
		image.fill(buf)
		return &sliceMemory{buf: buf[:0]}
	}
	image.fill(buf) // an image that could not be mapped is copied
	return &mappedMemory{buf: buf}
}

// mappedMemory is a linear memory in a mapping of its maximum size.
type mappedMemory struct{ buf []byte }

func (m *mappedMemory) Reallocate(size uint64) []byte {
	if size > uint64(len(m.buf)) {
		return nil // the memory cannot grow past its maximum
	}
	return m.buf[:size]
}

func (m *mappedMemory) Free() {
	if m.buf != nil {
		_ = syscall.Munmap(m.buf)
		m.buf = nil
	}
}
