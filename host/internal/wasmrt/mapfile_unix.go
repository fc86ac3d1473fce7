//go:build unix

package wasmrt

import (
	"errors"
	"os"
	"syscall"
)

// mapFile maps the file at path read-only and returns its bytes and the
// function that unmaps them. The kept rewrite of a module is read this way
// on a cached load: its pages come from the page cache, many per fault,
// instead of being copied into 3-4 MB of fresh heap one faulting page at a
// time, and they never count towards the Go heap. The mapping must outlive
// everything that reads the bytes (wazero's decoded module refers to them).
// Files are replaced by rename, never truncated in place, so the mapping
// stays valid.
func mapFile(path string) ([]byte, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := info.Size()
	if size <= 0 || size > maxMappedFile {
		return nil, nil, errors.New("not a size to map")
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { _ = syscall.Munmap(b) }, nil
}

// maxMappedFile bounds what mapFile maps: a module larger than wasm's
// 4 GiB address space cannot be valid.
const maxMappedFile = 1 << 32

// dropResident tells the kernel that the mapped bytes b (from mapFile) are
// not needed for now: their pages leave the process's resident set and
// are read again from the page cache (or the file) if something touches
// them. After a module is compiled or loaded from the compile cache,
// wazero reads its mapped rewrite only when an instance is made (the data
// segments), so a standard-Go module's 4 MB need not stay resident in
// every host that serves it (issue 34: the host's fixed cost).
func dropResident(b []byte) {
	_ = syscall.Madvise(b, syscall.MADV_DONTNEED)
}
