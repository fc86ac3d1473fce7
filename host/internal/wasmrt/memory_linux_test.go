package wasmrt

import (
	"errors"
	"syscall"
	"testing"
)

// TestPopulate shows that an instance's initial memory comes populated: the
// guest's first touch of each page takes no page fault.
func TestPopulate(t *testing.T) {
	const page, pages = 4096, 512
	mem := allocate(pages*page, 4*pages*page)
	defer mem.Free()
	m, ok := mem.(*mappedMemory)
	if !ok {
		t.Fatalf("allocate returned %T, want a mapping", mem)
	}
	if err := populate(m.buf[:page]); errors.Is(err, syscall.EINVAL) {
		t.Skip("this kernel cannot populate a range (MADV_POPULATE_WRITE needs Linux 5.14): pages come one fault at a time")
	}
	buf := mem.Reallocate(pages * page)
	populated := faultsTouching(buf)
	grown := mem.Reallocate(2 * pages * page)
	demand := faultsTouching(grown[pages*page:])
	if populated > pages/8 || demand < pages/2 {
		t.Errorf("touching %d pages took %d faults in the initial memory and %d in grown memory; want almost none, then about one per page",
			pages, populated, demand)
	}
}

// faultsTouching writes to every page of b and returns the minor page
// faults the process took meanwhile.
func faultsTouching(b []byte) int64 {
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	return after.Minflt - before.Minflt
}
