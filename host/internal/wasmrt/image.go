//go:build unix

package wasmrt

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
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
	if err = f.Truncate(int64(maxBytes)); err == nil {
		err = writeSegments(f, image.Segments)
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

// Runs of segments writeSegments writes at once: segments less than
// segmentGap apart are written as one run (the gap zero, as the file
// already is there), in runs of at most maxRun bytes. A Go module has
// ~46,000 data segments, most under 64 bytes: one write each took ~40 ms
// of system calls per load.
const (
	segmentGap = 4 << 10
	maxRun     = 1 << 20
)

// writeSegments writes segments into w at their offsets, in order (a later
// segment overwrites an earlier one where they overlap, as instantiation
// would). Segments in increasing order are coalesced into runs whose gaps
// are zero, which the file is beyond what was written; a segment that
// starts before the end of what was written, or a large one, is written
// on its own. Segments that do not overlap are written in the order of
// their offsets (a Go module's are not: one at the end comes early).
func writeSegments(w io.WriterAt, segments []instrument.Segment) error {
	segments = inOffsetOrder(segments)
	var run []byte
	var start, written uint64 // the run's offset; the end of all written or buffered
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		_, err := w.WriteAt(run, int64(start))
		run = run[:0]
		return err
	}
	for _, seg := range segments {
		off, end := uint64(seg.Offset), uint64(seg.Offset)+uint64(len(seg.Data))
		if len(run) > 0 && (off < written || off > written+segmentGap || end-start > maxRun) {
			if err := flush(); err != nil {
				return err
			}
		}
		if len(run) == 0 && (off < written || len(seg.Data) >= maxRun) {
			if _, err := w.WriteAt(seg.Data, int64(off)); err != nil {
				return err
			}
			written = max(written, end)
			continue
		}
		if len(run) == 0 {
			start = off
		}
		run = append(run, make([]byte, end-start-uint64(len(run)))...)
		copy(run[off-start:], seg.Data)
		written = end
	}
	return flush()
}

// inOffsetOrder returns the segments sorted by offset when none overlaps
// another (their order then does not matter), else as they are.
func inOffsetOrder(segments []instrument.Segment) []instrument.Segment {
	sorted := slices.SortedStableFunc(slices.Values(segments), func(a, b instrument.Segment) int {
		return cmp.Compare(a.Offset, b.Offset)
	})
	for i := 1; i < len(sorted); i++ {
		if uint64(sorted[i-1].Offset)+uint64(len(sorted[i-1].Data)) > uint64(sorted[i].Offset) {
			return segments
		}
	}
	return sorted
}
