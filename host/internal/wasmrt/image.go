//go:build unix

package wasmrt

import (
	"fmt"
	"os"
	"syscall"

	"github.com/kopf-wasm/kopf-wasm/host/internal/wasmrt/instrument"
)

// memoryImage is the initial memory of a module, which instrument.Split
// took out of its data segments: for a Python module, its snapshot (the
// interpreter with the author's handlers registered, ~14 MB); for a Go
// module, its data (~3 MB).
// It lives in an anonymous file (imageFile) of the memory's maximum size
// (sparse past the image), and every instance maps that file copy-on-write as its
// linear memory: instantiation copies nothing, instances share the pages
// they only read (through the page cache), and a page costs an instance
// memory of its own only once it writes it. wazero would otherwise keep
// the segments in the host's heap and write them into every new instance.
type memoryImage struct {
	f    *os.File
	len  int    // the image's bytes, at the start of the file
	size uint64 // the file's size: the largest memory an instance may map
}

// newMemoryImage writes image's segments into a new file of maxBytes.
func newMemoryImage(image instrument.Image, maxBytes uint64) (*memoryImage, error) {
	if image.Size > maxBytes {
		return nil, fmt.Errorf("the module's initial memory (%d bytes) is above the memory limit (%d bytes)", image.Size, maxBytes)
	}
	f, err := imageFile()
	if err != nil {
		return nil, fmt.Errorf("a file for the module's initial memory: %w", err)
	}
	err = f.Truncate(int64(maxBytes))
	for _, seg := range image.Segments {
		if err != nil {
			break
		}
		_, err = f.WriteAt(seg.Data, int64(seg.Offset))
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("writing the module's initial memory: %w", err)
	}
	return &memoryImage{f: f, len: int(image.Size), size: maxBytes}, nil
}

// mapMemory maps maxBytes of the image copy-on-write; ok is false when it
// cannot (the caller then gives the instance a memory without the image).
func (im *memoryImage) mapMemory(maxBytes uint64) (buf []byte, ok bool) {
	if im == nil || maxBytes > im.size {
		return nil, false
	}
	buf, err := syscall.Mmap(int(im.f.Fd()), 0, int(maxBytes), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_NORESERVE)
	return buf, err == nil
}

// fill copies the image into buf, a memory that could not map it.
func (im *memoryImage) fill(buf []byte) {
	if im != nil {
		_, _ = im.f.ReadAt(buf[:min(im.len, len(buf))], 0)
	}
}

// close releases the file; mappings made from it stay valid.
func (im *memoryImage) close() {
	if im != nil {
		_ = im.f.Close()
	}
}
